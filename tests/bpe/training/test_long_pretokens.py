"""Merges-based encoding of long pre-tokens: the heap path (``MergeTokenizer._apply_merges_heap`` and the
compiled ``encode_kernel._merged_heap``) gives exactly the merges applied one by one in training order
(``naive_bpe.merge_word``), with the same leftmost-first tie-break, and a million-character word encodes
and round-trips."""

from __future__ import annotations

import random
from itertools import pairwise

import pytest

import bpe
from bpe.models.batch_encode import BatchEncoder
from tests.bpe.naive_bpe import merge_word

TRAIN = ["a" * k + " b" + "ab" * k + " aab" * (k % 5) for k in range(1, 70)] * 3 + ["merhaba dünya aaaa"] * 10


@pytest.fixture(scope="module", params=["byte-bpe", "char-bpe"])
def tokenizer(request: pytest.FixtureRequest) -> bpe.Tokenizer:
    return bpe.train(request.param, TRAIN, 400)


def _by_training_order(tokenizer, symbols: list[int]) -> list[int]:
    for k, (left, right) in enumerate(tokenizer.merges):
        symbols = merge_word(symbols, left, right, tokenizer.first_merge_id + k)
    return symbols


def _random_words(seed: int) -> list[str]:
    stream = random.Random(seed)
    words = ["a" * n for n in (1, 2, 3, 47, 48, 49, 50, 97, 128, 1000)]
    for _ in range(150):
        length = stream.choice((5, 30, 60, 200, 700))
        alphabet = stream.choice(("a", "ab", "abü", "aaab", "merhabdüny"))
        words.append("".join(stream.choice(alphabet) for _ in range(length)))
        words.append(stream.choice(alphabet) * stream.randint(1, 9) + words[-1][: length // 2] * 3)
    return words


def test_heap_merging_equals_merges_in_training_order(tokenizer) -> None:
    for word in _random_words(7):
        symbols, _ = tokenizer._base_symbols(word)
        expected = _by_training_order(tokenizer, list(symbols))
        assert tokenizer._apply_merges_heap(list(symbols)) == expected, word
        assert tokenizer._apply_merges(list(symbols)) == expected, word  # the scan for short words


def test_heap_merging_records_the_same_junctions(tokenizer) -> None:
    for word in _random_words(11):
        symbols, _ = tokenizer._base_symbols(word)
        scan: list[tuple[int, int]] = []
        heap: list[tuple[int, int]] = []
        # the scan over the pair list, whatever the word's length
        stream = list(symbols)
        ranks = tokenizer._ranks
        starts = list(range(len(stream)))
        while True:
            pairs = [ranks.get(pair, 1 << 62) for pair in pairwise(stream)]
            if not pairs or min(pairs) == 1 << 62:
                break
            i = pairs.index(min(pairs))
            scan.append((min(pairs), starts.pop(i + 1)))
            stream[i : i + 2] = [min(pairs)]
        tokenizer._apply_merges_heap(list(symbols), heap)
        assert heap == scan, word


def test_compiled_encoding_of_long_words_equals_encode(tokenizer) -> None:
    words = _random_words(3)
    texts = [" ".join(words[k : k + 3]) for k in range(0, len(words), 3)]
    ids, per_text = BatchEncoder(tokenizer).encode(texts)
    expected = [tokenizer.encode(text) for text in texts]
    assert per_text.tolist() == [len(e) for e in expected]
    assert ids.tolist() == [i for e in expected for i in e]


def test_a_million_repeated_letters(tokenizer) -> None:
    """Quadratic merging took minutes here; the heap takes seconds (not timed: asserted on the result).
    Once, with byte-bpe: char-bpe shares the merging code."""
    if tokenizer.family != "byte-bpe":
        pytest.skip("the million-letter word is encoded once, with byte-bpe")
    word = "a" * 1_000_000
    ids = tokenizer.encode(word)
    assert tokenizer.decode(ids) == word
    longest = max(len(tokenizer.decode([i])) for i in set(ids))
    assert longest >= 32 and len(ids) <= len(word) // 16  # the runs of a's were merged
    compiled, _ = BatchEncoder(tokenizer).encode([word])
    assert compiled.tolist() == ids
