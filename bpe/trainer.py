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

The merges are learned by the compiled kernel ``bpe.merge_kernel`` (numba):
the standard fast algorithm (HF ``tokenizers`` BpeTrainer, subword-nmt) --
pair counts kept incrementally, an index from each pair to where it occurs,
only those places touched after a merge, the best pair from a max-heap with
lazy invalidation -- over flat arrays with neighbour links instead of Python
objects.  ``tests/bpe/naive_bpe.py`` is the slow reference that recounts
everything after each merge; differential tests (``test_trainer.py``,
``test_merge_kernel.py``) check both produce the same merges.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from itertools import chain
from typing import NamedTuple

from bpe.base import TokenizerError
from bpe.pretokenizers import get_pretokenizer

#: progress(merges_done, merges_wanted), called after every merge
ProgressCallback = Callable[[int, int], None]

#: characters of training text per worker task when counting in parallel
CHUNK_CHARS = 16_000_000


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
        if not text.isascii():
            check_encodable(text, f"training text #{index}")
        if blank and text and not text.isspace():
            blank = False
        yield text
    if blank:
        raise TokenizerError("training input is empty or whitespace-only")


def check_encodable(text: str, what: str) -> None:
    """Raise TokenizerError when ``text`` has no UTF-8 form (a lone surrogate such as ``"\\ud800"``)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise TokenizerError(
            f"{what} is not valid Unicode: lone surrogate {text[exc.start]!r} at index {exc.start}"
        ) from None


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
    from bpe.merge_kernel import learn_merges  # imports numba (~1 s): only when training, not for encoding

    merges = [Merge(*merge) for merge in learn_merges(word_counts, piece_keys, max_merges, min_frequency)]
    if progress is not None:  # the kernel runs uninterrupted (about a second for 32k merges): report afterwards
        for done in range(1, len(merges) + 1):
            progress(done, max_merges)
    return merges
