"""The compiled core of batch encoding with a BPE merge list (``bpe.models.batch_encode``).

Per pre-token (cut by the compiled matchers of ``bpe.kernels.count_kernel``): its base symbols (UTF-8
bytes, or characters through a lookup table plus an end-of-word symbol), then the merges applied by
rank exactly as ``MergeTokenizer._apply_merges`` does (the lowest-ranked adjacent pair, leftmost
first, until no pair has a rank; long pre-tokens with a heap of pair ranks, O(n log n)).  Each
distinct pre-token is merged once: a hash table (the counting
table of ``bpe.kernels.count_kernel``, whose records keep the ids instead of a count) caches its ids across
calls.  ``json_lines`` writes ``[id, id, ...]`` per text, byte for byte what ``json.dumps`` writes.
"""

from __future__ import annotations

import numpy as np

from bpe.kernels._numba import njit, types
from bpe.kernels.count_kernel import (
    _HASH_MULTIPLIER,
    _RECORD,
    _TABLE,
    _TEXT,
    _grown_int64,
    _grown_uint32,
    _lookup,
    _match_end,
    _rehashed,
)

_NO_RANK = np.int64(1) << 62
_EMPTY = np.int64(-1)
_IDS = types.int32[::1]


def empty_cache() -> tuple[np.ndarray, ...]:
    """An empty cache for ``encode_texts``: a counting table (with a third size, the ids used) and its ids."""
    from bpe.kernels.count_kernel import empty_table

    units, records, slots, _ = empty_table()
    return units, records, slots, np.zeros(3, dtype=np.int64), np.empty(1 << 12, dtype=np.int32)


@njit(types.UniTuple(types.int64[::1], 2)(types.int32[::1], types.int32[::1], types.int64), cache=True)
def rank_table(lefts, rights, first_merge_id):
    """An open-addressing table ``(left << 32 | right) -> id of the merged token`` (the rank)."""
    capacity = 16
    while capacity < 2 * lefts.size:
        capacity *= 2
    keys = np.full(capacity, _EMPTY, dtype=np.int64)
    values = np.empty(capacity, dtype=np.int64)
    mask = capacity - 1
    for k in range(lefts.size):
        key = (np.int64(lefts[k]) << 32) | rights[k]
        slot = np.int64((np.uint64(key) * _HASH_MULTIPLIER) >> np.uint64(24)) & mask
        while keys[slot] != _EMPTY:
            slot = (slot + 1) & mask
        keys[slot] = key
        values[slot] = first_merge_id + k
    return keys, values


@njit(inline="always")
def _rank(keys, values, left, right):
    key = (np.int64(left) << 32) | right
    mask = keys.size - 1
    slot = np.int64((np.uint64(key) * _HASH_MULTIPLIER) >> np.uint64(24)) & mask
    while True:
        found = keys[slot]
        if found == key:
            return values[slot]
        if found == _EMPTY:
            return _NO_RANK
        slot = (slot + 1) & mask


_HEAP_FROM = 48  # above this many symbols a pre-token is merged with a heap (``_merged_heap``)


@njit(inline="always")
def _merged(symbols, n, keys, values):
    """Apply the merges by rank to ``symbols[:n]`` in place; returns the new length."""
    if n > _HEAP_FROM:
        return _merged_heap(symbols, n, keys, values)
    while n > 1:
        best = _NO_RANK
        at = -1
        for p in range(n - 1):
            rank = _rank(keys, values, symbols[p], symbols[p + 1])
            if rank < best:
                best = rank
                at = p
        if at < 0:
            break
        n = _merge_at(symbols, n, at, best)
    return n


@njit(inline="always")
def _merge_at(symbols, n, at, token):
    """Replace the pair ``symbols[at:at + 2]`` by ``token`` in place; returns the new length."""
    symbols[at] = token
    for p in range(at + 1, n - 1):
        symbols[p] = symbols[p + 1]
    return n - 1


@njit
def _heap_push(heap, size, entry):
    heap[size] = entry
    child = size
    while child > 0:
        parent = (child - 1) >> 1
        if heap[parent] <= heap[child]:
            break
        heap[parent], heap[child] = heap[child], heap[parent]
        child = parent
    return size + 1


@njit
def _heap_pop(heap, size):
    """Removes the smallest entry (returned with the new size)."""
    top = heap[0]
    size -= 1
    heap[0] = heap[size]
    parent = 0
    while True:
        child = 2 * parent + 1
        if child >= size:
            break
        if child + 1 < size and heap[child + 1] < heap[child]:
            child += 1
        if heap[parent] <= heap[child]:
            break
        heap[parent], heap[child] = heap[child], heap[parent]
        parent = child
    return top, size


@njit
def _merged_heap(symbols, n, keys, values):
    """``_merged`` in O(n log n), as ``MergeTokenizer._apply_merges_heap``: a heap of ``rank << 32 |
    position`` (ranks and positions are below 2**31), smallest rank, then leftmost, first; stale entries
    are skipped when popped."""
    following = np.arange(1, n + 1, dtype=np.int64)
    preceding = np.arange(-1, n - 1, dtype=np.int64)
    alive = np.ones(n, dtype=np.bool_)
    heap = np.empty(3 * n, dtype=np.int64)  # n - 1 pairs at first, at most two new ones per merge
    size = 0
    for p in range(n - 1):
        rank = _rank(keys, values, symbols[p], symbols[p + 1])
        if rank != _NO_RANK:
            size = _heap_push(heap, size, (rank << 32) | p)
    while size > 0:
        entry, size = _heap_pop(heap, size)
        rank = entry >> 32
        p = entry & 0xFFFFFFFF
        q = following[p]
        if not alive[p] or q >= n or _rank(keys, values, symbols[p], symbols[q]) != rank:
            continue
        symbols[p] = rank
        alive[q] = False
        after = following[q]
        following[p] = after
        if after < n:
            preceding[after] = p
            right_rank = _rank(keys, values, rank, symbols[after])
            if right_rank != _NO_RANK:
                size = _heap_push(heap, size, (right_rank << 32) | p)
        before = preceding[p]
        if before >= 0:
            left_rank = _rank(keys, values, symbols[before], rank)
            if left_rank != _NO_RANK:
                size = _heap_push(heap, size, (left_rank << 32) | before)
    kept = 0
    for p in range(n):
        if alive[p]:
            symbols[kept] = symbols[p]
            kept += 1
    return kept


@njit(inline="always")
def _base_symbols(text, i, j, symbols, first_byte_id, plain, final, end_id):
    """Base symbols of pre-token ``text[i:j]`` into ``symbols``: UTF-8 bytes when ``first_byte_id`` >= 0,
    else ``plain``/``final`` lookups plus ``end_id`` (when >= 0); returns their number."""
    n = 0
    for k in range(i, j):
        c = text[k]
        if first_byte_id >= 0:
            if c < 0x80:
                symbols[n] = first_byte_id + c
                n += 1
            elif c < 0x800:
                symbols[n] = first_byte_id + (0xC0 | (c >> 6))
                symbols[n + 1] = first_byte_id + (0x80 | (c & 0x3F))
                n += 2
            elif c < 0x10000:
                symbols[n] = first_byte_id + (0xE0 | (c >> 12))
                symbols[n + 1] = first_byte_id + (0x80 | ((c >> 6) & 0x3F))
                symbols[n + 2] = first_byte_id + (0x80 | (c & 0x3F))
                n += 3
            else:
                symbols[n] = first_byte_id + (0xF0 | (c >> 18))
                symbols[n + 1] = first_byte_id + (0x80 | ((c >> 12) & 0x3F))
                symbols[n + 2] = first_byte_id + (0x80 | ((c >> 6) & 0x3F))
                symbols[n + 3] = first_byte_id + (0x80 | (c & 0x3F))
                n += 4
        else:
            symbols[n] = final[c] if k == j - 1 else plain[c]
            n += 1
    if first_byte_id < 0 and end_id >= 0:
        symbols[n] = end_id
        n += 1
    return n


@njit(
    types.Tuple((*_TABLE, _IDS, _IDS, types.int64[::1]))(
        *_TABLE,
        _IDS,
        _TEXT,
        types.int64[::1],
        types.uint8[::1],
        types.int64,
        types.int64,
        types.int32[::1],
        types.int32[::1],
        types.int64,
        types.int64[::1],
        types.int64[::1],
    ),
    cache=True,
    nogil=True,
)
def encode_texts(
    units,
    records,
    slots,
    sizes,
    cached_ids,
    text,
    text_ends,
    classes,
    pattern,
    first_byte_id,
    plain,
    final,
    end_id,
    rank_keys,
    rank_values,
):
    """Ids of every text, end to end, and how many each text has.  The cache (a counting table whose
    record ``(start, length, ids start, ids length)`` points into ``cached_ids``) is returned, grown."""
    n, n_units, n_ids = sizes[0], sizes[1], sizes[2]
    out = np.empty(max(16, text.size), dtype=np.int32)
    per_text = np.zeros(text_ends.size, dtype=np.int64)
    n_out = 0
    symbols = np.empty(64, dtype=np.int32)
    begin = 0
    for t in range(text_ends.size):
        end = text_ends[t]
        i = begin
        while i < end:
            j = _match_end(text, i, end, classes, pattern)
            mask = slots.size - 1
            found, h, tag, slot = _lookup(units, records, slots, mask, text, i, j)
            if found < 0:  # merge this pre-token once and cache its ids
                if symbols.size < 4 * (j - i) + 1:
                    symbols = np.empty(8 * (j - i) + 1, dtype=np.int32)
                length = _merged(
                    symbols,
                    _base_symbols(text, i, j, symbols, first_byte_id, plain, final, end_id),
                    rank_keys,
                    rank_values,
                )
                if _RECORD * (n + 1) > records.size:
                    records = _grown_int64(records, 2 * records.size)
                if n_units + (j - i) > units.size:
                    units = _grown_uint32(units, max(2 * units.size, n_units + (j - i)))
                if n_ids + length > cached_ids.size:
                    bigger = np.empty(max(2 * cached_ids.size, n_ids + length), dtype=np.int32)
                    bigger[:n_ids] = cached_ids[:n_ids]
                    cached_ids = bigger
                if 2 * (n + 1) > slots.size:
                    slots = _rehashed(records, n, 2 * slots.size)
                    mask = slots.size - 1
                    slot = np.int64((h * _HASH_MULTIPLIER) >> np.uint64(24)) & mask
                    while slots[slot] >= 0:
                        slot = (slot + 1) & mask
                units[n_units : n_units + (j - i)] = text[i:j]
                cached_ids[n_ids : n_ids + length] = symbols[:length]
                record = _RECORD * n
                records[record] = n_units
                records[record + 1] = j - i
                records[record + 2] = n_ids
                records[record + 3] = np.int64(h)
                slots[slot] = tag | n
                found = n
                n += 1
                n_units += j - i
                n_ids += length
            first = records[_RECORD * found + 2]
            last = records[_RECORD * (found + 1) + 2] if found + 1 < n else n_ids  # entries are in order
            count = last - first
            if n_out + count > out.size:
                bigger = np.empty(2 * out.size + count, dtype=np.int32)
                bigger[:n_out] = out[:n_out]
                out = bigger
            out[n_out : n_out + count] = cached_ids[first : first + count]
            n_out += count
            per_text[t] += count
            i = j
        begin = end
    sizes[0], sizes[1], sizes[2] = n, n_units, n_ids
    return units, records, slots, sizes, cached_ids, out[:n_out].copy(), per_text


@njit(
    types.Tuple((_IDS, types.int64[::1]))(_IDS, types.int64[::1], types.int64[::1], types.int64[::1]),
    cache=True,
    nogil=True,
)
def merge_words(symbols, offsets, rank_keys, rank_values):
    """The merges applied by rank to every word ``symbols[offsets[k]:offsets[k + 1]]`` of base symbols: the
    tokens of all words end to end, and the offsets where each word's tokens start (one more than words)."""
    out = np.empty(symbols.size, dtype=np.int32)  # merging only shortens a word
    out_offsets = np.zeros(offsets.size, dtype=np.int64)
    buffer = np.empty(64, dtype=np.int32)
    n_out = 0
    for k in range(offsets.size - 1):
        n = offsets[k + 1] - offsets[k]
        if buffer.size < n:
            buffer = np.empty(2 * n, dtype=np.int32)
        buffer[:n] = symbols[offsets[k] : offsets[k + 1]]
        length = _merged(buffer, n, rank_keys, rank_values)
        out[n_out : n_out + length] = buffer[:length]
        n_out += length
        out_offsets[k + 1] = n_out
    return out[:n_out].copy(), out_offsets


@njit(types.uint8[::1](types.int32[::1], types.int64[::1]), cache=True, nogil=True)
def json_lines(ids, per_text):
    """``json.dumps(list_of_ids) + "\\n"`` for every text, as UTF-8 bytes end to end."""
    out = np.empty(12 * ids.size + 3 * per_text.size + 16, dtype=np.uint8)  # an id has at most 10 digits
    digits = np.empty(20, dtype=np.uint8)
    n = 0
    k = 0
    for t in range(per_text.size):
        out[n] = 0x5B  # [
        n += 1
        for m in range(per_text[t]):
            if m:
                out[n] = 0x2C  # ,
                out[n + 1] = 0x20
                n += 2
            value = ids[k]
            k += 1
            if value < 0:
                out[n] = 0x2D  # -
                n += 1
                value = -value
            d = 0
            while True:
                digits[d] = 0x30 + value % 10
                d += 1
                value //= 10
                if value == 0:
                    break
            for q in range(d - 1, -1, -1):
                out[n] = digits[q]
                n += 1
        out[n] = 0x5D  # ]
        out[n + 1] = 0x0A
        n += 2
    return out[:n].copy()


# -- BPE-dropout ------------------------------------------------------------------------------------
# Python's ``random.Random`` (MT19937, Matsumoto & Nishimura 1998, seeded by ``init_by_array`` as CPython
# does) in compiled code, so that a sampled encoding draws exactly the numbers ``random.Random(seed).random()``
# gives.  The state is 624 words and the index of the next one (``_MT_N``), in an int64 array; every value is
# below 2**32 and every product below 2**63, so int64 arithmetic masked to 32 bits is the C code's uint32.
_MT_N = 624
_MT_M = 397
_MASK32 = 0xFFFFFFFF


@njit(inline="always")
def _mt_seed(state, key):
    """``state`` as CPython's ``random.seed(n)`` leaves it for the integer whose big-endian bytes are ``key``
    (``init_genrand(19650218)``, then ``init_by_array`` with the integer's little-endian 32-bit words)."""
    first = 0
    while first < key.size and key[first] == 0:
        first += 1
    length = key.size - first
    words = max(1, (length + 3) // 4)
    init_key = np.zeros(words, dtype=np.int64)
    for i in range(length):  # byte i counted from the least significant end
        init_key[i // 4] |= np.int64(key[key.size - 1 - i]) << (8 * (i % 4))
    state[0] = 19650218
    for i in range(1, _MT_N):
        state[i] = (1812433253 * (state[i - 1] ^ (state[i - 1] >> 30)) + i) & _MASK32
    i, j = 1, 0
    for _ in range(max(_MT_N, words)):
        state[i] = ((state[i] ^ ((state[i - 1] ^ (state[i - 1] >> 30)) * 1664525)) + init_key[j] + j) & _MASK32
        i += 1
        j += 1
        if i >= _MT_N:
            state[0] = state[_MT_N - 1]
            i = 1
        if j >= words:
            j = 0
    for _ in range(_MT_N - 1):
        state[i] = ((state[i] ^ ((state[i - 1] ^ (state[i - 1] >> 30)) * 1566083941)) - i) & _MASK32
        i += 1
        if i >= _MT_N:
            state[0] = state[_MT_N - 1]
            i = 1
    state[0] = 0x80000000
    state[_MT_N] = _MT_N


@njit(inline="always")
def _mt_twist(state, kk, other):
    y = (state[kk] & 0x80000000) | (state[(kk + 1) % _MT_N] & 0x7FFFFFFF)
    state[kk] = state[other] ^ (y >> 1) ^ (0x9908B0DF if y & 1 else 0)


@njit(inline="always")
def _mt_next(state):
    """The next 32-bit output (``genrand_uint32``)."""
    if state[_MT_N] >= _MT_N:
        for kk in range(_MT_N - _MT_M):
            _mt_twist(state, kk, kk + _MT_M)
        for kk in range(_MT_N - _MT_M, _MT_N):
            _mt_twist(state, kk, kk + _MT_M - _MT_N)
        state[_MT_N] = 0
    y = state[state[_MT_N]]
    state[_MT_N] += 1
    y ^= y >> 11
    y ^= (y << 7) & 0x9D2C5680
    y ^= (y << 15) & 0xEFC60000
    return y ^ (y >> 18)


@njit(inline="always")
def _mt_random(state):
    """``random.random()``: 53 random bits from two outputs, in [0, 1)."""
    a = _mt_next(state) >> 5
    b = _mt_next(state) >> 6
    return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0)


@njit(inline="always")
def _sampled(symbols, n, keys, values, state, dropout):
    """``_merged`` with BPE-dropout: every pair that has a rank draws from ``state`` each step, and only pairs
    whose draw is at least ``dropout`` may merge; returns the new length."""
    while n > 1:
        best = _NO_RANK
        at = -1
        for p in range(n - 1):
            rank = _rank(keys, values, symbols[p], symbols[p + 1])
            if rank != _NO_RANK and _mt_random(state) >= dropout and rank < best:
                best = rank
                at = p
        if at < 0:
            break
        n = _merge_at(symbols, n, at, best)
    return n


@njit(
    types.Tuple((_IDS, types.int64[::1]))(_IDS, types.int64[::1], types.int64[::1], types.uint8[::1],
                                          types.int64[::1], types.int64[::1], types.int64[::1], types.float64),
    cache=True,
    nogil=True,
)  # fmt: skip
def sample_words(symbols, offsets, text_offsets, seeds, seed_offsets, rank_keys, rank_values, dropout):
    """BPE-dropout (Provilkov et al. 2020) on every word ``symbols[offsets[k]:offsets[k + 1]]`` of base symbols,
    as ``MergeTokenizer._sample_pretoken`` does: each step, every adjacent pair that has a rank draws a number,
    and the lowest-ranked pair whose draw is at least ``dropout`` merges (leftmost first); no such pair ends
    the word.  Text t holds words ``text_offsets[t]:text_offsets[t + 1]`` and draws from one stream, seeded by
    the integer whose big-endian bytes are ``seeds[seed_offsets[t]:seed_offsets[t + 1]]`` (``random.Random``'s
    seeding of a string).  Returns the tokens end to end and where each word's tokens start."""
    out = np.empty(symbols.size, dtype=np.int32)
    out_offsets = np.zeros(offsets.size, dtype=np.int64)
    buffer = np.empty(64, dtype=np.int32)
    state = np.empty(_MT_N + 1, dtype=np.int64)
    n_out = 0
    for t in range(text_offsets.size - 1):
        _mt_seed(state, seeds[seed_offsets[t] : seed_offsets[t + 1]])
        for k in range(text_offsets[t], text_offsets[t + 1]):
            n = offsets[k + 1] - offsets[k]
            if buffer.size < n:
                buffer = np.empty(2 * n, dtype=np.int32)
            buffer[:n] = symbols[offsets[k] : offsets[k + 1]]
            n = _sampled(buffer, n, rank_keys, rank_values, state, dropout)
            out[n_out : n_out + n] = buffer[:n]
            n_out += n
            out_offsets[k + 1] = n_out
    return out[:n_out].copy(), out_offsets
