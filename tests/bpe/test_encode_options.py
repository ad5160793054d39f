"""Encode-time options of the vocabulary families: inference methods, BPE-dropout, unigram sampling.

Trained on the embedded corpora, checked on FLORES lines and on arbitrary text (hypothesis):
every mode tiles the input with its spans and decodes back to it where the
family is lossless, ``fewest-tokens`` never needs more tokens than another
mode, and sampling is off unless asked for, then reproducible from its seed.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bpe
from bpe.base import Tokenizer, TokenizerError
from bpe.models.inference import INFERENCE_METHODS
from bpe.models.merge_tokenizer import MergeTokenizer
from tests.bpe.naive_bpe import apply_in_training_order
from tests.conftest import leading
from tests.errors import raises_code

VOCABULARY_FAMILIES = [
    ("char-bpe", 1500, {}),
    ("char-bpe", 1500, {"end_of_word": "attached"}),
    ("byte-bpe", 1500, {}),
    ("spm-bpe", 1500, {}),
    ("spm-unigram", 1500, {}),
]


@pytest.fixture(scope="module")
def training_text(embedded_text: dict[str, list[str]]) -> list[str]:
    """About 30,000 characters per language."""
    return [text for texts in embedded_text.values() for text in leading(texts, 30_000)]


@pytest.fixture(scope="module")
def eval_lines(flores_sample: dict[str, list[str]]) -> list[str]:
    return [line for lines in flores_sample.values() for line in lines[:60]]


@pytest.fixture(scope="module", params=VOCABULARY_FAMILIES, ids=lambda case: f"{case[0]}-{case[2]}")
def tokenizer(request: pytest.FixtureRequest, training_text: list[str]) -> Tokenizer:
    kind, vocab_size, options = request.param
    return bpe.train(kind, training_text, vocab_size, **options)


def modes(tokenizer: Tokenizer) -> list[str]:
    """The family's own encoding (merges; spm-unigram: likelihood), then every inference method."""
    return [tokenizer.encode_options()["encode_mode"], *INFERENCE_METHODS]


def check_tiles(tokenizer: Tokenizer, text: str) -> list[int]:
    encoding = tokenizer.encode_with_spans(text)
    position = 0
    for start, end in encoding.spans:
        assert start == position and end >= start
        position = end
    assert position == len(text.encode("utf-8"))
    return encoding.ids


def lossless(tokenizer: Tokenizer, ids: list[int]) -> bool:
    """Where the family promises a round trip: no <unk> (byte-fallback families never produce one)."""
    return tokenizer.unk_id not in ids


def check_modes(tokenizer: Tokenizer, text: str) -> None:
    counts = {}
    for mode in modes(tokenizer):
        variant = tokenizer.with_encode_options(encode_mode=mode)
        ids = check_tiles(variant, text)
        assert variant.encode(text) == ids
        if lossless(variant, ids):
            assert variant.decode(ids) == text, (mode, variant.pieces(ids))
        counts[mode] = len(ids)
    assert counts["fewest-tokens"] == min(counts.values()), counts


def test_every_mode_on_flores(tokenizer: Tokenizer, eval_lines: list[str]) -> None:
    totals = {}
    for line in eval_lines:
        check_modes(tokenizer, line)
    for mode in modes(tokenizer):
        variant = tokenizer.with_encode_options(encode_mode=mode)
        totals[mode] = sum(len(variant.encode(line)) for line in eval_lines)
    # the methods are really different segmenters of one vocabulary
    assert len(set(totals.values())) > 1, totals


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=40))
def test_every_mode_on_any_text(tokenizer: Tokenizer, text: str) -> None:
    check_modes(tokenizer, text)


def test_saved_modes_and_the_earlier_name(tokenizer: Tokenizer, tmp_path: Path, eval_lines: list[str]) -> None:
    variant = tokenizer.with_encode_options(encode_mode="fewest-tokens")
    variant.save(tmp_path / "t.json")
    loaded = bpe.load(tmp_path / "t.json")
    assert loaded.encode_options() == variant.encode_options()
    assert [loaded.encode(line) for line in eval_lines] == [variant.encode(line) for line in eval_lines]
    if isinstance(tokenizer, MergeTokenizer):  # files written before the rename say "greedy"
        document = (tmp_path / "t.json").read_text(encoding="utf-8").replace('"fewest-tokens"', '"greedy"')
        (tmp_path / "t.json").write_text(document, encoding="utf-8")
        assert bpe.load(tmp_path / "t.json").encode_mode == "longest-prefix"


# -- sampling ---------------------------------------------------------------------


def sampling_options(tokenizer: Tokenizer) -> dict[str, float]:
    return {"alpha": 0.2} if tokenizer.family == "spm-unigram" else {"dropout": 0.2}


def test_sampling_is_off_by_default_and_the_default_is_todays_encoding(
    tokenizer: Tokenizer, eval_lines: list[str]
) -> None:
    assert not tokenizer.samples
    first = [tokenizer.encode(line) for line in eval_lines]
    assert [tokenizer.encode(line) for line in reversed(eval_lines)][::-1] == first
    if isinstance(tokenizer, MergeTokenizer):
        # the merges applied in training order, the algorithm of Sennrich et al. (2016), pre-token by pre-token
        for line in eval_lines:
            expected = []
            for pretoken in tokenizer.pretokenizer.split(line):
                symbols, _ = tokenizer._base_symbols(pretoken)
                expected += apply_in_training_order(symbols, tokenizer.merges, tokenizer.first_merge_id)
            assert tokenizer.encode(line) == expected
        assert tokenizer.with_encode_options(dropout=0.0).encode(eval_lines[0]) == first[0]


def test_sampling_is_reproducible_from_its_seed(tokenizer: Tokenizer, eval_lines: list[str]) -> None:
    sampler = tokenizer.with_encode_options(**sampling_options(tokenizer), seed=7)
    assert sampler.samples
    samples = [sampler.encode(line) for line in eval_lines]
    # the same text and seed give the same sample, in any order, with or without spans
    assert [sampler.encode(line) for line in reversed(eval_lines)][::-1] == samples
    assert [sampler.encode_with_spans(line).ids for line in eval_lines] == samples
    other = tokenizer.with_encode_options(**sampling_options(tokenizer), seed=8)
    assert [other.encode(line) for line in eval_lines] != samples
    default = [tokenizer.encode(line) for line in eval_lines]
    assert samples != default
    # sampling segments the same text: it still tiles and decodes back; on average it needs more tokens
    for line in eval_lines:
        ids = check_tiles(sampler, line)
        if lossless(sampler, ids):
            assert sampler.decode(ids) == line
    assert sum(map(len, samples)) > sum(map(len, default))


def test_full_dropout_leaves_base_symbols(training_text: list[str]) -> None:
    tokenizer = bpe.train("byte-bpe", training_text[:200], 600, dropout=1.0)
    assert tokenizer.encode("Merhaba dünya") == [4 + byte for byte in "Merhaba dünya".encode()]


#: (family, options, code, field, value): the error names the option (field) and the value given; a rule
#: joining several options names the option it refuses (value); an option the family lacks has no field
BAD_ENCODE_OPTIONS = [
    ("char-bpe", {"dropout": 1.5}, "out_of_range", "dropout", 1.5),
    ("byte-bpe", {"dropout": True}, "wrong_type", "dropout", True),
    ("byte-bpe", {"dropout": 0.1, "encode_mode": "fewest-tokens"}, "table_rule", "", "dropout"),
    ("byte-bpe", {"seed": -1}, "out_of_range", "seed", -1),
    ("char-bpe", {"seed": 1.0}, "wrong_type", "seed", 1.0),
    ("char-bpe", {"encode_mode": "shortest"}, "not_allowed", "encode_mode", "shortest"),
    ("spm-unigram", {"dropout": 0.1}, "unknown_option", None, "dropout"),
    ("spm-bpe", {"alpha": 0.1}, "unknown_option", None, "alpha"),
    ("spm-unigram", {"nbest": 4}, "table_rule", "", "nbest"),
    ("spm-unigram", {"alpha": 0.1, "nbest": 1}, "invalid", "nbest", 1),
    ("spm-unigram", {"alpha": -0.5}, "out_of_range", "alpha", -0.5),
    ("spm-unigram", {"alpha": 0.1, "encode_mode": "fewest-tokens"}, "table_rule", "", "alpha"),
    ("spm-unigram", {"encode_mode": "merges"}, "not_allowed", "encode_mode", "merges"),
    ("spm-bpe", {"dropout": 0.1, "encode_mode": "longest-prefix"}, "table_rule", "", "dropout"),
]


@pytest.mark.parametrize(("kind", "options", "code", "field", "value"), BAD_ENCODE_OPTIONS)
def test_bad_encode_options(kind: str, options: dict[str, object], code: str, field: str | None, value: object) -> None:
    """One error naming the option and what was given: at training ..."""
    with raises_code(TokenizerError, code, field=field, value=value):
        bpe.train(kind, ["some text", "more text here"] * 20, 300, **options)


@pytest.mark.parametrize(("kind", "options", "code", "field", "value"), BAD_ENCODE_OPTIONS)
def test_bad_encode_options_on_a_trained_tokenizer(
    kind: str, options: dict[str, object], code: str, field: str | None, value: object
) -> None:
    """... and when a trained tokenizer takes other encode options (the same declaration checks both)."""
    tokenizer = bpe.train(kind, ["some text", "more text here"] * 20, 300)
    # an option the family lacks is no encode-time option of the trained tokenizer either
    code = "not_encode_option" if code == "unknown_option" else code
    with raises_code(TokenizerError, code, field=field, value=value) as caught:
        tokenizer.with_encode_options(**options)
    if code == "not_encode_option":  # the options it does take are listed: the encode-time ones only
        assert "character_coverage" not in str(caught.value) and "encode_mode" in str(caught.value)


def test_training_options_cannot_change_on_a_trained_tokenizer(training_text: list[str]) -> None:
    tokenizer = bpe.train("char-bpe", training_text[:50], 400)
    with raises_code(TokenizerError, "not_encode_option", value="min_frequency") as caught:
        tokenizer.with_encode_options(min_frequency=3)
    assert all(name in str(caught.value) for name in bpe.family_class("char-bpe").options_model.encode_option_names())
    with raises_code(TokenizerError, "not_encode_option", value="dropout"):
        bpe.load("cl100k").with_encode_options(dropout=0.1)
    assert bpe.load("cl100k").with_encode_options(dropout=None).encode("a b") == bpe.load("cl100k").encode("a b")
