"""Planning a run: which trainings serve which units (one training per vocabulary sweep) and the
train_chars axis, on the embedded English corpus."""

from __future__ import annotations

import pytest

from benchmarks.run.config import parse_config
from benchmarks.run.grid import max_chars_of, plan_sweeps, plan_units, training_texts
from corpora import load_corpus


@pytest.fixture(scope="module")
def corpora():
    return {"embedded-eng": load_corpus("embedded-eng")}


def sizes(sweep) -> list[tuple[str, int]]:
    return [(unit.tokenizer, unit.vocab_size) for unit in sweep.units]


def test_one_sweep_per_derivable_family_and_options_one_training_per_size_otherwise(corpora) -> None:
    config = parse_config({
        "name": "plan", "corpora": ["embedded-eng"], "production": ["cl100k"],
        "tokenizers": [
            {"kind": "word", "vocab_sizes": [500, 2000, 1000]},
            {"kind": "char", "vocab_sizes": [300, 200]},
            {"kind": "char-bpe", "vocab_sizes": [400, 800], "options": {"end_of_word": "separate"}},
            {"kind": "char-bpe", "label": "same", "vocab_sizes": [800, 600], "options": {"end_of_word": "separate"}},
            {"kind": "char-bpe", "label": "other", "vocab_sizes": [400, 800]},
            {"kind": "spm-bpe", "vocab_sizes": [400, 800]},
        ],
    })  # fmt: skip
    sweeps = plan_sweeps(plan_units(config, corpora, {}), config)
    assert [sizes(sweep) for sweep in sweeps] == [
        [("word", 2000), ("word", 1000), ("word", 500)],  # largest first: trained; the others derived
        [("char", 300)],  # char and sentencepiece: one training per size
        [("char", 200)],
        [("char-bpe", 800), ("same", 800), ("same", 600), ("char-bpe", 400)],  # same family and options: one sweep
        [("other", 800), ("other", 400)],
        [("spm-bpe", 400)],
        [("spm-bpe", 800)],
    ]
    assert all(sweep.largest == sweep.units[0] for sweep in sweeps)


def test_train_chars_multiplies_the_trained_rows_and_separates_their_sweeps(corpora) -> None:
    config = parse_config({
        "name": "axis", "corpora": ["embedded-eng"], "train_chars": [50000, 10000],
        "tokenizers": [{"kind": "byte-bpe", "vocab_sizes": [400, 800]}],
    })  # fmt: skip
    units = plan_units(config, corpora, {})
    assert [(unit.vocab_size, unit.train_chars) for unit in units] == [
        (400, 50000), (800, 50000), (400, 10000), (800, 10000)
    ]  # fmt: skip
    assert units[0].columns()["train_chars"] == 50000
    assert len({unit.key for unit in units}) == len(units)
    assert [sizes(sweep) for sweep in plan_sweeps(units, config)] == [[("byte-bpe", 800), ("byte-bpe", 400)]] * 2
    assert [max_chars_of(unit, config) for unit in units[:4]] == [50000, 50000, 10000, 10000]


def test_train_chars_prefixes_are_nested_whole_documents(corpora) -> None:
    """Each value keeps the first training documents until that many characters are reached (the last
    document may run past it), as max_train_chars does: a smaller value's text is a prefix of a larger's."""
    corpus = corpora["embedded-eng"]
    small, large = training_texts(corpus, 10000), training_texts(corpus, 50000)
    assert large[: len(small)] == small and len(large) > len(small)
    assert sum(map(len, small[:-1])) < 10000 <= sum(map(len, small))
