"""The fast trainer against the naive reference, plus tie-break and stopping rules and input checks."""

from __future__ import annotations

import random
from collections import Counter

import pytest

import bpe
from bpe.base import TokenizerError
from bpe.pipeline.pretokenizers import get_pretokenizer
from bpe.training.trainer import Merge, checked_texts, train_merges
from tests.bpe.naive_bpe import apply_in_training_order, naive_train
from tests.conftest import leading
from tests.errors import raises_code


def as_tuples(merges: list[Merge]) -> list[tuple[int, int, int]]:
    return [tuple(merge) for merge in merges]


# -- differential: fast == naive, merge for merge -------------------------------


def test_random_corpora_match_naive() -> None:
    rng = random.Random(20240601)
    for _ in range(400):
        alphabet = rng.randint(1, 5)  # tiny alphabets: many runs like "a a a" and many ties
        word_counts: Counter[tuple[int, ...]] = Counter()
        for _ in range(rng.randint(1, 30)):
            word_counts[tuple(rng.randrange(alphabet) for _ in range(rng.randint(1, 12)))] += rng.randint(1, 5)
        keys = [chr(ord("a") + i) for i in range(alphabet)]
        if rng.random() < 0.3:  # every token spells the same: the id tie-break decides
            keys = ["x"] * alphabet
        min_frequency = rng.choice([1, 2, 3])
        fast = train_merges(word_counts, keys, 60, min_frequency=min_frequency)
        slow, _ = naive_train(word_counts, keys, 60, min_frequency)
        assert as_tuples(fast) == slow


def flores_word_counts(lines: list[str], level: str) -> tuple[Counter[tuple[int, ...]], list[str] | list[bytes]]:
    pretokens: Counter[str] = Counter()
    for line in lines:
        pretokens.update(get_pretokenizer("unicode").split(line))
    word_counts: Counter[tuple[int, ...]] = Counter()
    if level == "bytes":
        for pretoken, count in pretokens.items():
            word_counts[tuple(pretoken.encode("utf-8"))] += count
        return word_counts, [bytes([value]) for value in range(256)]
    alphabet = sorted({char for pretoken in pretokens for char in pretoken})
    ids = {char: index for index, char in enumerate(alphabet)}
    for pretoken, count in pretokens.items():
        word_counts[tuple(ids[char] for char in pretoken)] += count
    return word_counts, alphabet


@pytest.mark.parametrize("level", ["chars", "bytes"])
@pytest.mark.parametrize("language", ["eng_Latn", "tur_Latn", "rus_Cyrl", "kor_Hang"])
def test_flores_matches_naive(flores: dict[str, list[str]], language: str, level: str) -> None:
    word_counts, keys = flores_word_counts(flores[language][:100], level)
    fast = train_merges(word_counts, keys, 200)
    slow, final_words = naive_train(word_counts, keys, 200)
    assert len(fast) == 200 and fast[-1].count >= 2  # enough data for every merge to be a real one
    assert as_tuples(fast) == slow
    # encoding the training words with the learned merges reproduces the trainer's final segmentation
    merges = [(merge.left, merge.right) for merge in fast]
    for word in word_counts:
        assert tuple(apply_in_training_order(word, merges, len(keys))) in final_words


@pytest.mark.parametrize(
    ("kind", "options"), [("char-bpe", {}), ("byte-bpe", {}), ("byte-bpe", {"pretokenizer": "o200k"})]
)
def test_rank_encoding_equals_training_order(
    embedded_text: dict[str, list[str]], flores_sample: dict[str, list[str]], kind: str, options: dict
) -> None:
    """The rank-based encode loop gives the same ids as applying every merge in order (the naive encoder)."""
    tokenizer = bpe.train(kind, [text for texts in embedded_text.values() for text in leading(texts, 25_000)], 1000,
                          **options)  # fmt: skip
    ids = {piece: token_id for token_id, piece in enumerate(tokenizer.vocab)}
    held_out = {pretoken for lines in flores_sample.values() for line in lines[:50]
                for pretoken in tokenizer.pretokenizer.split(line)}  # fmt: skip
    for pretoken in sorted(held_out):
        if kind == "char-bpe":
            if any(char not in ids for char in pretoken):
                continue
            base = [ids[char] for char in pretoken] + [ids["</w>"]]
        else:
            base = [len(tokenizer.special_tokens) + value for value in pretoken.encode("utf-8")]
        expected = apply_in_training_order(base, tokenizer.merges, tokenizer.first_merge_id)
        assert tokenizer.encode(pretoken) == expected


# -- tie-break and stopping rules ---------------------------------------------


def test_tie_break_compares_token_strings_not_ids() -> None:
    keys = ["b", "a", "c"]  # id 0 spells "b", id 1 spells "a"
    merges = train_merges({(0, 2): 2, (1, 2): 2}, keys, 1)
    assert as_tuples(merges) == [(1, 2, 2)]  # ("a", "c") < ("b", "c") although (0, 2) < (1, 2)


def test_tie_break_left_string_first_then_ids() -> None:
    # ("a", "bc") vs ("ab", "c"): the left strings decide, "a" < "ab"
    keys = ["a", "bc", "ab", "c"]
    assert as_tuples(train_merges({(2, 3): 3, (0, 1): 3}, keys, 1)) == [(0, 1, 3)]
    # same strings (a collision): the smaller ids win
    keys = ["x", "y", "x", "y"]
    assert as_tuples(train_merges({(2, 3): 3, (0, 1): 3}, keys, 1)) == [(0, 1, 3)]


def test_bytes_keys_order_by_byte_value() -> None:
    keys = [b"\xc3", b"\xa7", b"a", b"b"]  # "ç" as two bytes vs ASCII
    assert as_tuples(train_merges({(0, 1): 2, (2, 3): 2}, keys, 1)) == [(2, 3, 2)]


def test_min_frequency_and_max_merges_stop_training() -> None:
    word_counts = {(0, 1, 2): 3, (2, 3): 1}
    keys = ["a", "b", "c", "d"]
    assert as_tuples(train_merges(word_counts, keys, 10, min_frequency=2)) == [(0, 1, 3), (4, 2, 3)]
    assert len(train_merges(word_counts, keys, 10, min_frequency=1)) == 3
    assert len(train_merges(word_counts, keys, 1, min_frequency=1)) == 1
    assert train_merges(word_counts, keys, 10, min_frequency=4) == []


def test_progress_callback_sees_every_merge() -> None:
    calls: list[tuple[int, int]] = []
    train_merges(
        {(0, 1, 2, 3): 5}, ["a", "b", "c", "d"], 10, progress=lambda done, wanted: calls.append((done, wanted))
    )
    assert calls == [(1, 10), (2, 10), (3, 10)]


# -- checking training texts ---------------------------------------------------


@pytest.mark.parametrize(
    ("texts", "code", "value"),
    [
        ("one string", "bad_training_input", None),
        (["fine", 3], "bad_training_input", 1),
        ([], "empty_training_input", None),
        (["", "  \n", "\t"], "empty_training_input", None),
    ],
)
def test_bad_training_input(texts: object, code: str, value: int | None) -> None:
    with raises_code(TokenizerError, code, value=value):
        list(checked_texts(texts))  # type: ignore[arg-type]
