"""bpe-knockout (Bauwens & Delobelle 2024): blame, n-ary merges, and the effect on gold boundaries."""

from __future__ import annotations

from pathlib import Path

import pytest

import bpe
from bpe.base import TokenizerError
from bpe.char_bpe import CharBPETokenizer
from bpe.knockout import KnockoutTokenizer, blamed_merges
from corpora.morph import read_morphochallenge2010

LETTERS = ["a", "d", "e", "v", " "]


def hand_base() -> CharBPETokenizer:
    """vd, e+vd, evd+e: "evde" (ev|de) is built by joining v and d across its gold boundary."""
    merges = [("v", "d"), ("e", "vd"), ("evd", "e")]
    return CharBPETokenizer.from_piece_merges(LETTERS, merges, end_of_word="none", pretokenizer="whitespace")


def test_blame_knocks_out_the_merge_across_the_boundary() -> None:
    base = hand_base()
    vd, evd, evde = (base.vocab.index(piece) for piece in ("vd", "evd", "evde"))
    assert blamed_merges(base, {"evde": frozenset({2})}, 0.5) == [vd]
    # "evd" joins e and vd at offset 1, "evde" joins evd and e at 3: neither is a gold boundary
    assert blamed_merges(base, {"evde": frozenset({1})}, 0.5) == [evd]
    assert blamed_merges(base, {"evde": frozenset({3})}, 0.5) == [evde]
    # vd is applied in both words, wrongly in one: a blame ratio of 1/2 meets the threshold 0.5 only
    references = {"evde": frozenset({2}), "avd": frozenset({1})}
    assert blamed_merges(base, references, 0.5) == [vd]
    assert blamed_merges(base, references, 0.6) == []


def test_knocked_out_token_leaves_and_later_merges_use_its_parts() -> None:
    base = hand_base()
    knocked = KnockoutTokenizer(base, blamed_merges(base, {"evde": frozenset({2})}, 0.5))
    assert knocked.vocab_size == base.vocab_size - 1 and "vd" not in knocked.vocab
    e, v, d = (knocked.vocab.index(piece) for piece in "evd")
    assert knocked.merges == [(e, v, d), (knocked.vocab.index("evd"), e)]
    assert knocked.pieces(knocked.encode("evde")) == ["evde"]  # the word itself is still one token
    assert base.pieces(base.encode("avde")) == ["a", "vd", "e"]
    assert knocked.pieces(knocked.encode("avde")) == ["a", "v", "d", "e"]  # no more joining across v|d


@pytest.fixture(scope="module")
def turkish_gold(data_root: Path) -> dict[str, frozenset[int]]:
    path = data_root / "morph/tur/morphochallenge2010_goldstd_combined.segmentation.tur"
    reference = read_morphochallenge2010([path], "tur_Latn")
    return {word: alternatives[0] for word, alternatives in sorted(reference.analyses.items())}


def boundary_recall_f1(tokenizer: bpe.Tokenizer, gold: dict[str, frozenset[int]]) -> tuple[float, float]:
    tp = fp = fn = 0
    for word, boundaries in gold.items():
        offsets = [0]
        for char in word:
            offsets.append(offsets[-1] + len(char.encode("utf-8")))
        gold_bytes = {offsets[b] for b in boundaries}
        predicted = {end for _, end in tokenizer.encode_word(word).spans if 0 < end < offsets[-1]}
        tp += len(predicted & gold_bytes)
        fp += len(predicted - gold_bytes)
        fn += len(gold_bytes - predicted)
    return tp / (tp + fn), tp / (tp + 0.5 * (fp + fn))


@pytest.mark.parametrize("base", ["char-bpe", "byte-bpe"])
def test_knockout_aligns_better_with_held_out_gold(
    base: str, ud_text: dict[str, list[str]], turkish_gold: dict[str, frozenset[int]], tmp_path: Path
) -> None:
    words = list(turkish_gold)
    train_words = {word: turkish_gold[word] for word in words[::2]}
    held_out = {word: turkish_gold[word] for word in words[1::2]}
    tokenizer = bpe.train("bpe-knockout", ud_text["tur_Latn"][:2000], 3000, references=train_words, base=base)
    assert isinstance(tokenizer, KnockoutTokenizer)
    assert len(tokenizer.knocked_out) > 0 and tokenizer.vocab_size == 3000 - len(tokenizer.knocked_out)
    recall_before, f1_before = boundary_recall_f1(tokenizer.base, held_out)
    recall_after, f1_after = boundary_recall_f1(tokenizer, held_out)
    assert recall_after > recall_before and f1_after > f1_before
    tokenizer.save(tmp_path / "k.json")
    loaded = bpe.load(tmp_path / "k.json")
    assert loaded.to_dict() == tokenizer.to_dict()
    for word in words[:200]:
        encoding = loaded.encode_with_spans(" " + word)
        assert loaded.decode(encoding.ids) == " " + word
        assert encoding.ids == tokenizer.encode(" " + word)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({}, "bpe-knockout needs references"),
        ({"references": {"ab": [2]}}, "boundaries must be character offsets inside the word \\(1..1\\)"),
        ({"references": {"ab": [1]}, "base": "word"}, "unknown base 'word' for bpe-knockout"),
        ({"references": {"ab": [1]}, "threshold": 0}, "threshold must be a blame ratio in \\(0, 1\\]"),
        ({"references": {"ab": [1]}, "encode_mode": "fewest-tokens"}, "does not take option encode_mode"),
        ({"references": {"ab": [1]}, "dropout": 0.1}, "does not take option dropout"),
    ],
)
def test_bad_options(options: dict[str, object], message: str) -> None:
    with pytest.raises(TokenizerError, match=message):
        bpe.train("bpe-knockout", ["ab ab abc"] * 5, 300, **options)
