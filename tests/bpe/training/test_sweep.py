"""One training per vocabulary sweep (bpe.training.sweep): every derived tokenizer is identical to one trained
at its size directly (merges, vocabulary, ids, saved JSON), on four languages; derivation refuses
where it would not be exact."""

from __future__ import annotations

from pathlib import Path

import pytest

import bpe
from bpe.base import Tokenizer, TokenizerError
from tests.conftest import DATA_ROOT
from tests.errors import raises_code

LANGUAGES = ("eng_Latn", "tur_Latn", "rus_Cyrl", "kor_Hang")
UD_CODES = {"eng_Latn": "en", "tur_Latn": "tr", "rus_Cyrl": "ru", "kor_Hang": "ko"}
SWEEPS = [
    ("byte-bpe", {}, (2500, 1200, 700, 300)),
    ("byte-bpe", {"min_frequency": 40}, (100_000, 3000, 600)),  # stops early: nothing left at 40
    ("char-bpe", {}, (2500, 1200, 700)),
    ("char-bpe", {"end_of_word": "attached", "limit_alphabet": 70}, (2500, 900, 400)),
    ("char-bpe", {"end_of_word": "none", "min_frequency": 5}, (50_000, 1500, 600)),
    ("word", {}, (2500, 1000, 50)),
    ("word", {"min_frequency": 3}, (1_000_000, 400, 5)),  # runs out of words
    ("char", {}, (300, 60, 20, 5)),  # cuts the alphabet by frequency
    ("char", {"min_frequency": 4}, (100_000, 40)),
    # normalizer and encode-time options travel with the derived tokenizer
    ("char-bpe", {"normalizer": "jamo", "encode_mode": "fewest-tokens"}, (2500, 900)),
    ("byte-bpe", {"dropout": 0.1, "seed": 3}, (1500, 600)),
    ("char", {"normalizer": "jamo"}, (200, 40)),
    ("word", {"normalizer": "jamo"}, (2000, 300)),
]


def assert_identical(derived: Tokenizer, direct: Tokenizer, held_out: list[str], tmp_path: Path) -> None:
    assert derived.to_dict() == direct.to_dict()
    assert getattr(derived, "merges", None) == getattr(direct, "merges", None)
    derived.save(tmp_path / "derived.json")
    direct.save(tmp_path / "direct.json")
    assert (tmp_path / "derived.json").read_bytes() == (tmp_path / "direct.json").read_bytes()
    assert [derived.encode(line) for line in held_out] == [direct.encode(line) for line in held_out]


@pytest.mark.parametrize(("kind", "options", "sizes"), SWEEPS)
def test_sweep_equals_direct_training_on_embedded_text(
    embedded_text: dict[str, list[str]], tmp_path: Path, kind: str, options: dict, sizes: tuple[int, ...]
) -> None:
    for language in LANGUAGES:
        lines = embedded_text[language]
        train, held_out = lines[:1500], lines[-100:]
        sweep = bpe.train_sweep(kind, train, sizes, **options)
        assert sorted(sweep) == sorted(sizes)
        for size in sizes:
            assert_identical(sweep[size], bpe.train(kind, train, size, **options), held_out, tmp_path)


@pytest.mark.parametrize(
    ("kind", "sizes"), [("byte-bpe", (8000, 3000)), ("char-bpe", (8000, 2000)), ("word", (8000, 900))]
)
def test_sweep_equals_direct_training_on_ud(
    flores: dict[str, list[str]], tmp_path: Path, kind: str, sizes: tuple[int, ...]
) -> None:
    """Trained on a data root's UD train/dev sentences (test files held out), FLORES lines held out."""
    for language in LANGUAGES:
        train = ud_sentences(DATA_ROOT, language)[:4000]
        assert train, language
        sweep = bpe.train_sweep(kind, train, sizes)
        for size in sizes:
            assert_identical(sweep[size], bpe.train(kind, train, size), flores[language][:100], tmp_path)


def ud_sentences(root: Path, language: str) -> list[str]:
    """The ``# text =`` sentences of the UD train and dev files of ``language`` under data root ``root``."""
    folder = root / "ud" / UD_CODES[language]
    files = [*sorted(folder.glob("*-ud-train.conllu")), *sorted(folder.glob("*-ud-dev.conllu"))]
    return [
        line.removeprefix("# text = ")
        for path in files
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.startswith("# text = ")
    ]


def test_derive_from_a_saved_tokenizer(embedded_text: dict[str, list[str]], tmp_path: Path) -> None:
    lines = embedded_text["tur_Latn"][:1000]
    bpe.train("char-bpe", lines, 1500, end_of_word="attached").save(tmp_path / "large.json")
    derived = bpe.derive(bpe.load(tmp_path / "large.json"), 800)
    assert derived.to_dict() == bpe.train("char-bpe", lines, 800, end_of_word="attached").to_dict()


def test_derivation_refuses_what_it_cannot_know(embedded_text: dict[str, list[str]]) -> None:
    lines = embedded_text["eng_Latn"][:800]
    stopped = bpe.train("byte-bpe", lines, 100_000, min_frequency=30)
    reached = stopped.vocab_size
    assert reached < 100_000
    # larger than reached: unknown unless the size it was trained at says training stopped early
    with raises_code(TokenizerError, "cannot_derive_larger", value=reached + 10):
        bpe.derive(stopped, reached + 10)
    assert bpe.derive(stopped, reached + 10, trained_vocab_size=100_000) is stopped
    assert (
        bpe.derive(stopped, reached + 10, trained_vocab_size=100_000).to_dict()
        == bpe.train("byte-bpe", lines, reached + 10, min_frequency=30).to_dict()
    )
    full = bpe.train("byte-bpe", lines, 600)
    with raises_code(TokenizerError, "cannot_derive_larger", value=700):
        bpe.derive(full, 700, trained_vocab_size=600)  # reached what it was asked: nothing is known beyond
    # below the family's minimum: the error training gives
    for kind, size in (("byte-bpe", 200), ("char-bpe", 20), ("word", 4)):
        with raises_code(TokenizerError, "vocab_below_floor", value=size) as from_training:
            bpe.train(kind, lines, size)
        with raises_code(TokenizerError, "vocab_below_floor", value=size) as from_derivation:
            bpe.derive(bpe.train(kind, lines, 1000), size)
        assert str(from_derivation.value) == str(from_training.value)
    # a char alphabet is cut by frequency, which a char tokenizer does not keep
    chars = bpe.train("char", lines, 300)
    with raises_code(TokenizerError, "not_derivable", value="char"):
        bpe.derive(chars, 20)
    assert bpe.derive(chars, chars.vocab_size) is chars


def test_sentencepiece_trains_each_size() -> None:
    lines = ["merhaba dünya bu bir deneme cümlesi"] * 50 + ["başka bir satır daha"] * 30
    sweep = bpe.train_sweep("spm-bpe", lines, [400, 350])
    assert sweep[350].to_dict() == bpe.train("spm-bpe", lines, 350).to_dict()
    with raises_code(TokenizerError, "not_derivable", value="spm-bpe"):
        bpe.derive(sweep[400], 350)
