"""Family options are declared once (in the family's module, over bpe.options): train, saved files and
the CLI all follow the declaration."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import bpe
from bpe.base import TokenizerError
from bpe.models.char_bpe import CharBPEOptions
from bpe.models.knockout import KnockoutOptions
from bpe.models.spm import DEFAULT_CHARACTER_COVERAGE, SentencePieceBPEOptions, SentencePieceUnigramOptions
from bpe.options import FamilyOptions, options_by_name
from tests.errors import raises_code

TEXTS = ["the cat sat on the mat", "the dog sat on the log", "a cat and a dog"]
#: tokenizer files as tokbench wrote them before the normalizer and the encode-time options existed
OLD_FILES = Path(__file__).resolve().parent.parent / "fixtures" / "tokenizers"


def test_every_family_declares_its_options() -> None:
    for kind in bpe.FAMILIES:
        assert issubclass(bpe.family_class(kind).options_model, FamilyOptions), kind


@pytest.mark.parametrize("kind", ["word", "char", "char-bpe", "byte-bpe", "morfessor"])
def test_saved_config_is_the_declared_options_in_order(kind: str) -> None:
    tokenizer = bpe.train(kind, TEXTS, 300)
    model = bpe.family_class(kind).options_model
    assert tokenizer.to_dict()["config"] == model().model_dump()
    assert list(tokenizer.to_dict()["config"]) == list(model.model_fields)


@pytest.mark.parametrize("kind", ["spm-bpe", "spm-unigram"])
def test_sentencepiece_config_is_its_training_record_then_its_encode_options(kind: str) -> None:
    tokenizer = bpe.train(kind, TEXTS * 20, 300, seed=4)
    config = tokenizer.to_dict()["config"]
    encode_time = bpe.family_class(kind).options_model.encode_option_names()
    assert list(config)[-len(encode_time) :] == list(encode_time) and config["seed"] == 4
    assert config["model_type"] == kind.removeprefix("spm-") and config["character_coverage"] == 0.9995
    assert type(tokenizer).from_dict(tokenizer.to_dict()).to_dict() == tokenizer.to_dict()


def test_declared_defaults_reach_training() -> None:
    assert bpe.train("word", TEXTS, 300).to_dict()["config"]["min_frequency"] == 1
    assert bpe.train("char-bpe", TEXTS, 300).to_dict()["config"]["min_frequency"] == 2
    assert bpe.train("spm-bpe", TEXTS * 20, 300).config["character_coverage"] == DEFAULT_CHARACTER_COVERAGE
    assert bpe.train("spm-unigram", TEXTS * 20, 300).options.encode_mode == "likelihood"


def test_none_means_not_given_and_other_values_are_kept() -> None:
    assert CharBPEOptions.parse("char-bpe", {"min_frequency": None, "character_coverage": None}) == CharBPEOptions()
    given = CharBPEOptions.parse("char-bpe", {"limit_alphabet": 40, "end_of_word": "none"})
    assert (given.limit_alphabet, given.end_of_word, given.min_frequency) == (40, "none", 2)
    assert SentencePieceBPEOptions.parse("spm-bpe", {"character_coverage": 1}).character_coverage == 1.0


def test_the_earlier_encode_mode_name_reads_as_the_current_one() -> None:
    assert CharBPEOptions.parse("char-bpe", {"encode_mode": "greedy"}).encode_mode == "longest-prefix"
    assert CharBPEOptions.read_saved({"encode_mode": "greedy"}).encode_mode == "longest-prefix"
    with raises_code(TokenizerError, "not_allowed", field="encode_mode", value="greedy"):
        SentencePieceUnigramOptions.parse("spm-unigram", {"encode_mode": "greedy"})  # never its name there


@pytest.mark.parametrize(
    ("options", "code", "field", "value"),
    [
        ({"min_frequency": 0}, "out_of_range", "min_frequency", 0),
        ({"limit_alphabet": 0}, "out_of_range", "limit_alphabet", 0),
        ({"limit_alphabet": 2.0}, "wrong_type", "limit_alphabet", 2.0),
        ({"end_of_word": True}, "not_allowed", "end_of_word", True),
        ({"normalizer": "NFC"}, "not_allowed", "normalizer", "NFC"),
        ({"dropout": -0.1}, "out_of_range", "dropout", -0.1),
        ({"seed": "1"}, "wrong_type", "seed", "1"),
        ({"tie_break": "shortest-first"}, "not_allowed", "tie_break", "shortest-first"),
        ({"tie_break": "longest-last"}, "table_rule", "", "tie_break"),
        ({"dropout": 0.1, "encode_mode": "greedy"}, "table_rule", "", "dropout"),
    ],
)
def test_zero_and_mistyped_values_are_errors_not_defaults(options: dict, code: str, field: str, value: object) -> None:
    with raises_code(TokenizerError, code, field=field, value=value):
        CharBPEOptions.parse("char-bpe", options)


def test_options_by_name_says_which_families_take_which() -> None:
    table = options_by_name()
    assert set(table["limit_alphabet"]) == {"char-bpe", "bpe-knockout"}
    assert set(table["character_coverage"]) == {"spm-bpe", "spm-unigram"}
    assert set(table["encode_mode"]) == set(table["tie_break"]) == {
        "char-bpe", "byte-bpe", "parity-bpe", "spm-bpe", "spm-unigram", "superbpe", "wordpiece", "unigram"}  # fmt: skip
    assert set(table["pretokenizer"]) == {
        "word", "char-bpe", "byte-bpe", "parity-bpe", "morfessor", "bpe-knockout", "wordpiece", "superbpe",
        "unigram"}  # fmt: skip
    assert set(table["normalizer"]) == {
        "word", "char", "char-bpe", "byte-bpe", "parity-bpe", "morfessor", "wordpiece", "superbpe",
        "unigram"}  # fmt: skip
    assert set(table["dropout"]) == {"char-bpe", "byte-bpe", "parity-bpe", "spm-bpe", "superbpe"}
    assert set(table["variant"]) == set(table["global_merges"]) == {"parity-bpe"}
    assert set(table["transition"]) == set(table["split_sentences"]) == {"superbpe"}
    assert set(table["alpha"]) == set(table["nbest"]) == {"spm-unigram"}
    assert {family: field.default for family, field in table["min_frequency"].items()} == {
        "word": 1,
        "char": 1,
        "char-bpe": 2,
        "byte-bpe": 2,
        "parity-bpe": 2,
        "morfessor": 1,
        "bpe-knockout": 2,
        "wordpiece": 1,
        "superbpe": 2,
    }


def test_encode_time_options_are_marked_per_family() -> None:
    """What a runner may vary on one trained vocabulary; morfessor's seed shapes training, so it is not one."""
    names = {kind: bpe.family_class(kind).options_model.encode_option_names() for kind in bpe.FAMILIES}
    assert names == {
        "word": (),
        "char": (),
        "char-bpe": ("encode_mode", "tie_break", "dropout", "seed"),
        "byte-bpe": ("encode_mode", "tie_break", "dropout", "seed"),
        "parity-bpe": ("encode_mode", "tie_break", "dropout", "seed"),
        "spm-bpe": ("encode_mode", "tie_break", "dropout", "seed"),
        "spm-unigram": ("encode_mode", "tie_break", "alpha", "nbest", "seed"),
        "morfessor": (),
        "bpe-knockout": (),
        "wordpiece": ("encode_mode", "tie_break", "max_input_chars_per_word"),
        "unigram": ("encode_mode", "tie_break"),
        "superbpe": ("encode_mode", "tie_break", "dropout", "seed"),
    }
    encode_time = ["encode_mode", "tie_break", "dropout", "seed", "alpha", "nbest", "max_input_chars_per_word"]
    assert list(options_by_name(encode_time_only=True)) == encode_time
    assert set(options_by_name(encode_time_only=True)["seed"]) == {
        "char-bpe", "byte-bpe", "parity-bpe", "spm-bpe", "spm-unigram", "superbpe"}  # fmt: skip
    options = CharBPEOptions.parse("char-bpe", {"encode_mode": "fewest-tokens", "seed": 3, "min_frequency": 4})
    assert options.encode_options() == {"encode_mode": "fewest-tokens", "tie_break": "longest-first", "dropout": 0.0,
                                        "seed": 3}  # fmt: skip
    assert options.training_options() == {"pretokenizer": "unicode", "normalizer": "none", "end_of_word": "separate",
                                          "min_frequency": 4, "limit_alphabet": None}  # fmt: skip


def test_encode_time_options_leave_the_vocabulary_alone() -> None:
    """Training with encode-time options gives the vocabulary of training without them, and a trained
    tokenizer switched to those options encodes like one trained with them."""
    plain = bpe.train("char-bpe", TEXTS, 60)
    trained = bpe.train("char-bpe", TEXTS, 60, encode_mode="fewest-tokens", seed=9)
    switched = plain.with_encode_options(encode_mode="fewest-tokens", seed=9)
    assert trained.vocab == plain.vocab and trained.merges == plain.merges
    assert switched.to_dict() == trained.to_dict()
    assert [switched.encode(text) for text in TEXTS] == [trained.encode(text) for text in TEXTS]
    assert plain.options.encode_mode == "merges"  # the original is unchanged


def test_knockout_options_rules() -> None:
    assert KnockoutOptions.parse("bpe-knockout", {}).base_options() == {"min_frequency": 2}
    given = KnockoutOptions.parse("bpe-knockout", {"end_of_word": "none", "threshold": 1})
    assert given.base_options() == {"end_of_word": "none", "min_frequency": 2} and given.threshold == 1.0
    with raises_code(TokenizerError, "table_rule", value="end_of_word"):
        KnockoutOptions.parse("bpe-knockout", {"base": "byte-bpe", "end_of_word": "none"})


# -- files saved before an option existed ---------------------------------------------------------


@pytest.mark.parametrize("kind", ["word", "char", "char-bpe", "byte-bpe", "spm-bpe", "spm-unigram"])
def test_a_file_saved_before_an_option_existed_loads_with_its_default(kind: str) -> None:
    path = OLD_FILES / f"{kind}.json"
    saved = json.loads(path.read_text(encoding="utf-8"))["config"]
    tokenizer = bpe.load(path)
    options = tokenizer.options.model_dump()
    missing = [name for name in options if name not in saved]
    assert missing  # the fixture really predates some options
    model = bpe.family_class(kind).options_model
    assert {name: options[name] for name in missing} == {name: model().model_dump()[name] for name in missing}
    for name, value in saved.items():
        if name in options:  # kept as saved; the earlier mode name reads as the current one
            assert options[name] == ("longest-prefix" if value == "greedy" else value)
    # and it encodes exactly as the version that wrote it did
    encodings = json.loads((OLD_FILES / "encodings.json").read_text(encoding="utf-8"))
    assert [tokenizer.encode(probe) for probe in encodings["probes"]] == encodings["ids"][kind]


def test_the_missing_options_of_an_old_file_are_saved_again() -> None:
    tokenizer = bpe.load(OLD_FILES / "char-bpe.json")
    config = tokenizer.to_dict()["config"]
    assert list(config) == list(CharBPEOptions.model_fields)
    assert (config["normalizer"], config["encode_mode"], config["dropout"], config["seed"]) == (
        "none",
        "longest-prefix",
        0.0,
        0,
    )


@pytest.mark.parametrize("kind", ["char-bpe", "spm-unigram"])
def test_an_unknown_key_in_a_saved_config_stays_an_error(kind: str, tmp_path: Path) -> None:
    document = json.loads((OLD_FILES / f"{kind}.json").read_text(encoding="utf-8"))
    document["config"]["dropuot"] = 0.1
    (tmp_path / "t.json").write_text(json.dumps(document), encoding="utf-8")
    with raises_code(TokenizerError, "unknown_key", field="config", value="dropuot"):
        bpe.load(tmp_path / "t.json")
