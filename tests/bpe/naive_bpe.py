"""Reference BPE, used ONLY by the tests: the naive algorithm, slow and obviously right.

After every merge it recounts every adjacent pair of every word (as ``get_stats``
in Sennrich et al. 2016's Algorithm 1 does), picks the most frequent pair with the
same tie-break as ``bpe.training.trainer`` (smallest ``(key[left], key[right])``, then
smallest ids), and rewrites every word left to right.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from itertools import pairwise


def merge_word(word: Sequence[int], a: int, b: int, new_id: int) -> list[int]:
    """``word`` with every non-overlapping ``a b`` (scanning left to right) replaced by ``new_id``."""
    merged: list[int] = []
    i = 0
    while i < len(word):
        if i + 1 < len(word) and word[i] == a and word[i + 1] == b:
            merged.append(new_id)
            i += 2
        else:
            merged.append(word[i])
            i += 1
    return merged


def naive_train(
    word_counts: Mapping[tuple[int, ...], int],
    piece_keys: Sequence[str] | Sequence[bytes],
    max_merges: int,
    min_frequency: int = 2,
) -> tuple[list[tuple[int, int, int]], dict[tuple[int, ...], int]]:
    """(merges as (left, right, count), final segmentation of every word -> count)."""
    keys = list(piece_keys)
    words = {tuple(word): count for word, count in word_counts.items()}
    merges: list[tuple[int, int, int]] = []
    while len(merges) < max_merges:
        pair_counts: Counter[tuple[int, int]] = Counter()
        for word, count in words.items():
            for pair in pairwise(word):
                pair_counts[pair] += count
        if not pair_counts:
            break
        # most frequent first; ties: smallest (key of left, key of right), then smallest ids
        (a, b), count = min(pair_counts.items(), key=lambda kv: (-kv[1], keys[kv[0][0]], keys[kv[0][1]], kv[0]))
        if count < min_frequency:
            break
        new_id = len(keys)
        keys.append(keys[a] + keys[b])
        merges.append((a, b, count))
        rewritten: Counter[tuple[int, ...]] = Counter()
        for word, word_count in words.items():
            rewritten[tuple(merge_word(word, a, b, new_id)) if a in word else word] += word_count
        words = dict(rewritten)
    return merges, words


def apply_in_training_order(word: Sequence[int], merges: Sequence[tuple[int, int]], first_new_id: int) -> list[int]:
    """The naive encoder: apply every merge, in the order learned, to ``word``."""
    symbols = list(word)
    for rank, (a, b) in enumerate(merges):
        if a in symbols:
            symbols = merge_word(symbols, a, b, first_new_id + rank)
    return symbols
