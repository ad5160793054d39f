"""The compiled core of pre-token counting: cut text into pre-tokens and count the distinct ones.

Pre-tokenizing 100 MB with the ``regex`` module and counting with ``collections.Counter`` takes tens of
seconds in Python; here one pass over the code points does both (numba, ``nogil``, so two threads
count two chunks at once).  Text arrives as UTF-32 code points (``str.encode("utf-32-le")``) with
the end of every text, since pre-tokens never cross texts.

**Pre-tokenizers compiled here**: ``gpt2``, ``unicode``, ``whitespace`` and ``none`` (the others,
``cl100k`` and ``o200k``, are counted with ``regex``; see ``bpe.training.counts``).  Each ``_match_end``
branch is the hand-written matcher of the pattern in ``bpe.pipeline.pretokenizers``, alternative by
alternative; what is a letter, mark, number or whitespace is decided by the ``regex`` module itself
(``bpe.training.counts.classify``: ``\\p{L}``, ``\\p{M}``, ``\\p{N}``, ``\\s``) and passed in as a table of
class bits per code point, so both always agree on the Unicode version.  Differential tests compare
the cuts with ``regex.findall`` on every test language and on random strings of tricky characters.

**Counting**: an open-addressing hash table of the distinct pre-tokens (FNV-1a hash of the code
points, linear probing), their code points laid end to end in one arena.  A table is a tuple of
arrays ``(units, records, slots, sizes)``: pre-token ``i`` is ``units[start:start + length]`` seen
``count`` times, where ``records[4 * i : 4 * i + 4]`` is ``(start, length, count, hash)`` (one
record in half a cache line: a lookup touches its slot, its record and its units); a slot holds
``hash >> 33 << 32 | i`` (-1 when empty), so most mismatches are rejected without leaving the slot
array; ``sizes`` holds the number of distinct pre-tokens and of arena units.  ``count_into`` adds
to a table and returns it (grown when needed); merging two tables is counting the arena of one as
whole pre-tokens (pattern ``NONE``) weighted by its counts.  Distinct pre-tokens keep the order of
their first occurrence.

**Words for the merge kernel**: ``utf8_words`` (byte-bpe) and ``symbol_words`` (char-bpe) turn the
counted pre-tokens into the flat arrays of ``bpe.kernels.merge_kernel.learn_merges_from_arrays`` without a
Python object per pre-token; ``character_stats`` gives what a char-bpe or char alphabet needs.
"""

from __future__ import annotations

import numpy as np

from bpe.kernels._numba import njit, types

# class bits per code point
LETTER, MARK, NUMBER, SPACE, KNOWN = 1, 2, 4, 8, 16
# compiled pre-tokenizers (``bpe.training.counts.COMPILED_PATTERNS`` maps names to these)
GPT2, UNICODE, WHITESPACE, NONE = 1, 2, 3, 4

_APOSTROPHE, _BLANK = 0x27, 0x20
_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)
_HASH_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing of the slot

_TABLE = (types.uint32[::1], types.int64[::1], types.int64[::1], types.int64[::1])
_RECORD = 4  # start, length, count, hash
_INDEX_MASK = np.int64(0xFFFFFFFF)
_BATCH = 1 << 16  # code points counted per call of _count_texts (the table has room for them first)
#: text arrives read-only (``np.frombuffer`` over the encoded bytes, not copied)
_TEXT = types.Array(types.uint32, 1, "C", readonly=True)


def empty_table(capacity: int = 1 << 12) -> tuple[np.ndarray, ...]:
    """A table with no pre-tokens and room for ``capacity`` (rounded up to a power of two) before it grows."""
    capacity = 1 << max(int(capacity) - 1, 1).bit_length()
    return (
        np.empty(8 * capacity, dtype=np.uint32),
        np.zeros(_RECORD * capacity, dtype=np.int64),
        np.full(2 * capacity, -1, dtype=np.int64),
        np.zeros(2, dtype=np.int64),
    )


def table_arrays(table: tuple[np.ndarray, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The arena, the offsets (``n + 1``) and the counts of a table's pre-tokens, trimmed to size."""
    units, records, _, sizes = table
    n = int(sizes[0])
    fields = records[: _RECORD * n].reshape(n, _RECORD)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(fields[:, 1], out=offsets[1:])
    if n and not np.array_equal(fields[:, 0], offsets[:-1]):  # never: the arena is filled in order
        raise AssertionError("pre-token arena out of order")
    return units[: int(sizes[1])].copy(), offsets, fields[:, 2].copy()


@njit(types.uint32[::1](_TEXT, types.uint8[::1]), cache=True, nogil=True)
def unknown_code_points(text, classes):
    """The distinct code points of ``text`` not classified yet (marked so each is returned once)."""
    # room for the worst case, allocated once (untouched pages cost nothing): an array reassigned
    # inside the loop would make numba count references on every code point, 10 times the scan
    found = np.empty(min(text.size, classes.size), dtype=np.uint32)
    n = 0
    for c in text:
        if classes[c] == 0:
            classes[c] = 0x80  # pending: the caller classifies it
            found[n] = c
            n += 1
    return found[:n].copy()


@njit(inline="always")  # inlined into the callers: a call per run would double the scanning time
def _run(text, i, end, classes, wanted, excluded):
    """End of the run from ``i`` of code points whose class has a bit of ``wanted`` and none of
    ``excluded`` (``wanted`` 0: any class)."""
    while i < end:
        bits = classes[text[i]]
        if bits & excluded != 0 or (wanted != 0 and bits & wanted == 0):
            break
        i += 1
    return i


@njit(inline="always")
def _match_end(text, i, end, classes, pattern):
    """End of the pre-token that starts at ``i`` (its text ends at ``end``)."""
    if pattern == NONE:
        return end
    bits = classes[text[i]]
    # a space followed by a non-space may start the next run: its class decides which
    spaced = text[i] == _BLANK and i + 1 < end and classes[text[i + 1]] & SPACE == 0
    if spaced:
        bits = classes[text[i + 1]]
    start = i + 1 if spaced else i
    if pattern == GPT2:
        # '(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s
        if text[i] == _APOSTROPHE and i + 1 < end:
            n = text[i + 1]
            if n == 0x73 or n == 0x64 or n == 0x6D or n == 0x74:  # s d m t
                return i + 2
            if i + 2 < end:
                m = text[i + 2]
                if (n == 0x6C and m == 0x6C) or (n == 0x76 and m == 0x65) or (n == 0x72 and m == 0x65):  # ll ve re
                    return i + 3
        if bits & LETTER != 0:
            return _run(text, start, end, classes, LETTER, 0)
        if bits & NUMBER != 0:
            return _run(text, start, end, classes, NUMBER, 0)
        if bits & SPACE == 0:
            return _run(text, start, end, classes, 0, SPACE | LETTER | NUMBER)
        # whitespace: \s++$ (the run reaches the end) | \s+(?!\S) (the run but its last) | \s
        k = _run(text, i, end, classes, SPACE, 0)
        if k == end:
            return end
        return k - 1 if k - i >= 2 else i + 1
    if pattern == UNICODE:
        # ' ?[\p{L}\p{M}\p{N}]++| ?[^\s\p{L}\p{M}\p{N}]++|\s+?(?=\S| \S)|\s+'
        if bits & (LETTER | MARK | NUMBER) != 0:
            return _run(text, start, end, classes, LETTER | MARK | NUMBER, 0)
        if bits & SPACE == 0:
            return _run(text, start, end, classes, 0, SPACE | LETTER | MARK | NUMBER)
    elif bits & SPACE == 0:  # WHITESPACE: ' ?\S++|\s+?(?=\S| \S)|\s+'
        return _run(text, start, end, classes, 0, SPACE)
    # unicode and whitespace: the shortest whitespace run followed by a non-space or by " " + non-space;
    # at the end of the text, the whole run
    k = _run(text, i, end, classes, SPACE, 0)
    if k < end and k - i >= 2 and text[k - 1] == _BLANK:
        return k - 1
    return k


@njit("int64[::1](int64[::1], int64, int64)", cache=True, nogil=True)
def _rehashed(records, n, capacity):
    slots = np.full(capacity, -1, dtype=np.int64)
    mask = capacity - 1
    for index in range(n):
        h = np.uint64(records[_RECORD * index + 3])
        slot = np.int64((h * _HASH_MULTIPLIER) >> np.uint64(24)) & mask
        while slots[slot] >= 0:
            slot = (slot + 1) & mask
        slots[slot] = (np.int64(h >> np.uint64(33)) << 32) | index
    return slots


@njit("int64[::1](int64[::1], int64)", cache=True, nogil=True)
def _grown_int64(array, capacity):
    bigger = np.zeros(capacity, dtype=np.int64)
    bigger[: array.size] = array
    return bigger


@njit("uint32[::1](uint32[::1], int64)", cache=True, nogil=True)
def _grown_uint32(array, capacity):
    bigger = np.empty(capacity, dtype=np.uint32)
    bigger[: array.size] = array
    return bigger


@njit(inline="always")
def _lookup(units, records, slots, mask, text, i, j):
    """Find the pre-token ``text[i:j]`` in the open-addressing table: its index (-1 when absent), its
    FNV-1a hash, the tag kept in its slot, and its slot (where it is, or the free slot to put it in)."""
    h = _FNV_OFFSET
    for k in range(i, j):
        h = (h ^ np.uint64(text[k])) * _FNV_PRIME
    tag = np.int64(h >> np.uint64(33)) << 32
    slot = np.int64((h * _HASH_MULTIPLIER) >> np.uint64(24)) & mask
    while True:
        entry = slots[slot]
        if entry < 0:
            return -1, h, tag, slot
        if (entry & ~_INDEX_MASK) == tag:
            index = entry & _INDEX_MASK
            start = records[_RECORD * index]
            if records[_RECORD * index + 1] == j - i:
                same = True
                for k in range(j - i):
                    if units[start + k] != text[i + k]:
                        same = False
                        break
                if same:
                    return index, h, tag, slot
        slot = (slot + 1) & mask


@njit(
    types.UniTuple(types.int64, 2)(
        *_TABLE[:3],
        types.int64,
        types.int64,
        _TEXT,
        types.int64[::1],
        types.int64[::1],
        types.int64,
        types.int64,
        types.uint8[::1],
        types.int64,
    ),
    cache=True,
    nogil=True,
)
def _count_texts(units, records, slots, n, n_units, text, text_ends, weights, first, last, classes, pattern):
    """Count the pre-tokens of texts ``first .. last - 1`` into a table with room for all of them;
    returns the new numbers of distinct pre-tokens and of arena units."""
    mask = slots.size - 1
    for t in range(first, last):
        i = text_ends[t - 1] if t > 0 else 0
        end = text_ends[t]
        weight = weights[t]
        while i < end:
            j = _match_end(text, i, end, classes, pattern)
            found, h, tag, slot = _lookup(units, records, slots, mask, text, i, j)
            if found >= 0:
                records[_RECORD * found + 2] += weight
            else:
                units[n_units : n_units + (j - i)] = text[i:j]
                record = _RECORD * n
                records[record] = n_units
                records[record + 1] = j - i
                records[record + 2] = weight
                records[record + 3] = np.int64(h)
                slots[slot] = tag | n
                n_units += j - i
                n += 1
            i = j
    return n, n_units


@njit(
    types.Tuple(_TABLE)(*_TABLE, _TEXT, types.int64[::1], types.int64[::1], types.uint8[::1], types.int64),
    cache=True,
    nogil=True,
)
def count_into(units, records, slots, sizes, text, text_ends, weights, classes, pattern):
    """Add the pre-tokens of every text to the table; text ``t`` ends at ``text_ends[t]`` and each of
    its pre-tokens counts ``weights[t]`` times.  Returns the (possibly reallocated) table."""
    n, n_units = sizes[0], sizes[1]
    first = 0
    while first < text_ends.size:
        # a batch of texts of about _BATCH code points (at least one text), and room for its worst
        # case, every code point a new pre-token, so that _count_texts never grows the table
        begin = text_ends[first - 1] if first > 0 else 0
        last = first + 1
        while last < text_ends.size and text_ends[last] - begin <= _BATCH:
            last += 1
        length = text_ends[last - 1] - begin
        needed = n + length + 1
        if _RECORD * needed > records.size:
            records = _grown_int64(records, max(2 * records.size, _RECORD * needed))
        if n_units + length > units.size:
            units = _grown_uint32(units, max(2 * units.size, n_units + length))
        if 2 * needed > slots.size:
            capacity = slots.size
            while 2 * needed > capacity:
                capacity *= 2
            slots = _rehashed(records, n, capacity)
        n, n_units = _count_texts(
            units, records, slots, n, n_units, text, text_ends, weights, first, last, classes, pattern
        )
        first = last
    sizes[0], sizes[1] = n, n_units
    return units, records, slots, sizes


# -- from counted pre-tokens to the merge kernel's words -------------------------------------------


@njit(
    types.Tuple((types.int32[::1], types.int64[::1], types.int64[::1]))(
        types.uint32[::1], types.int64[::1], types.int64[::1], types.int64
    ),
    cache=True,
    nogil=True,
)
def utf8_words(units, offsets, counts, first_id):
    """byte-bpe words: the UTF-8 bytes of every pre-token as ids ``first_id + byte``, with their
    offsets and counts; pre-tokens of one byte (no pair to merge) are left out."""
    n = counts.size
    symbols = np.empty(4 * units.size, dtype=np.int32)
    word_offsets = np.zeros(n + 1, dtype=np.int64)
    word_counts = np.empty(n, dtype=np.int64)
    size = 0
    words = 0
    for w in range(n):
        start = size
        for k in range(offsets[w], offsets[w + 1]):
            c = units[k]
            if c < 0x80:
                symbols[size] = first_id + c
                size += 1
            elif c < 0x800:
                symbols[size] = first_id + (0xC0 | (c >> 6))
                symbols[size + 1] = first_id + (0x80 | (c & 0x3F))
                size += 2
            elif c < 0x10000:
                symbols[size] = first_id + (0xE0 | (c >> 12))
                symbols[size + 1] = first_id + (0x80 | ((c >> 6) & 0x3F))
                symbols[size + 2] = first_id + (0x80 | (c & 0x3F))
                size += 3
            else:
                symbols[size] = first_id + (0xF0 | (c >> 18))
                symbols[size + 1] = first_id + (0x80 | ((c >> 12) & 0x3F))
                symbols[size + 2] = first_id + (0x80 | ((c >> 6) & 0x3F))
                symbols[size + 3] = first_id + (0x80 | (c & 0x3F))
                size += 4
        if size - start < 2:
            size = start
            continue
        word_counts[words] = counts[w]
        words += 1
        word_offsets[words] = size
    return symbols[:size].copy(), word_offsets[: words + 1].copy(), word_counts[:words].copy()


@njit(
    types.Tuple((types.int32[::1], types.int64[::1], types.int64[::1]))(
        types.uint32[::1], types.int64[::1], types.int64[::1], types.int32[::1], types.int32[::1], types.int32
    ),
    cache=True,
    nogil=True,
)
def symbol_words(units, offsets, counts, plain_ids, final_ids, end_id):
    """char-bpe words: code point ``c`` is symbol ``plain_ids[c]``, or ``final_ids[c]`` as the last of
    its pre-token, followed by ``end_id`` unless it is -1; a symbol -1 (a character outside the
    alphabet) cuts the pre-token, and the parts of fewer than two symbols are left out."""
    n = counts.size
    capacity = units.size + n
    symbols = np.empty(capacity, dtype=np.int32)
    word_offsets = np.zeros(capacity + 1, dtype=np.int64)
    word_counts = np.empty(capacity, dtype=np.int64)
    size = 0
    words = 0
    for w in range(n):
        start = size
        last = offsets[w + 1] - 1
        for k in range(offsets[w], offsets[w + 1] + (1 if end_id >= 0 else 0)):
            symbol = end_id if k > last else final_ids[units[k]] if k == last else plain_ids[units[k]]
            if symbol >= 0:
                symbols[size] = symbol
                size += 1
                continue
            if size - start >= 2:  # close the part before the unknown character
                word_counts[words] = counts[w]
                words += 1
                word_offsets[words] = size
            else:
                size = start
            start = size
        if size - start >= 2:
            word_counts[words] = counts[w]
            words += 1
            word_offsets[words] = size
        else:
            size = start
    return symbols[:size].copy(), word_offsets[: words + 1].copy(), word_counts[:words].copy()


@njit(
    types.Tuple((types.int64[::1], types.uint8[::1]))(types.uint32[::1], types.int64[::1], types.int64[::1]),
    cache=True,
    nogil=True,
)
def character_stats(units, offsets, counts):
    """Per code point: how often it occurs (weighted by the pre-token counts), and where: bit 1 inside
    a pre-token (not last), bit 2 as the last character of one."""
    occurrences = np.zeros(0x110000, dtype=np.int64)
    places = np.zeros(0x110000, dtype=np.uint8)
    for w in range(counts.size):
        last = offsets[w + 1] - 1
        for k in range(offsets[w], offsets[w + 1]):
            c = units[k]
            occurrences[c] += counts[w]
            places[c] |= 2 if k == last else 1
    return occurrences, places
