"""Family options are declared once (bpe.options): train, saved files and the CLI all follow the declaration."""

from __future__ import annotations

import pytest

import bpe
from bpe.base import TokenizerError
from bpe.options import (
    DEFAULT_CHARACTER_COVERAGE,
    FAMILY_OPTIONS,
    CharBPEOptions,
    SentencePieceOptions,
    options_by_name,
)

TEXTS = ["the cat sat on the mat", "the dog sat on the log", "a cat and a dog"]


def test_every_family_declares_its_options() -> None:
    assert set(FAMILY_OPTIONS) == set(bpe.FAMILIES)


@pytest.mark.parametrize("kind", ["word", "char", "char-bpe", "byte-bpe"])
def test_saved_config_is_the_declared_options_in_order(kind: str) -> None:
    tokenizer = bpe.train(kind, TEXTS, 300)
    model = FAMILY_OPTIONS[kind]
    assert tokenizer.to_dict()["config"] == model().model_dump()
    assert list(tokenizer.to_dict()["config"]) == list(model.model_fields)


def test_declared_defaults_reach_training() -> None:
    assert bpe.train("word", TEXTS, 300).to_dict()["config"]["min_frequency"] == 1
    assert bpe.train("char-bpe", TEXTS, 300).to_dict()["config"]["min_frequency"] == 2
    assert bpe.train("spm-bpe", TEXTS * 20, 300).config["character_coverage"] == DEFAULT_CHARACTER_COVERAGE


def test_none_means_not_given_and_other_values_are_kept() -> None:
    assert CharBPEOptions.parse("char-bpe", {"min_frequency": None, "character_coverage": None}) == CharBPEOptions()
    given = CharBPEOptions.parse("char-bpe", {"limit_alphabet": 40, "end_of_word": "none"})
    assert (given.limit_alphabet, given.end_of_word, given.min_frequency) == (40, "none", 2)
    assert SentencePieceOptions.parse("spm-bpe", {"character_coverage": 1}).character_coverage == 1.0


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"min_frequency": 0}, "min_frequency must be an integer >= 1, got 0"),
        ({"limit_alphabet": 0}, "limit_alphabet must be an integer >= 1, got 0"),
        ({"limit_alphabet": 2.0}, "limit_alphabet must be an integer >= 1, got 2.0"),
        ({"end_of_word": True}, "end_of_word must be 'separate', 'attached' or 'none', got True"),
    ],
)
def test_zero_and_mistyped_values_are_errors_not_defaults(options: dict, message: str) -> None:
    with pytest.raises(TokenizerError) as caught:
        CharBPEOptions.parse("char-bpe", options)
    assert str(caught.value) == message


def test_options_by_name_says_which_families_take_which() -> None:
    table = options_by_name()
    assert set(table["limit_alphabet"]) == {"char-bpe"}
    assert set(table["character_coverage"]) == {"spm-bpe", "spm-unigram"}
    assert set(table["encode_mode"]) == {"char-bpe", "byte-bpe"}
    assert set(table["pretokenizer"]) == {"word", "char-bpe", "byte-bpe"}
    assert {family: field.default for family, field in table["min_frequency"].items()} == {
        "word": 1,
        "char": 1,
        "char-bpe": 2,
        "byte-bpe": 2,
    }
