"""BPE training shared by char-bpe and byte-bpe.

Two steps:

1. ``bpe.training.counts.count_pretokens`` cuts the training texts into pre-tokens and
   counts each distinct pre-token once (compiled, in threads for large inputs).
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

The merges are learned by the compiled kernel ``bpe.kernels.merge_kernel`` (numba):
the standard fast algorithm (HF ``tokenizers`` BpeTrainer, subword-nmt) --
pair counts kept incrementally, an index from each pair to where it occurs,
only those places touched after a merge, the best pair from a max-heap with
lazy invalidation -- over flat arrays with neighbour links instead of Python
objects.  ``tests/bpe/naive_bpe.py`` is the slow reference that recounts
everything after each merge; differential tests (``test_trainer.py``,
``test_merge_kernel.py``) check both produce the same merges.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import NamedTuple

import numpy as np

from bpe.base import TokenizerError, utf8

#: progress(merges_done, merges_wanted), called after every merge
ProgressCallback = Callable[[int, int], None]


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


# -- checking training texts --------------------------------------------------


def checked_texts(texts: Iterable[str], *, check_unicode: bool = True, require_text: bool = True) -> Iterator[str]:
    """Yield the training texts, raising TokenizerError for a non-string item,
    a single string or a mapping passed instead of an iterable of texts, text
    that is not valid Unicode (unless ``check_unicode`` is False: the caller
    checks), or (unless ``require_text`` is False) an input with no
    non-whitespace character at all (checked once the input is exhausted)."""
    if isinstance(texts, (str, bytes)):
        raise TokenizerError("training texts must be an iterable of strings (one text per item), not a single string",
                             code="bad_training_input")  # fmt: skip
    if isinstance(texts, Mapping):
        raise TokenizerError(
            "training texts must be an iterable of strings, not a mapping; pre-token counts train word, char, "
            "char-bpe and byte-bpe only (sentencepiece reads sentences)",
            code="bad_training_input",
        )
    blank = True
    for index, text in enumerate(texts):
        if not isinstance(text, str):
            raise TokenizerError(f"training text #{index} is {type(text).__name__}, expected str",
                                 code="bad_training_input", value=index)  # fmt: skip
        if check_unicode and not text.isascii():
            utf8(text, f"training text #{index}")
        if blank and text and not text.isspace():
            blank = False
        yield text
    if blank and require_text:
        raise TokenizerError("training input is empty or whitespace-only", code="empty_training_input")


# -- learning merges ----------------------------------------------------------


def train_merges(
    word_counts: Mapping[tuple[int, ...], int] | tuple[np.ndarray, np.ndarray, np.ndarray],
    piece_keys: Sequence[str] | Sequence[bytes],
    max_merges: int,
    *,
    min_frequency: int = 2,
    progress: ProgressCallback | None = None,
    overwrite_words: bool = False,
) -> list[Merge]:
    """Learn up to ``max_merges`` merges over ``word_counts`` (base-symbol-id tuple -> count, or the
    arrays ``(word_symbols, word_offsets, word_counts)`` of ``bpe.kernels.merge_kernel.learn_merges_from_arrays``).

    ``piece_keys[i]`` is the tie-break key (piece string or bytes) of symbol id
    ``i`` for every id the words use; merge number ``k`` (0-based) creates the
    new id ``len(piece_keys) + k``.  Stops early when no pair occurs at least
    ``min_frequency`` times.  ``overwrite_words``: the word arrays may be overwritten (saves
    memory; ``bpe.kernels.merge_kernel.learn_merges_from_arrays``).
    """
    from bpe.kernels.merge_kernel import learn_merges  # imports numba (~1 s): only when training, not for encoding

    merges = [
        Merge(*merge)
        for merge in learn_merges(word_counts, piece_keys, max_merges, min_frequency, overwrite_words=overwrite_words)
    ]
    if progress is not None:  # the kernel runs uninterrupted (about a second for 32k merges): report afterwards
        for done in range(1, len(merges) + 1):
            progress(done, max_merges)
    return merges
