"""Reference WordPiece training, used ONLY by the tests: the naive algorithm, slow and obviously right.

The Hugging Face NLP course's WordPiece chapter, step by step: words split into characters with ``##``
on every non-initial one (an attached space stays with the character after it, as ``bpe.models.wordpiece``
splits words); after every merge every pair and every piece is counted again over every word
(``compute_pair_scores``), the best score taken, and every word rewritten left to right
(``merge_pair``).  Pieces are plain strings, as in the course.  What the course leaves open is decided
as ``bpe.models.wordpiece`` states it: scores are exact fractions; ties go to the higher pair count,
then the smaller (a, b) in code point order; pairs seen fewer than ``min_frequency`` times are not
candidates; a word-initial ``#`` never joins a ``##`` piece starting with ``#``; a piece already in the
vocabulary is not added again.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from fractions import Fraction
from itertools import pairwise


def naive_wordpiece(
    word_freqs: Mapping[str, int], max_merges: int, min_frequency: int = 1
) -> tuple[list[str], list[tuple[str, str]]]:
    """(the alphabet and then the merged pieces, the merges that added them as piece pairs)."""
    cuts = {word: 2 if word.startswith(" ") and len(word) > 1 else 1 for word in word_freqs}
    initial = sorted({word[: cuts[word]] for word in word_freqs})
    inner = sorted({char for word in word_freqs for char in word[cuts[word] :]})
    vocab = [*initial, *("##" + char for char in inner)]
    splits = {word: [word[: cuts[word]], *("##" + char for char in word[cuts[word] :])] for word in word_freqs}
    merges: list[tuple[str, str]] = []
    while len(merges) < max_merges:
        piece_freqs: Counter[str] = Counter()
        pair_freqs: Counter[tuple[str, str]] = Counter()
        for word, freq in word_freqs.items():
            split = splits[word]
            for piece in split:
                piece_freqs[piece] += freq
            for pair in pairwise(split):
                pair_freqs[pair] += freq
        scores = {
            (a, b): Fraction(freq, piece_freqs[a] * piece_freqs[b])
            for (a, b), freq in pair_freqs.items()
            if freq >= min_frequency and not (a == "#" and b.startswith("###"))
        }
        if not scores:
            break
        a, b = min(scores, key=lambda pair: (-scores[pair], -pair_freqs[pair], pair))
        merged = a + b[2:]
        for word, split in splits.items():
            rewritten, i = [], 0
            while i < len(split):
                if i + 1 < len(split) and split[i] == a and split[i + 1] == b:
                    rewritten.append(merged)
                    i += 2
                else:
                    rewritten.append(split[i])
                    i += 1
            splits[word] = rewritten
        if merged not in vocab:
            vocab.append(merged)
            merges.append((a, b))
    return vocab, merges
