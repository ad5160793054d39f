"""bpe-knockout (Bauwens & Delobelle 2024): blame, n-ary merges, and the effect on gold boundaries."""

from __future__ import annotations

from pathlib import Path

import pytest

import bpe
from bpe.base import TokenizerError
from bpe.models.char_bpe import CharBPETokenizer
from bpe.models.knockout import KnockoutTokenizer, blamed_merges
from corpora.morph import read_morphochallenge2010, read_sigmorphon2022_word
from tests.conftest import DATA_ROOT, SAMPLE_DATA_ROOT, by_data, leading
from tests.errors import raises_code

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


#: gold morphemes: the English SIGMORPHON 2022 excerpt of the shipped sample, or with the full data root
#: Morpho Challenge 2010's Turkish gold standard (its own language code "tr" turns its ASCII capitals into ç ğ ı ...)
GOLD = by_data(
    (SAMPLE_DATA_ROOT / "morph/eng/sigmorphon2022_eng.word.dev.tsv", read_sigmorphon2022_word, "en", "eng_Latn"),
    (DATA_ROOT / "morph/tur/morphochallenge2010_goldstd_combined.segmentation.tur", read_morphochallenge2010, "tr",
     "tur_Latn"),
)  # fmt: skip


@pytest.fixture(scope="module")
def gold() -> tuple[str, dict[str, frozenset[int]]]:
    """(FLORES language, word -> its first gold analysis)."""
    path, read, code, language = GOLD
    reference = read([path], code)
    return language, {word: alternatives[0] for word, alternatives in sorted(reference.analyses.items())}


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
    base: str,
    embedded_text: dict[str, list[str]],
    gold: tuple[str, dict[str, frozenset[int]]],
    tmp_path: Path,
) -> None:
    language, analyses = gold
    words = list(analyses)
    train_words = {word: analyses[word] for word in words[::2]}
    held_out = {word: analyses[word] for word in words[1::2]}
    text = leading(embedded_text[language], 120_000)
    tokenizer = bpe.train("bpe-knockout", text, 3000, references=train_words, base=base)
    assert isinstance(tokenizer, KnockoutTokenizer)
    assert len(tokenizer.knocked_out) > 0 and tokenizer.vocab_size == 3000 - len(tokenizer.knocked_out)
    recall_before, f1_before = boundary_recall_f1(tokenizer.base, held_out)
    recall_after, f1_after = boundary_recall_f1(tokenizer, held_out)
    assert recall_after > recall_before and f1_after > f1_before
    tokenizer.save(tmp_path / "k.json")
    loaded = bpe.load(tmp_path / "k.json")
    assert loaded.to_dict() == tokenizer.to_dict()
    unknown = 0
    for word in words[:200]:
        encoding = loaded.encode_with_spans(" " + word)
        assert encoding.ids == tokenizer.encode(" " + word)
        if loaded.unk_id in encoding.ids:  # a character the char-bpe training text lacked (the æ of anapæsts)
            unknown += 1
        else:
            assert loaded.decode(encoding.ids) == " " + word
    assert unknown == 0 if base == "byte-bpe" else unknown < 5


@pytest.mark.parametrize(
    ("options", "code", "value"),
    [
        ({}, "bad_references", None),
        ({"references": {"ab": [2]}}, "bad_references", "ab"),
        ({"references": {"ab": [1]}, "base": "word"}, "not_allowed", "word"),
        ({"references": {"ab": [1]}, "threshold": 0}, "out_of_range", 0),
        ({"references": {"ab": [1]}, "base": "byte-bpe", "limit_alphabet": 20}, "table_rule", "limit_alphabet"),
        ({"references": {"ab": [1]}, "encode_mode": "fewest-tokens"}, "unknown_option", "encode_mode"),
        ({"references": {"ab": [1]}, "dropout": 0.1}, "unknown_option", "dropout"),
        ({"references": {"ab": [1]}, "normalizer": "jamo"}, "unknown_option", "normalizer"),
    ],
)
def test_bad_options(options: dict[str, object], code: str, value: object) -> None:
    with raises_code(TokenizerError, code, value=value):
        bpe.train("bpe-knockout", ["ab ab abc"] * 5, 300, **options)


def test_base_options_reach_the_base_and_the_saved_config(tmp_path: Path) -> None:
    text = ["evde evler evlerde ev", "okul okullar okulda"] * 5
    references = {"evlerde": [2, 5], "okullar": [4]}
    tokenizer = bpe.train("bpe-knockout", text, 300, references=references, base="byte-bpe",
                          pretokenizer="whitespace", min_frequency=3)  # fmt: skip
    assert tokenizer.base.family == "byte-bpe" and tokenizer.base.pretokenizer.name == "whitespace"
    assert tokenizer.base.options.min_frequency == 3
    config = tokenizer.to_dict()["config"]
    assert config == {"base": "byte-bpe", "threshold": 0.5, "pretokenizer": "whitespace", "end_of_word": None,
                      "min_frequency": 3, "limit_alphabet": None}  # fmt: skip
    tokenizer.save(tmp_path / "k.json")
    document = (tmp_path / "k.json").read_text(encoding="utf-8")
    (tmp_path / "k.json").write_text(document.replace('"pretokenizer": "whitespace"', '"pretokenizer": "gpt2"', 1))
    with raises_code(TokenizerError, "bad_tokenizer_file", field="config"):
        bpe.load(tmp_path / "k.json")
