"""The compiled core of BPE training: learn the merge list from counted pre-tokens.

Semantics (identical, merge for merge, to recounting every pair after every merge):

* repeatedly merge the most frequent adjacent pair; a pair's count is the sum of
  the counts of the pre-tokens ("words") it occurs in, once per occurrence;
  pairs never cross words;
* stop after ``max_merges`` merges, or when the best count is below
  ``min_frequency`` (or no pair is left);
* tie-break for equal counts: the lexicographically smallest pair of unit
  sequences ``(units(left), units(right))``, compared as Python compares tuples
  of ``str``/``bytes`` (a proper prefix sorts first); still equal (two tokens
  spelled alike): the smaller ``(left id, right id)``;
* inside a word the pair is replaced left to right without overlap
  (``a a a`` with ``(a, a)`` -> ``aa a``).

Ids: the caller numbers its initial tokens ``0 .. n-1`` and gives their unit
sequences (byte values, or Unicode code points); merge ``k`` creates token
``n + k`` whose units are the concatenation of its parts.

Representation (why it is fast):

* every distinct word is laid out once in flat arrays: one *position* per
  symbol with a ``next`` link, so a merge edits two positions and never
  rebuilds a word.  No ``prev`` link (4 bytes a symbol): the live position
  before ``p`` is found by stepping back over the merged-away positions just
  before ``p``, which are the rest of that one token (a few symbols); at the
  start of a word the step lands in the word before (or off the array), which
  the live position found tells: it links to ``p`` only if it precedes it in
  the same word.  Each position also holds its word's count, so a merge reads
  no per-word array;
* ``pair_at[p]`` is the pair that starts at position ``p``; pair counts change
  by exact deltas at the merged positions only;
* each pair has a contiguous, ascending slice of its starting positions in one
  occurrence array.  All occurrences of a pair are recorded in a single pass
  (the initial scan, or the merge that created its newer token: a pair can only
  appear when one of its tokens is created), and a stable counting sort groups
  them by pair, so no per-pair lists are allocated.  Both passes visit positions
  in ascending order, so every slice is ascending and a merge walks each word
  left to right, as the non-overlap rule needs.  Entries go stale when a
  neighbour merges; they are validated lazily (``pair_at[p] == pair``);
* a binary heap with lazy invalidation: a pair's count only falls after the
  merge that created it, so a popped entry whose stored count is stale is
  pushed back with its current count instead of being updated in place; a
  pair below ``min_frequency`` never enters it (it can never be merged);
* a hash table of pairs serves the initial scan only (a direct table of all
  initial pairs when there are few initial tokens, as the 256 bytes): every pair a merge
  creates holds the merge's new token, so it is found by its other token in
  a per-token array stamped with the new token.

Compiled with numba at import (explicit signatures, ``cache=True``): the first,
cold compilation takes about 8 s; the machine code is stored in ``__pycache__``
and later processes load it in about a second (``benchmarks/perf/README.md``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import chain

import numpy as np

from bpe.kernels._numba import njit, prefetch

_HASH_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing
_NO_KEY = -1
_DIRECT_LIMIT = 1 << 20  # pair table entries (4 MB) up to which the initial scan indexes pairs directly
_PREFETCH_AHEAD = 8  # occurrences a merge fetches ahead (8, 16 and 32 measured alike)
# Explicit signatures: one compiled version per function (no literal/int32 variants), compiled
# once at import and cached.  _ORDER: what ranking a pair needs (lefts, rights, units, starts, ends).
_ORDER = "int32[::1], int32[::1], int32[::1], int64[::1], int64[::1]"


def learn_merges(
    word_counts: Mapping[tuple[int, ...], int] | tuple[np.ndarray, np.ndarray, np.ndarray],
    piece_keys: Sequence[str] | Sequence[bytes],
    max_merges: int,
    min_frequency: int = 2,
    *,
    overwrite_words: bool = False,
) -> list[tuple[int, int, int]]:
    """Learn up to ``max_merges`` merges ``(left id, right id, count)`` over ``word_counts``
    (tuple of initial token ids -> count, or the arrays ``(word_symbols, word_offsets, word_counts)``
    of ``learn_merges_from_arrays``).

    ``piece_keys[t]`` spells initial token ``t``: a ``str`` (compared by code point) or
    ``bytes``; merge ``k`` creates token ``len(piece_keys) + k``.  ``overwrite_words``: as in
    ``learn_merges_from_arrays`` (word counts given as a mapping are always converted to arrays of
    its own, which it overwrites).
    """
    token_units, token_offsets = _spell(piece_keys)
    if isinstance(word_counts, Mapping):
        n_words = len(word_counts)
        lengths = np.fromiter(map(len, word_counts), dtype=np.int64, count=n_words)
        word_offsets = np.zeros(n_words + 1, dtype=np.int64)
        np.cumsum(lengths, out=word_offsets[1:])
        word_symbols = np.fromiter(chain.from_iterable(word_counts), dtype=np.int32, count=int(word_offsets[-1]))
        counts = np.fromiter(word_counts.values(), dtype=np.int64, count=n_words)
        overwrite_words = True
    else:
        word_symbols, word_offsets, counts = word_counts
    lefts, rights, merged_counts = learn_merges_from_arrays(
        word_symbols,
        word_offsets,
        counts,
        token_units,
        token_offsets,
        max_merges,
        min_frequency,
        overwrite_words=overwrite_words,
    )
    return list(zip(lefts.tolist(), rights.tolist(), merged_counts.tolist(), strict=True))


def learn_merges_from_arrays(
    word_symbols: np.ndarray,
    word_offsets: np.ndarray,
    word_counts: np.ndarray,
    token_units: np.ndarray,
    token_offsets: np.ndarray,
    max_merges: int,
    min_frequency: int = 2,
    *,
    overwrite_words: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The array form of ``learn_merges``: returns the ``lefts``, ``rights`` and ``counts`` of the merges.

    Word ``i`` is ``word_symbols[word_offsets[i]:word_offsets[i + 1]]`` (initial token ids) and
    occurs ``word_counts[i]`` times; initial token ``t`` is spelled
    ``token_units[token_offsets[t]:token_offsets[t + 1]]`` (byte values or code points).
    With ``overwrite_words`` the kernel edits ``word_symbols`` in place as its array of current
    symbols (left holding merged ids and -1) instead of copying it: one array the size of the
    text less, for a caller that no longer needs the words.
    """
    word_symbols = np.ascontiguousarray(word_symbols, dtype=np.int32)
    word_offsets = np.ascontiguousarray(word_offsets, dtype=np.int64)
    word_counts = np.ascontiguousarray(word_counts, dtype=np.int64)
    token_units = np.ascontiguousarray(token_units, dtype=np.int32)
    token_offsets = np.ascontiguousarray(token_offsets, dtype=np.int64)
    n_tokens = token_offsets.size - 1
    if word_offsets.size != word_counts.size + 1 or word_offsets[-1] != word_symbols.size:
        raise ValueError("word_offsets must have one entry per word plus one, ending at len(word_symbols)")
    if n_tokens < 0 or token_offsets[-1] != token_units.size:
        raise ValueError("token_offsets must have one entry per token plus one, ending at len(token_units)")
    if word_counts.size and word_counts.min() <= 0:
        raise ValueError("word counts must be positive")
    if word_symbols.size and (word_symbols.min() < 0 or word_symbols.max() >= n_tokens):
        raise ValueError(f"word symbols must be initial token ids in [0, {n_tokens})")
    if max_merges < 0 or n_tokens + max_merges >= 2**31:
        raise ValueError(f"max_merges must be in [0, 2**31 - {n_tokens}), got {max_merges}")
    return _learn(
        word_symbols,
        word_offsets,
        word_counts,
        token_units,
        token_offsets,
        int(max_merges),
        int(min_frequency),
        bool(overwrite_words),
    )


def _spell(piece_keys: Sequence[str] | Sequence[bytes]) -> tuple[np.ndarray, np.ndarray]:
    """Flat units (code points of str keys, byte values of bytes keys) and offsets of the initial tokens."""
    keys = list(piece_keys)
    offsets = np.zeros(len(keys) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, keys), dtype=np.int64, count=len(keys)), out=offsets[1:])
    if all(isinstance(key, str) for key in keys):
        units = np.frombuffer("".join(keys).encode("utf-32-le"), dtype="<u4")
    elif all(isinstance(key, bytes) for key in keys):
        units = np.frombuffer(b"".join(keys), dtype=np.uint8)
    else:
        raise ValueError("piece keys must be all str or all bytes")
    return units.astype(np.int32), offsets


# --------------------------------------------------------------------------- helpers


@njit(["int32[::1](int32[::1], int64)", "int64[::1](int64[::1], int64)"], cache=True)
def _grown(array, needed):
    """``array`` if it holds ``needed`` items, else a copy with half as much capacity again (not
    twice: the pair arrays reach a few hundred thousand pairs, so doubling would leave up to half
    of them empty at the end, when the training's memory peaks; the copies stay few either way)."""
    if needed <= array.size:
        return array
    bigger = np.empty(max(needed, array.size + array.size // 2), dtype=array.dtype)
    bigger[: array.size] = array
    return bigger


@njit("int64(int64[::1], int64)", cache=True)
def _slot(keys, key):
    """Slot of ``key`` in the open-addressing table ``keys`` (its own slot, or the empty one where it belongs)."""
    mask = keys.size - 1
    i = np.int64((np.uint64(key) * _HASH_MULTIPLIER) >> np.uint64(20)) & mask
    while keys[i] != key and keys[i] != _NO_KEY:
        i = (i + 1) & mask
    return i


@njit("Tuple((int64[::1], int32[::1]))(int64[::1], int32[::1], int64)", cache=True)
def _rehashed(keys, values, capacity):
    new_keys = np.full(capacity, _NO_KEY, dtype=np.int64)
    new_values = np.empty(capacity, dtype=np.int32)
    for i in range(keys.size):
        if keys[i] != _NO_KEY:
            j = _slot(new_keys, keys[i])
            new_keys[j] = keys[i]
            new_values[j] = values[i]
    return new_keys, new_values


@njit("int64(int32[::1], int64[::1], int64[::1], int64, int64)", cache=True)
def _units_less(units, starts, ends, x, y):
    """-1 / 0 / 1 as the unit sequence of token ``x`` sorts before / equal to / after that of ``y``."""
    i, j = starts[x], starts[y]
    end_x, end_y = ends[x], ends[y]
    while i < end_x and j < end_y:
        if units[i] != units[j]:
            return -1 if units[i] < units[j] else 1
        i += 1
        j += 1
    if i == end_x:
        return 0 if j == end_y else -1
    return 1


@njit(f"boolean(int64, int64, {_ORDER})", cache=True)
def _tie_before(pair_a, pair_b, lefts, rights, units, starts, ends):
    """True when pair a outranks pair b of the same count: smaller (units(left), units(right)), then ids.

    The heap compares counts itself and calls this for equal counts only: a compiled function that
    takes arrays updates their reference counts (atomic instructions) on every call, which in the
    heap's sifts cost more than the comparison."""
    if pair_a == pair_b:
        return False
    left_a, left_b = lefts[pair_a], lefts[pair_b]
    order = _units_less(units, starts, ends, left_a, left_b)
    if order == 0:
        order = _units_less(units, starts, ends, rights[pair_a], rights[pair_b])
    if order != 0:
        return order < 0
    if left_a != left_b:
        return left_a < left_b
    return rights[pair_a] < rights[pair_b]


@njit(f"void(int64[::1], int32[::1], int64, int64, int64, {_ORDER})", cache=True)
def _heap_push(heap_counts, heap_pairs, size, count, pair, lefts, rights, units, starts, ends):
    """Insert at index ``size`` and sift up; the caller increments its size."""
    i = size
    while i > 0:
        parent = (i - 1) >> 1
        parent_count = heap_counts[parent]
        if count < parent_count or (
            count == parent_count and not _tie_before(pair, heap_pairs[parent], lefts, rights, units, starts, ends)
        ):
            break
        heap_counts[i] = heap_counts[parent]
        heap_pairs[i] = heap_pairs[parent]
        i = parent
    heap_counts[i] = count
    heap_pairs[i] = pair


@njit(f"void(int64[::1], int32[::1], int64, int64, int64, int64, {_ORDER})", cache=True)
def _sift_down(heap_counts, heap_pairs, size, i, count, pair, lefts, rights, units, starts, ends):
    """Place entry ``(count, pair)`` at index ``i`` of a heap of ``size`` entries and sift it down."""
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        if child + 1 < size:
            right_count, left_count = heap_counts[child + 1], heap_counts[child]
            if right_count > left_count or (
                right_count == left_count
                and _tie_before(heap_pairs[child + 1], heap_pairs[child], lefts, rights, units, starts, ends)
            ):
                child += 1
        child_count = heap_counts[child]
        if child_count < count or (
            child_count == count and not _tie_before(heap_pairs[child], pair, lefts, rights, units, starts, ends)
        ):
            break
        heap_counts[i] = heap_counts[child]
        heap_pairs[i] = heap_pairs[child]
        i = child
    heap_counts[i] = count
    heap_pairs[i] = pair


@njit(f"void(int64[::1], int32[::1], int64, {_ORDER})", cache=True)
def _heap_pop(heap_counts, heap_pairs, size, lefts, rights, units, starts, ends):
    """Remove the top entry of a heap of ``size`` entries; the caller decrements its size."""
    size -= 1
    last_count, last_pair = heap_counts[size], heap_pairs[size]
    _sift_down(heap_counts, heap_pairs, size, 0, last_count, last_pair, lefts, rights, units, starts, ends)


@njit("int64(int32[::1], int32[::1], int64, int64, int64, int32[::1], int64, int64[::1], int64[::1])", cache=True)
def _group_by_pair(record_pairs, record_positions, n_records, first_pair, n_pairs, occ, occ_size, occ_start, occ_len):
    """Stable counting sort of (pair, position) records of pairs ``first_pair .. n_pairs - 1``
    into contiguous slices appended to ``occ``; returns the new size of ``occ``."""
    for k in range(n_records):
        occ_len[record_pairs[k]] += 1
    start = occ_size
    for pair in range(first_pair, n_pairs):
        occ_start[pair] = start
        start += occ_len[pair]
        occ_len[pair] = 0
    for k in range(n_records):
        pair = record_pairs[k]
        occ[occ_start[pair] + occ_len[pair]] = record_positions[k]
        occ_len[pair] += 1
    return start


@njit("int64(int32[::1], int64, int32[::1], int64[::1], int64[::1])", cache=True)
def _group_positions(pair_at, n_pairs, occ, occ_start, occ_len):
    """``_group_by_pair`` of every position with a pair (``pair_at[p] >= 0``), in position order,
    into ``occ`` from its start; returns the size of ``occ``."""
    for p in range(pair_at.size):
        if pair_at[p] >= 0:
            occ_len[pair_at[p]] += 1
    start = 0
    for pair in range(n_pairs):
        occ_start[pair] = start
        start += occ_len[pair]
        occ_len[pair] = 0
    for p in range(pair_at.size):
        pair = pair_at[p]
        if pair >= 0:
            occ[occ_start[pair] + occ_len[pair]] = p
            occ_len[pair] += 1
    return start


@njit("int64(int32[::1], int32[::1], int64, int64[::1], int64[::1])", cache=True)
def _compacted(occ, pair_at, n_pairs, occ_start, occ_len):
    """Drop the stale entries of ``occ`` in place (those whose position no longer starts their pair,
    and the slices of merged pairs) and close the gaps; returns the new size of ``occ``.

    Slices lie in ``occ`` in pair order (a pair's slice is appended when it is created, and pairs
    are numbered as they are created), so moving each one down keeps the order of its entries: the
    merges see the same valid occurrences in the same order, and a stale entry never becomes valid
    again (a position only ever gets a pair created after it), so nothing a merge reads changes."""
    size = 0
    for pair in range(n_pairs):
        n = occ_len[pair]
        if n == 0:
            continue
        begin = occ_start[pair]
        occ_start[pair] = size
        for k in range(begin, begin + n):
            p = occ[k]
            if pair_at[p] == pair:
                occ[size] = p
                size += 1
        occ_len[pair] = size - occ_start[pair]
    return size


@njit(
    "Tuple((int64, int64, int64))(int32[::1], int64[::1], int64[::1], int32[::1], int32[::1], int32[::1], int64, "
    "int64, int32[::1], int64[::1], int32[::1], int32[::1], int32[::1], int64[::1], int64, int64, int64)",
    cache=True,
)
def _scan_words(
    symbol,
    word_offsets,
    word_counts,
    next_,
    weight_at,
    pair_at,
    n_initial,
    direct_size,
    direct,
    keys,
    values,
    lefts,
    rights,
    pair_counts,
    word,
    n_pairs,
    n_records,
):
    """The initial scan from word ``word`` on: link positions, number every pair on first sight,
    add up its count, record it at its position (``pair_at``).  Stops before a word whose pairs might
    not fit the pair arrays (or keep the hash table at most half full) and returns
    ``(next word, n_pairs, n_records)``; the caller grows them and calls again.

    Its own function, with the arrays as arguments it never reassigns: in the training loop, which
    grows them, every pass over a position would update their reference counts (atomic instructions
    that cost more than the scan).  The hash probe is written out here for the same reason."""
    mask = keys.size - 1
    cell = np.int64(0)
    slot = np.int64(0)
    for w in range(word, word_counts.size):
        begin, end = word_offsets[w], word_offsets[w + 1]
        if n_pairs + (end - begin) > lefts.size or (not direct_size and 2 * (n_pairs + (end - begin)) > keys.size):
            return w, n_pairs, n_records
        stored = word_counts[w] if word_counts[w] < 2**31 else -1 - w
        for p in range(begin, end):
            weight_at[p] = stored
            next_[p] = p + 1 if p + 1 < end else -1
        for p in range(begin, end - 1):
            if direct_size:
                cell = np.int64(symbol[p]) * n_initial + symbol[p + 1]
                is_new = direct[cell] < 0
                if is_new:
                    direct[cell] = n_pairs
            else:
                key = (np.int64(symbol[p]) << 32) | symbol[p + 1]
                slot = np.int64((np.uint64(key) * _HASH_MULTIPLIER) >> np.uint64(20)) & mask  # as _slot
                while keys[slot] != key and keys[slot] != _NO_KEY:
                    slot = (slot + 1) & mask
                is_new = keys[slot] == _NO_KEY
                if is_new:
                    keys[slot] = key
                    values[slot] = n_pairs
            if is_new:
                lefts[n_pairs] = symbol[p]
                rights[n_pairs] = symbol[p + 1]
                pair_counts[n_pairs] = 0
                n_pairs += 1
            pair = direct[cell] if direct_size else values[slot]
            pair_counts[pair] += word_counts[w]
            pair_at[p] = pair
            n_records += 1
    return word_counts.size, n_pairs, n_records


# --------------------------------------------------------------------------- the training loop


@njit(
    "Tuple((int32[::1], int32[::1], int64[::1]))"
    "(int32[::1], int64[::1], int64[::1], int32[::1], int64[::1], int64, int64, boolean)",
    cache=True,
)
def _learn(word_symbols, word_offsets, word_counts, token_units, token_offsets, num_merges, min_frequency, overwrite):
    n_positions = word_symbols.size
    n_initial = token_offsets.size - 1

    # tokens: spelled units[starts[t]:ends[t]]; merged tokens append their spelling
    n_tokens = n_initial
    max_tokens = n_initial + num_merges
    starts = np.empty(max_tokens, dtype=np.int64)
    ends = np.empty(max_tokens, dtype=np.int64)
    starts[:n_initial] = token_offsets[:-1]
    ends[:n_initial] = token_offsets[1:]
    units = token_units.copy()
    n_units = units.size

    # positions: symbol (-1 once merged away), the next live position of its word (-1: none), the
    # count of its word (a merge reads it at the position, not through the word: one random access
    # less per occurrence; a count beyond int32 is stored as -1 - word, read from word_counts),
    # pair starting here (-1: none)
    symbol = word_symbols if overwrite else word_symbols.copy()
    next_ = np.empty(n_positions, dtype=np.int32)
    weight_at = np.empty(n_positions, dtype=np.int32)
    pair_at = np.full(n_positions, -1, dtype=np.int32)

    # pairs: tokens, count, occurrence slice; (left << 32 | right) -> pair via an open-addressing table
    capacity = 1024
    lefts = np.empty(capacity, dtype=np.int32)
    rights = np.empty(capacity, dtype=np.int32)
    pair_counts = np.zeros(capacity, dtype=np.int64)
    keys = np.full(2 * capacity, _NO_KEY, dtype=np.int64)
    values = np.empty(2 * capacity, dtype=np.int32)
    # few initial tokens (the 256 bytes of byte-level BPE): a direct table of every (left, right)
    # instead of the hash table, 256 KB that stay in cache where the hash table's probes miss it
    direct_size = n_initial * n_initial if n_initial * n_initial <= _DIRECT_LIMIT else 0
    direct = np.full(max(direct_size, 1), -1, dtype=np.int32)
    n_pairs = 0

    # initial scan: link positions, find every pair (pair_at is its record of the occurrences, in
    # position order; no separate record arrays of the size of the text)
    n_words = word_counts.size
    n_records = 0
    word = 0
    while True:
        word, n_pairs, n_records = _scan_words(symbol, word_offsets, word_counts, next_, weight_at, pair_at,
                                               n_initial, direct_size, direct, keys, values, lefts, rights,
                                               pair_counts, word, n_pairs, n_records)  # fmt: skip
        if word == n_words:
            break
        needed = n_pairs + word_offsets[word + 1] - word_offsets[word]  # room for that word's pairs
        lefts = _grown(lefts, needed)
        rights = _grown(rights, needed)
        pair_counts = _grown(pair_counts, needed)
        while not direct_size and 2 * needed > keys.size:
            keys, values = _rehashed(keys, values, 2 * keys.size)
    occ_start = np.empty(lefts.size, dtype=np.int64)
    occ_len = np.zeros(lefts.size, dtype=np.int64)
    keys = np.empty(1, dtype=np.int64)  # the pair tables are done with: freed before occ is made
    values = np.empty(1, dtype=np.int32)
    direct = np.empty(1, dtype=np.int32)
    occ = np.empty(max(n_records, 16), dtype=np.int32)
    occ_size = _group_positions(pair_at, n_pairs, occ, occ_start, occ_len)
    record_pairs = np.empty(16, dtype=np.int32)
    record_positions = np.empty(16, dtype=np.int32)

    # A pair below the threshold can never be merged (its count only falls), so it never enters the
    # heap: in Zipf-distributed text most pairs occur once, and leaving them out shrinks every heap
    # operation.  The initial heap is built bottom-up (Floyd), in linear time.
    threshold = max(min_frequency, 1)
    heap_counts = np.empty(max(n_pairs, 16), dtype=np.int64)
    heap_pairs = np.empty(max(n_pairs, 16), dtype=np.int32)
    heap_size = 0
    for pair in range(n_pairs):
        if pair_counts[pair] >= threshold:
            heap_counts[heap_size] = pair_counts[pair]
            heap_pairs[heap_size] = pair
            heap_size += 1
    for i in range(heap_size // 2 - 1, -1, -1):
        _sift_down(
            heap_counts, heap_pairs, heap_size, i, heap_counts[i], heap_pairs[i], lefts, rights, units, starts, ends
        )

    # Every pair a merge creates holds its new token, which no earlier pair holds, so the pairs of one
    # merge are found by their other token alone: (x, new) in pair_with_left[x], (new, y) in
    # pair_with_right[y], valid when the stamp is the new token.  (new, new) is always found on the
    # left: the occurrences are merged left to right, so the symbol after one is never new yet.
    pair_with_left = np.empty(max_tokens, dtype=np.int32)
    pair_with_right = np.empty(max_tokens, dtype=np.int32)
    pair_with_left_stamp = np.full(max_tokens, -1, dtype=np.int32)
    pair_with_right_stamp = np.full(max_tokens, -1, dtype=np.int32)

    merged_lefts = np.empty(num_merges, dtype=np.int32)
    merged_rights = np.empty(num_merges, dtype=np.int32)
    merged_counts = np.empty(num_merges, dtype=np.int64)
    n_merges = 0
    while n_merges < num_merges and heap_size > 0:
        count, pair = heap_counts[0], heap_pairs[0]
        current = pair_counts[pair]
        if current != count:  # stale entry: counts only fall, so re-rank it with its current count
            if current >= threshold:
                # in place: sifted down from the top, where it is (one sift instead of a pop, which
                # sifts the last leaf down the whole heap, and a push); the pairs popped are the same,
                # since each pair has one entry and entries are totally ordered
                _sift_down(heap_counts, heap_pairs, heap_size, 0, current, pair, lefts, rights, units, starts, ends)
            else:
                _heap_pop(heap_counts, heap_pairs, heap_size, lefts, rights, units, starts, ends)
                heap_size -= 1
            continue
        _heap_pop(heap_counts, heap_pairs, heap_size, lefts, rights, units, starts, ends)
        heap_size -= 1
        if count < min_frequency:
            break

        left, right, new = lefts[pair], rights[pair], n_tokens
        merged_lefts[n_merges], merged_rights[n_merges], merged_counts[n_merges] = left, right, count
        n_merges += 1
        n_tokens += 1
        # spell the new token
        left_len, right_len = ends[left] - starts[left], ends[right] - starts[right]
        units = _grown(units, n_units + left_len + right_len)
        starts[new] = n_units
        units[n_units : n_units + left_len] = units[starts[left] : ends[left]]
        units[n_units + left_len : n_units + left_len + right_len] = units[starts[right] : ends[right]]
        n_units += left_len + right_len
        ends[new] = n_units

        # room for the new pairs: at most two per occurrence, and at most one (x, new) per left
        # neighbour x and one (new, y) per right neighbour y (the stamps below), so at most
        # 2 * n_tokens; the second bound keeps a merge of many occurrences from reserving room for
        # pairs that cannot exist (on 8 MB of text the first merge alone would reserve a million)
        begin, n_occ = occ_start[pair], occ_len[pair]
        first_new_pair = n_pairs
        needed = n_pairs + 2 * min(n_occ, n_tokens)
        lefts = _grown(lefts, needed)
        rights = _grown(rights, needed)
        pair_counts = _grown(pair_counts, needed)
        occ_start = _grown(occ_start, needed)
        occ_len = _grown(occ_len, needed)
        record_pairs = _grown(record_pairs, 2 * n_occ)
        record_positions = _grown(record_positions, 2 * n_occ)
        n_records = 0

        for k in range(begin, begin + n_occ):
            # the occurrences are listed: fetch the lines of the one _PREFETCH_AHEAD on while this one
            # is merged (the positions are scattered over the text, so each is a cache miss; ahead of
            # time they overlap: on the 8 MB real text 29% less kernel time for byte-bpe, 10% for char-bpe)
            if k + _PREFETCH_AHEAD < begin + n_occ:
                ahead = occ[k + _PREFETCH_AHEAD]
                prefetch(pair_at, ahead)
                prefetch(weight_at, ahead)
                prefetch(symbol, ahead - 1)  # and the position before, read to find its left neighbour
                prefetch(next_, ahead - 1)
            p = occ[k]
            if pair_at[p] != pair:  # stale: a neighbour merged since it was recorded
                continue
            q = next_[p]
            after = next_[q]
            # the live position before p: back over the rest of the token before it (a few merged-away
            # positions).  At the start of a word this steps into the word before (over the rest of its
            # last token) or off the array; the live position found is p's neighbour iff it links to p.
            before = p - 1
            while before >= 0 and symbol[before] < 0:
                before -= 1
            if before >= 0 and next_[before] != p:
                before = -1
            weight = np.int64(weight_at[p])
            if weight < 0:
                weight = word_counts[-1 - weight]
            pair_counts[pair] -= weight
            if before >= 0:
                pair_counts[pair_at[before]] -= weight
                x = symbol[before]
                if pair_with_left_stamp[x] != new:
                    pair_with_left_stamp[x] = new
                    pair_with_left[x] = n_pairs
                    lefts[n_pairs], rights[n_pairs], pair_counts[n_pairs], occ_len[n_pairs] = x, new, 0, 0
                    n_pairs += 1
                created = pair_with_left[x]
                pair_counts[created] += weight
                pair_at[before] = created
                record_pairs[n_records], record_positions[n_records] = created, before
                n_records += 1
            if after >= 0:
                pair_counts[pair_at[q]] -= weight
                y = symbol[after]
                if pair_with_right_stamp[y] != new:
                    pair_with_right_stamp[y] = new
                    pair_with_right[y] = n_pairs
                    lefts[n_pairs], rights[n_pairs], pair_counts[n_pairs], occ_len[n_pairs] = new, y, 0, 0
                    n_pairs += 1
                created = pair_with_right[y]
                pair_counts[created] += weight
                pair_at[p] = created
                record_pairs[n_records], record_positions[n_records] = created, p
                n_records += 1
            else:
                pair_at[p] = -1
            symbol[p] = new
            symbol[q] = -1
            pair_at[q] = -1
            next_[p] = after

        occ_len[pair] = 0  # every occurrence is merged; the pair can never reappear
        if occ_size + n_records > occ.size:
            # full: first drop the stale entries; grow only if less than a quarter would then be
            # free, to a third more than needed.  Not to twice: the first merges fill it (it starts
            # exactly full), and while it grows both copies are held, at the peak of the training's
            # memory; later merges mostly leave stale entries, which the compactions drop.
            occ_size = _compacted(occ, pair_at, first_new_pair, occ_start, occ_len)
            if 4 * (occ_size + n_records) > 3 * occ.size:
                bigger = np.empty((occ_size + n_records) * 4 // 3 + 16, dtype=np.int32)
                bigger[:occ_size] = occ[:occ_size]
                occ = bigger
        occ_size = _group_by_pair(
            record_pairs, record_positions, n_records, first_new_pair, n_pairs, occ, occ_size, occ_start, occ_len
        )
        heap_counts = _grown(heap_counts, heap_size + n_pairs - first_new_pair)
        heap_pairs = _grown(heap_pairs, heap_size + n_pairs - first_new_pair)
        for created in range(first_new_pair, n_pairs):
            if pair_counts[created] >= threshold:
                _heap_push(
                    heap_counts,
                    heap_pairs,
                    heap_size,
                    pair_counts[created],
                    created,
                    lefts,
                    rights,
                    units,
                    starts,
                    ends,
                )
                heap_size += 1

    return merged_lefts[:n_merges], merged_rights[:n_merges], merged_counts[:n_merges]
