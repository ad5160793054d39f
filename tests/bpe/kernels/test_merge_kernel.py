"""Differential tests of the compiled merge kernel against the naive reference (``naive_bpe``):
identical merge lists, merge for merge (ids and counts), on seeded random corpora and on the
FLORES lines of all four languages (the full data root's, else the sample's), with byte units and with
code point units."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest

from bpe.kernels.merge_kernel import learn_merges, learn_merges_from_arrays
from bpe.pipeline.pretokenizers import get_pretokenizer
from tests.bpe.naive_bpe import naive_train
from tests.conftest import FLORES_LANGUAGES

BYTE_KEYS = [bytes([i]) for i in range(256)]
END_OF_WORD = "</w>"


def naive_merges(word_counts, keys, max_merges, min_frequency):
    return naive_train(word_counts, keys, max_merges, min_frequency)[0]


def test_overlapping_pair_is_replaced_left_to_right():
    # a a a a: (a,a) x3 -> "aa aa"; then (aa,aa) x1.  a a a: (a,a) x2 -> "aa a" leaves (aa,a) x1.
    assert learn_merges({(0, 0, 0, 0): 1}, ["a"], 5, 1) == [(0, 0, 3), (1, 1, 1)]
    assert learn_merges({(0, 0, 0): 1}, ["a"], 5, 1) == [(0, 0, 2), (1, 0, 1)]


def test_pairs_never_cross_words_after_a_merge_at_the_end_of_the_word_before():
    # laid out "a b | b c": once (a, b) is merged, the word before "b c" ends in a merged-away
    # position, and the step back from "b" lands in that word; it must not pair "ab" with "bc"
    word_counts = {(0, 1): 5, (1, 2): 3, (2, 0, 1): 2}
    expected = naive_merges(word_counts, ["a", "b", "c"], 10, 1)
    assert learn_merges(word_counts, ["a", "b", "c"], 10, 1) == expected
    assert expected[:2] == [(0, 1, 7), (1, 2, 3)]


def test_word_counts_beyond_int32_are_exact():
    word_counts = {(0, 1, 0, 1): 3 * 2**31 + 5, (1, 0): 7, (0, 1, 1): 2**31 - 1}
    expected = naive_merges(word_counts, ["a", "b"], 10, 1)
    assert learn_merges(word_counts, ["a", "b"], 10, 1) == expected
    assert expected[0] == (0, 1, 6 * 2**31 + 10 + 2**31 - 1)


def test_korean_first_merge_is_gan_jang():
    alphabet = sorted(set("계란밥간장볶음"))
    ids = {ch: i for i, ch in enumerate(alphabet)}
    counts = {"계란밥": 3, "간장밥": 5, "간장계란밥": 2, "볶음밥": 3}
    words = {tuple(ids[ch] for ch in word): n for word, n in counts.items()}
    left, right, count = learn_merges(words, alphabet, 1, 2)[0]
    assert (alphabet[left], alphabet[right], count) == ("간", "장", 7)


def test_ties_follow_spelling_then_ids():
    # both pairs occur once: ("b", "a") < ("b", "b") by spelling although ids (0, 0) < (0, 1)
    assert learn_merges({(0, 0, 1): 1}, ["b", "a"], 1, 1) == [(0, 1, 1)]
    # ids 0 and 1 are both spelled "x": equal spellings fall back to the smaller (left id, right id)
    assert learn_merges({(1, 0): 1, (0, 1): 1}, ["x", "x"], 1, 1) == [(0, 1, 1)]
    # a proper prefix sorts first, as Python compares str: ("<", ...) < ("</w>", ...)
    assert learn_merges({(1, 2): 1, (0, 2): 1}, ["</w>", "<", "a"], 1, 1) == [(1, 2, 1)]


def random_corpus(rng: random.Random, as_bytes: bool):
    """Few base tokens (so pairs repeat and tie), spellings that share prefixes or are equal."""
    spellings = ["a", "b", "ab", END_OF_WORD, "<", "a" + END_OF_WORD, "b", ""]
    n_base = rng.randint(1, 6)
    keys = [rng.choice(spellings) for _ in range(n_base)]
    if as_bytes:
        keys = [key.encode() for key in keys]
    word_counts: Counter[tuple[int, ...]] = Counter()
    for _ in range(rng.randint(1, 40)):
        length = rng.randint(1, 10)
        if rng.random() < 0.2:  # runs of one symbol, like "aaaa"
            word = (rng.randrange(n_base),) * length
        else:
            word = tuple(rng.randrange(n_base) for _ in range(length))
        word_counts[word] += rng.randint(1, 4)
    return dict(word_counts), keys


@pytest.mark.parametrize("as_bytes", [False, True], ids=["str-keys", "bytes-keys"])
def test_random_corpora_match_naive(as_bytes):
    rng = random.Random(20240 + as_bytes)
    for _ in range(300):
        word_counts, keys = random_corpus(rng, as_bytes)
        max_merges, min_frequency = rng.randint(0, 40), rng.choice([0, 1, 2, 3])
        expected = naive_merges(word_counts, keys, max_merges, min_frequency)
        assert learn_merges(word_counts, keys, max_merges, min_frequency) == expected, (word_counts, keys)


def test_result_does_not_depend_on_word_order():
    word_counts, keys = random_corpus(random.Random(7), as_bytes=False)
    shuffled = list(word_counts.items())
    random.Random(8).shuffle(shuffled)
    assert learn_merges(dict(shuffled), keys, 40, 1) == learn_merges(word_counts, keys, 40, 1)


def flores_words(lines: list[str], units: str) -> tuple[dict[tuple[int, ...], int], list]:
    """Words of FLORES lines (gpt2 pre-tokenizer) as byte ids, or as code point ids plus a separate ``</w>``."""
    pretokens = Counter(piece for line in lines for piece in get_pretokenizer("gpt2").split(line))
    if units == "bytes":
        return {tuple(piece.encode()): n for piece, n in pretokens.items()}, BYTE_KEYS
    alphabet = [*sorted({ch for piece in pretokens for ch in piece}), END_OF_WORD]
    ids = {ch: i for i, ch in enumerate(alphabet)}
    end = len(alphabet) - 1
    return {(*(ids[ch] for ch in piece), end): n for piece, n in pretokens.items()}, alphabet


@pytest.mark.parametrize("units", ["bytes", "code points"])
@pytest.mark.parametrize("language", FLORES_LANGUAGES)
def test_flores_matches_naive(flores, language, units):
    word_counts, keys = flores_words(flores[language], units)
    merges = learn_merges(word_counts, keys, 30, 2)
    assert len(merges) == 30
    assert merges == naive_merges(word_counts, keys, 30, 2)


@pytest.mark.slow
@pytest.mark.parametrize("units", ["bytes", "code points"])
@pytest.mark.parametrize("language", FLORES_LANGUAGES)
def test_flores_matches_naive_deep(flores, language, units):
    word_counts, keys = flores_words(flores[language], units)
    assert learn_merges(word_counts, keys, 250, 2) == naive_merges(word_counts, keys, 250, 2)


@pytest.mark.parametrize("units", ["bytes", "code points"])
def test_min_frequency_cuts_the_unlimited_merge_list(flores, units):
    """Training to exhaustion with min_frequency k gives the merges of min_frequency 1 up to the
    first one counted fewer than k times (pairs below k never enter the kernel's heap)."""
    word_counts, keys = flores_words(flores["tur_Latn"], units)
    unlimited = learn_merges(word_counts, keys, 100_000, 1)
    assert unlimited[-1][2] == 1  # ran until only pairs seen once were left, and merged those too
    for k in (2, 3, 7):
        cut = next(index for index, (_, _, count) in enumerate(unlimited) if count < k)
        assert learn_merges(word_counts, keys, 100_000, k) == unlimited[:cut]


def test_stops_at_min_frequency_and_when_no_pair_is_left():
    assert learn_merges({(0, 1): 3, (1, 0): 1}, ["a", "b"], 10, 2) == [(0, 1, 3)]
    assert learn_merges({(0, 1): 3}, ["a", "b"], 10, 1) == [(0, 1, 3)]
    assert learn_merges({(0,): 5}, ["a"], 10, 0) == []
    assert learn_merges({}, ["a"], 10, 0) == []
    assert learn_merges({(0, 1): 3}, ["a", "b"], 0, 0) == []


def test_array_form_rejects_inconsistent_input():
    units, offsets = np.array([97, 98]), np.array([0, 1, 2])
    symbols, word_offsets = np.array([0, 1]), np.array([0, 2])
    with pytest.raises(ValueError, match="word_offsets"):
        learn_merges_from_arrays(symbols, np.array([0, 1]), np.array([1]), units, offsets, 1)
    with pytest.raises(ValueError, match="word counts"):  # internal checks: the message names the argument
        learn_merges_from_arrays(symbols, word_offsets, np.array([0]), units, offsets, 1)
    with pytest.raises(ValueError, match="word symbols"):
        learn_merges_from_arrays(np.array([0, 2]), word_offsets, np.array([1]), units, offsets, 1)
    with pytest.raises(ValueError, match="token_offsets"):
        learn_merges_from_arrays(symbols, word_offsets, np.array([1]), units, np.array([0, 1, 3]), 1)
    with pytest.raises(ValueError, match="piece keys"):
        learn_merges({(0, 1): 1}, ["a", b"b"], 1)


@pytest.mark.parametrize("units", ["bytes", "code points"])
def test_overwriting_the_words_learns_the_same_merges(flores, units):
    """``overwrite_words`` makes the kernel work in the caller's symbol array (one array the size of
    the text less): the same merges, to exhaustion, as on a copy; without it the input is untouched."""
    word_counts, keys = flores_words(flores["kor_Hang"], units)
    symbols = np.fromiter((s for word in word_counts for s in word), dtype=np.int32)
    offsets = np.concatenate([[0], np.cumsum([len(word) for word in word_counts])]).astype(np.int64)
    counts = np.fromiter(word_counts.values(), dtype=np.int64)
    keys_units = np.frombuffer(b"".join(keys), dtype=np.uint8) if units == "bytes" else None
    if keys_units is None:
        keys_units = np.frombuffer("".join(keys).encode("utf-32-le"), dtype="<u4")
    key_offsets = np.concatenate([[0], np.cumsum([len(key) for key in keys])]).astype(np.int64)
    original = symbols.copy()
    kept = learn_merges_from_arrays(symbols, offsets, counts, keys_units, key_offsets, 100_000, 1)
    assert np.array_equal(symbols, original)
    overwritten = learn_merges_from_arrays(
        symbols, offsets, counts, keys_units, key_offsets, 100_000, 1, overwrite_words=True
    )
    assert not np.array_equal(symbols, original)  # worked in place
    assert all(np.array_equal(a, b) for a, b in zip(kept, overwritten, strict=True)) and kept[0].size > 1000
    assert learn_merges(word_counts, keys, 100_000, 1) == list(zip(*(a.tolist() for a in kept), strict=True))
