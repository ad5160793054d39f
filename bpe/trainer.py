"""BPE training shared by char-bpe and byte-bpe.

Two steps:

1. ``count_pretokens`` cuts the training texts into pre-tokens and counts each
   distinct pre-token once (in worker processes for large inputs).
2. ``train_merges`` learns merges over integer symbol ids: each distinct
   pre-token, already mapped by its family to a tuple of base symbol ids, is
   a "word" weighted by its count.  It repeatedly merges the most frequent
   adjacent pair (counts weighted by word frequency, pairs never crossing a
   word) until ``max_merges`` merges are learned or the best count drops below
   ``min_frequency``.

Tie-break (the one rule, for equal counts): the pair whose token strings are
lexicographically smallest, comparing ``(key[left], key[right])`` where a
token's key is its piece string (char-bpe, compared by code point) or its
bytes (byte-bpe); a merged token's key is the concatenation of its parts'
keys.  If two pairs still compare equal (two tokens with the same string),
the smaller ``(left id, right id)`` wins.

The algorithm is the standard fast one (HF ``tokenizers`` BpeTrainer,
subword-nmt): pair counts are kept incrementally, an index maps each pair to
the words containing it, and after a merge only those words are touched; the
best pair comes from a max-heap with lazy invalidation.  An existing pair's
count can only *decrease* after a merge (every new adjacency involves the new
token), so a heap entry is an upper bound: a popped entry whose count is stale
is re-pushed with its current count, and the first up-to-date entry popped is
the true best pair.  Per-merge work is proportional to the words containing
the merged pair, never to the vocabulary.  ``tests/bpe/naive_bpe.py`` is the
slow reference that recounts everything after each merge; a differential test
checks both produce the same merges.
"""

from __future__ import annotations

import heapq
import multiprocessing
import os
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from itertools import chain
from typing import NamedTuple

from bpe.base import TokenizerError
from bpe.pretokenizers import get_pretokenizer

#: progress(merges_done, merges_wanted), called after every merge
ProgressCallback = Callable[[int, int], None]

#: characters of training text per worker task when counting in parallel
CHUNK_CHARS = 4_000_000


class Merge(NamedTuple):
    """One learned merge: tokens ``left`` + ``right`` (ids), seen ``count`` times when learned."""

    left: int
    right: int
    count: int


@contextmanager
def progress_callback(progress: bool | ProgressCallback | None, description: str) -> Iterator[ProgressCallback | None]:
    """Turn a family's ``progress`` option into a callback: True shows a tqdm bar on
    stderr, a callable is used as is, False/None means no progress reporting."""
    if callable(progress):
        yield progress
    elif progress:
        from tqdm import tqdm

        with tqdm(desc=description, unit=" merges", file=sys.stderr) as bar:

            def update(done: int, wanted: int) -> None:
                bar.total = wanted
                bar.update(done - bar.n)

            yield update
    else:
        yield None


# -- counting pre-tokens ------------------------------------------------------


def checked_texts(texts: Iterable[str]) -> Iterator[str]:
    """Yield the training texts, raising TokenizerError for a non-string item,
    a single string passed instead of an iterable of texts, or an input with no
    non-whitespace character at all (checked once the input is exhausted)."""
    if isinstance(texts, (str, bytes)):
        raise TokenizerError("training texts must be an iterable of strings (one text per item), not a single string")
    blank = True
    for index, text in enumerate(texts):
        if not isinstance(text, str):
            raise TokenizerError(f"training text #{index} is {type(text).__name__}, expected str")
        if blank and text and not text.isspace():
            blank = False
        yield text
    if blank:
        raise TokenizerError("training input is empty or whitespace-only")


def count_pretokens(texts: Iterable[str], pretokenizer: str, *, workers: int | None = None) -> Counter[str]:
    """Count every distinct pre-token of ``texts`` (pre-tokenizer by name).

    Inputs longer than ``CHUNK_CHARS`` characters are counted in chunks by
    ``workers`` processes (default: all available cores; 1 = in-process).
    The result does not depend on the number of workers.
    """
    get_pretokenizer(pretokenizer)  # fail early on an unknown name
    chunks = _chunks(checked_texts(texts), CHUNK_CHARS)
    head = [chunk for chunk in (next(chunks, None), next(chunks, None)) if chunk is not None]
    workers = workers if workers is not None else len(os.sched_getaffinity(0))
    counts: Counter[str] = Counter()
    if len(head) < 2 or workers <= 1:
        for chunk in chain(head, chunks):
            counts.update(_count_chunk(pretokenizer, chunk))
        return counts
    tasks = ((pretokenizer, chunk) for chunk in chain(head, chunks))
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        for partial in pool.imap_unordered(_count_task, tasks):
            counts.update(partial)
    return counts


def _chunks(texts: Iterator[str], size: int) -> Iterator[list[str]]:
    chunk: list[str] = []
    length = 0
    for text in texts:
        chunk.append(text)
        length += len(text)
        if length >= size:
            yield chunk
            chunk, length = [], 0
    if chunk:
        yield chunk


def _count_chunk(pretokenizer: str, texts: list[str]) -> Counter[str]:
    split = get_pretokenizer(pretokenizer).split
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(split(text))
    return counts


def _count_task(task: tuple[str, list[str]]) -> Counter[str]:
    return _count_chunk(*task)


# -- learning merges ----------------------------------------------------------


def train_merges(
    word_counts: Mapping[tuple[int, ...], int],
    piece_keys: Sequence[str] | Sequence[bytes],
    max_merges: int,
    *,
    min_frequency: int = 2,
    progress: ProgressCallback | None = None,
) -> list[Merge]:
    """Learn up to ``max_merges`` merges over ``word_counts`` (base-symbol-id tuple -> count).

    ``piece_keys[i]`` is the tie-break key (piece string or bytes) of symbol id
    ``i`` for every id the words use; merge number ``k`` (0-based) creates the
    new id ``len(piece_keys) + k``.  Stops early when no pair occurs at least
    ``min_frequency`` times.
    """
    keys = list(piece_keys)
    # A word is held as a str with one character chr(id) per symbol, and a pair as
    # its two-character string: finding a pair (str.find) and merging it
    # (str.replace) then run in C, both left to right and non-overlapping.
    words = ["".join(map(chr, word)) for word in word_counts]
    counts = list(word_counts.values())
    pair_counts: dict[str, int] = defaultdict(int)
    where: dict[str, set[int]] = defaultdict(set)
    for index, (word, count) in enumerate(zip(words, counts, strict=True)):
        for i in range(len(word) - 1):
            pair = word[i : i + 2]
            pair_counts[pair] += count
            where[pair].add(index)
    # heap entries: (-count, key of left, key of right, pair); the pair string
    # orders like (left id, right id), the final tie-break
    heap = [(-n, keys[ord(pair[0])], keys[ord(pair[1])], pair) for pair, n in pair_counts.items() if n >= min_frequency]
    heapq.heapify(heap)

    merges: list[Merge] = []
    while heap and len(merges) < max_merges:
        negative_count, key_a, key_b, pair = heapq.heappop(heap)
        count = pair_counts.get(pair, 0)
        if count != -negative_count:  # stale entry: re-queue with the current (lower) count
            if count >= min_frequency:
                heapq.heappush(heap, (-count, key_a, key_b, pair))
            continue
        new_symbol = chr(len(keys))
        keys.append(key_a + key_b)
        merges.append(Merge(ord(pair[0]), ord(pair[1]), count))
        for created, count in _merge_everywhere(words, counts, where, pair_counts, pair, new_symbol):
            if count >= min_frequency:
                heapq.heappush(heap, (-count, keys[ord(created[0])], keys[ord(created[1])], created))
        if progress is not None:
            progress(len(merges), max_merges)
    return merges


def _merge_everywhere(
    words: list[str],
    counts: list[int],
    where: dict[str, set[int]],
    pair_counts: dict[str, int],
    pair: str,
    new: str,
) -> list[tuple[str, int]]:
    """Replace ``pair`` by the symbol ``new`` (left to right, non-overlapping) in
    every word containing it, update pair counts and the index, and return the
    new pairs (all involve ``new``) with their counts."""
    a, b = pair
    delta: dict[str, int] = defaultdict(int)
    new_pair_words: dict[str, set[int]] = defaultdict(set)
    for index in where.pop(pair):
        word = words[index]
        count = counts[index]
        i = word.find(pair)
        if i < 0:  # the index may still list a word that lost the pair
            continue
        previous_end = -1
        while i >= 0:
            if i > 0:  # (prev, a) becomes (prev, new); prev is new itself right after another occurrence
                prev = new if i == previous_end else word[i - 1]
                delta[prev + a] -= count
                created = prev + new
                delta[created] += count
                new_pair_words[created].add(index)
            if i + 2 < len(word):  # (b, next) becomes (new, next)
                following = word[i + 2]
                delta[b + following] -= count
                created = new + following
                delta[created] += count
                new_pair_words[created].add(index)
            previous_end = i + 2
            i = word.find(pair, previous_end)
        words[index] = word.replace(pair, new)
    del pair_counts[pair]

    created: list[tuple[str, int]] = []
    for changed, change in delta.items():
        if change == 0 or changed == pair:
            continue
        if new in changed:
            pair_counts[changed] = change
            where[changed] = new_pair_words[changed]
            created.append((changed, change))
            continue
        remaining = pair_counts[changed] + change
        if remaining > 0:
            pair_counts[changed] = remaining
        else:  # the pair is gone from every word; forget it
            del pair_counts[changed]
            where.pop(changed, None)
    return created
