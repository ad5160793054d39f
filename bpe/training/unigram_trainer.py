"""Unigram LM training (Kudo 2018, "Subword Regularization: Improving Neural Network Translation Models
with Multiple Subword Candidates", ACL), as sentencepiece's ``unigram_model_trainer.cc`` does it, on
pre-token counts.  The family around it: ``bpe.models.unigram``; the compiled cores:
``bpe.kernels.unigram_kernel``.

1. **Seed vocabulary**: every character of the text (its count as score), then the substrings of two
   to ``max_piece_length`` characters inside the pre-tokens that occur at least twice (occurrences
   weighted by pre-token counts), ranked by frequency × length, the best ``seed_size`` of them; scores
   are the logs of those figures, normalized.  sentencepiece finds its substrings with a suffix array
   over the whole text: only the right-branching ones (internal nodes of the suffix tree), limited by its
   piece rules (script, digits, whitespace); here every substring of a pre-token is counted exactly (level
   by level: a substring of length k + 1 is counted only where its first k characters occurred twice),
   and the pre-tokenizer plays the part of those rules.  Ties of frequency × length go to code point order.
2. **EM** (``num_sub_iterations`` rounds): the E-step sums each piece's posterior count over the
   segmentations of every distinct pre-token (forward-backward), weighted by its count; the M-step drops
   the pieces expected fewer than 0.5 times and sets score = ψ(count) − ψ(total) (ψ the digamma function:
   sentencepiece's Bayesian EM with a sparse Dirichlet prior, after Liang's ACL 2007 tutorial), computed in
   float64 where sentencepiece uses float32.  A character whose piece was dropped is ``<unk>`` in the
   lattice with the lowest score − 10.
3. **Pruning**, while more than ``int(1.1 · vocab_size)`` pieces are alive: each piece's Viterbi count
   f over all pre-tokens; a piece with f = 0, or whose own string segments better without it, is dropped;
   a single character is kept; every other piece's loss is (f / N) · (log(f / F) − Σ_alt log((f_alt + f)
   / (F + f · (|alt| − 1)))) with alt the best segmentation of its string without it, F the sum of all f,
   N the number of pre-token occurrences (sentencepiece's approximation: its frequency moves to the
   alternative; its factor F, summed over its inverted index, is f / N as a pre-token holding the piece
   twice is listed twice).  The pieces of highest loss stay, ``max(int(1.1 · vocab_size),
   int(shrinking_factor · alive))`` in all.  Ties of loss: the piece earlier in the seed order stays.
4. **Final vocabulary**: every character of the text (a dropped one scored the lowest score − k · 0.0001,
   k = 0, 1, ... in order of character frequency, so a frequent one scores higher; sentencepiece adds
   the penalty instead, giving the rarer ones the higher scores, against its own comment), then the other
   pieces by score until ``vocab_size`` less the specials; sorted by score, ties in code point order.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from bpe.training.trainer import ProgressCallback

#: sentencepiece's kUnkPenalty: an unknown character scores this much below the lowest piece
UNK_PENALTY = 10.0
#: sentencepiece's kExpectedFrequencyThreshold: the M-step drops pieces expected fewer times
EXPECTED_FREQUENCY_THRESHOLD = 0.5
#: sentencepiece's kMinScorePenaltyDelta: between the scores of the characters re-added at the end
MIN_SCORE_PENALTY_DELTA = 0.0001
#: sentencepiece prunes down to this multiple of ``vocab_size`` and keeps the best scores of those
DESIRED_MARGIN = 1.1


def _kernel() -> Any:
    """The compiled kernels, imported on first use (numba starts only when a unigram model trains)."""
    from bpe.kernels import unigram_kernel

    return unigram_kernel


def digamma(values: np.ndarray) -> np.ndarray:
    """ψ(x) for x > 0: the recurrence ψ(x) = ψ(x + 1) − 1/x up to x ≥ 10, then the asymptotic series
    (Abramowitz & Stegun 6.3.18), accurate to about 1e-13."""
    x = np.array(values, dtype=np.float64)
    result = np.zeros_like(x)
    small = x < 10.0
    while small.any():
        result[small] -= 1.0 / x[small]
        x[small] += 1.0
        small = x < 10.0
    inverse = 1.0 / x
    square = inverse * inverse
    series = square * (1 / 12 - square * (1 / 120 - square * (1 / 252 - square * (1 / 240 - square / 132))))
    return result + np.log(x) - 0.5 * inverse - series


@dataclass(frozen=True, eq=False)
class Lattices:
    """Every segmentation of every distinct pre-token over a set of pieces (``bpe.kernels.unigram_kernel``)."""

    pieces: list[str]  # piece strings by index
    counts: np.ndarray  # float64, each word's count
    word_edges: np.ndarray  # int64, word w's edges are word_edges[w]:word_edges[w + 1]
    word_lengths: np.ndarray  # int64, in characters
    starts: np.ndarray  # int64, per edge
    ends: np.ndarray  # int64, per edge
    edge_pieces: np.ndarray  # int64, per edge
    edge_words: np.ndarray  # int64, per edge

    @classmethod
    def build(cls, words: Sequence[str], counts: Sequence[int], pieces: list[str], longest: int) -> Lattices:
        """The lattices of ``words`` over ``pieces`` (which hold every character of the words, at most
        ``longest`` characters each), by looking every substring up."""
        ids = {piece: index for index, piece in enumerate(pieces)}
        starts: list[int] = []
        ends: list[int] = []
        edge_pieces: list[int] = []
        word_edges = [0]
        for word in words:
            size = len(word)
            for start in range(size):
                for end in range(start + 1, min(size, start + longest) + 1):
                    piece = word[start:end]
                    index = ids.get(piece)
                    if index is not None:
                        starts.append(start)
                        ends.append(end)
                        edge_pieces.append(index)
            word_edges.append(len(starts))
        edges = np.asarray(word_edges, dtype=np.int64)
        return cls(
            pieces=pieces,
            counts=np.asarray(counts, dtype=np.float64),
            word_edges=edges,
            word_lengths=np.fromiter(map(len, words), dtype=np.int64, count=len(words)),
            starts=np.asarray(starts, dtype=np.int64),
            ends=np.asarray(ends, dtype=np.int64),
            edge_pieces=np.asarray(edge_pieces, dtype=np.int64),
            edge_words=np.repeat(np.arange(len(words), dtype=np.int64), np.diff(edges)),
        )

    @classmethod
    def over(cls, words: Mapping[str, int], scored: Mapping[str, float]) -> tuple[Lattices, np.ndarray, np.ndarray]:
        """The lattices of ``words`` (word -> count) over the pieces of ``scored`` (piece -> score), with the
        scores and alive mask: a character of the words in no piece is added dead (an ``<unk>`` edge)."""
        pieces = list(scored)
        missing = sorted({char for word in words for char in word} - set(scored))
        scores = np.asarray([*scored.values(), *[0.0] * len(missing)], dtype=np.float64)
        alive = np.asarray([True] * len(pieces) + [False] * len(missing))
        longest = max(map(len, pieces), default=1)
        return cls.build(list(words), list(words.values()), pieces + missing, longest), scores, alive

    @cached_property
    def occurrence(self) -> np.ndarray:
        """Each piece's first edge (-1: none)."""
        occurrence = np.full(len(self.pieces), -1, dtype=np.int64)
        seen, first = np.unique(self.edge_pieces, return_index=True)
        occurrence[seen] = first
        return occurrence

    def expected_counts(self, scores: np.ndarray, alive: np.ndarray) -> tuple[np.ndarray, float]:
        """(each piece's expected count, the log-likelihood Σ count · log Z) by forward-backward."""
        return _kernel().expected_counts(self.word_edges, self.word_lengths, self.counts, self.starts, self.ends,
                                         self.edge_pieces, scores, alive, unk_score(scores, alive))  # fmt: skip

    def viterbi_counts(self, scores: np.ndarray, alive: np.ndarray) -> np.ndarray:
        """Each piece's count in the Viterbi segmentations, weighted by the words' counts."""
        return _kernel().viterbi_counts(self.word_edges, self.word_lengths, self.counts, self.starts, self.ends,
                                        self.edge_pieces, scores, alive, unk_score(scores, alive))  # fmt: skip

    def pruning_losses(self, scores: np.ndarray, alive: np.ndarray) -> PruningFacts:
        """What pruning decides from: Viterbi counts, which pieces are dropped or kept whatever their loss,
        and the loss of the others (module docstring, step 3)."""
        frequency = self.viterbi_counts(scores, alive)
        alternative, flat, offsets = _kernel().resegmentations(
            self.occurrence, self.edge_words, self.word_edges, self.starts, self.ends, self.edge_pieces, scores, alive,
            unk_score(scores, alive))  # fmt: skip
        has_alternative = alternative > -np.inf
        dropped = ~alive | (frequency == 0) | (has_alternative & (alternative > scores))
        always = ~dropped & ~has_alternative
        total = frequency.sum()
        sizes = np.diff(offsets)
        owner = np.repeat(np.arange(len(self.pieces)), sizes)
        alternative_frequency = np.where(flat >= 0, frequency[np.maximum(flat, 0)], 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            log_total_after = np.log(total + frequency * (sizes - 1))
            terms = np.log(alternative_frequency + frequency[owner]) - log_total_after[owner]
            log_alternative = np.bincount(owner, weights=terms, minlength=len(self.pieces))
            loss = frequency / self.counts.sum() * (np.log(frequency) - math.log(total) - log_alternative)
        loss[dropped | always] = np.nan
        return PruningFacts(frequency, dropped, always, loss, flat, offsets)


@dataclass(frozen=True, eq=False)
class PruningFacts:
    """Per piece: Viterbi ``frequency``; ``dropped`` whatever its loss; ``always`` kept (a single character);
    ``loss`` of the others (NaN for those two); its best segmentation without itself
    (``alternatives[offsets[i]:offsets[i + 1]]``, -1 for an ``<unk>`` character)."""

    frequency: np.ndarray
    dropped: np.ndarray
    always: np.ndarray
    loss: np.ndarray
    alternatives: np.ndarray
    offsets: np.ndarray


def unk_score(scores: np.ndarray, alive: np.ndarray) -> float:
    """The score of an ``<unk>`` character: ``UNK_PENALTY`` below the lowest alive piece."""
    return float(scores[alive].min()) - UNK_PENALTY if alive.any() else -UNK_PENALTY


def m_step(expected: np.ndarray, alive: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(scores, alive): pieces expected fewer than 0.5 times dropped, score = ψ(count) − ψ(total)."""
    alive = alive & (expected >= EXPECTED_FREQUENCY_THRESHOLD)
    scores = np.full(expected.shape, -np.inf)
    scores[alive] = digamma(expected[alive]) - digamma(np.array([expected[alive].sum()]))[0]
    return scores, alive


@dataclass(frozen=True, eq=False)
class SubstringCounts:
    """Every substring of two to ``longest`` characters inside the words occurring at least twice
    (occurrences weighted by the words' counts): substring ``i`` starts at ``firsts[i]`` of the joined words,
    is ``lengths[i]`` long and seen ``frequencies[i]`` times; each occurrence as (its start in the joined words,
    its length, its substring)."""

    firsts: np.ndarray
    lengths: np.ndarray
    frequencies: np.ndarray
    occurrences: tuple[np.ndarray, np.ndarray, np.ndarray]

    def strings(self, joined: str) -> list[str]:
        return [joined[first : first + length] for first, length in zip(self.firsts.tolist(), self.lengths.tolist(),
                                                                        strict=True)]  # fmt: skip


def count_substrings(units: np.ndarray, word_ends: np.ndarray, weights: np.ndarray, longest: int) -> SubstringCounts:
    """The substrings of two to ``longest`` code points of ``units`` (the words joined; ``word_ends[i]``: the
    end of the word holding position i; ``weights[i]``: its count) occurring twice, counted exactly, level by
    level by length: a substring of length k + 1 is (the number of its first k characters, its last character),
    counted only where those k characters occurred twice (no other can)."""
    radix = int(units.max()) + 1 if units.size else 1
    positions = np.flatnonzero(np.arange(units.size) + 1 < word_ends)
    prefixes = units[positions].astype(np.int64)
    firsts, lengths, frequencies = [], [], []
    found: tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]] = ([], [], [])
    numbered = 0
    for length in range(2, longest + 1):
        if not positions.size:
            break
        keys = prefixes * radix + units[positions + length - 1]
        _, first_seen, inverse = np.unique(keys, return_index=True, return_inverse=True)
        frequency = np.bincount(inverse, weights=weights[positions]).astype(np.int64)
        kept = frequency >= 2
        numbers = np.where(kept, numbered + np.cumsum(kept) - 1, -1)
        firsts.append(positions[first_seen[kept]])
        lengths.append(np.full(int(kept.sum()), length, dtype=np.int64))
        frequencies.append(frequency[kept])
        numbered += int(kept.sum())
        substring = numbers[inverse]
        seen = substring >= 0
        for column, values in zip(found, (positions[seen], np.full(int(seen.sum()), length), substring[seen]),
                                  strict=True):  # fmt: skip
            column.append(values)
        longer = seen & (positions + length < word_ends[positions])
        positions, prefixes = positions[longer], substring[longer]
    empty = np.zeros(0, dtype=np.int64)
    joined_columns = tuple(np.concatenate(column).astype(np.int64) if column else empty for column in found)
    starts, sizes, counts = (np.concatenate(values).astype(np.int64) if values else empty
                             for values in (firsts, lengths, frequencies))  # fmt: skip
    return SubstringCounts(starts, sizes, counts, joined_columns)  # type: ignore[arg-type]


def seed_lattices(words: Sequence[str], counts: Sequence[int], seed_size: int,
                  longest: int) -> tuple[Lattices, np.ndarray, int]:  # fmt: skip
    """(the lattices of ``words`` over the seed pieces: the characters by count, ties in code point order,
    then the best ``seed_size`` substrings by frequency × length, ties in code point order; their normalized
    log scores; how many characters)."""
    joined = "".join(words)
    units = np.frombuffer(joined.encode("utf-32-le"), dtype=np.uint32).astype(np.int64)
    sizes = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
    word_of = np.repeat(np.arange(len(words), dtype=np.int64), sizes)
    word_starts = np.cumsum(sizes) - sizes
    weights = np.asarray(counts, dtype=np.float64)
    # the characters: by count, ties in code point order
    code_points, char_of = np.unique(units, return_inverse=True)
    char_counts = np.bincount(char_of, weights=weights[word_of]).astype(np.int64)
    char_order = np.lexsort((code_points, -char_counts))
    char_rank = np.empty_like(char_order)
    char_rank[char_order] = np.arange(char_order.size)
    chars = [chr(code_point) for code_point in code_points[char_order].tolist()]
    # the substrings: by frequency × length, ties in code point order
    found = count_substrings(units, (word_starts + sizes)[word_of], weights[word_of], longest)
    substrings = found.strings(joined)
    figures = found.frequencies * found.lengths
    by_code_point = np.argsort(np.asarray(substrings, dtype=object), kind="stable")
    ranked = by_code_point[np.argsort(-figures[by_code_point], kind="stable")][:seed_size]
    piece_of = np.full(len(substrings), -1, dtype=np.int64)
    piece_of[ranked] = np.arange(len(chars), len(chars) + ranked.size)
    pieces = chars + [substrings[index] for index in ranked.tolist()]
    seed_figures = np.concatenate([char_counts[char_order], figures[ranked]]).astype(np.float64)
    # the edges: every character, then every occurrence of a seed substring; sorted by word, start, end
    occurrence_positions, occurrence_lengths, occurrence_substrings = found.occurrences
    seeded = piece_of[occurrence_substrings] >= 0
    positions = np.concatenate([np.arange(units.size, dtype=np.int64), occurrence_positions[seeded]])
    edge_words = word_of[positions]
    starts = positions - word_starts[edge_words]
    ends = starts + np.concatenate([np.ones(units.size, dtype=np.int64), occurrence_lengths[seeded]])
    edge_pieces = np.concatenate([char_rank[char_of], piece_of[occurrence_substrings[seeded]]])
    order = np.lexsort((ends, starts, edge_words))
    word_edges = np.searchsorted(edge_words[order], np.arange(len(words) + 1, dtype=np.int64))
    lattices = Lattices(pieces, weights, word_edges, sizes, starts[order], ends[order], edge_pieces[order],
                        edge_words[order])  # fmt: skip
    return lattices, np.log(seed_figures) - math.log(seed_figures.sum()), len(chars)


def train_pieces(
    words: Mapping[str, int],
    vocab_size: int,
    n_specials: int,
    *,
    seed_size: int,
    shrinking_factor: float,
    num_sub_iterations: int,
    max_piece_length: int,
    progress: ProgressCallback | None = None,
) -> list[tuple[str, float]]:
    """The (piece, score) list of a Unigram LM of at most ``vocab_size - n_specials`` pieces trained on
    ``words`` (pre-token -> count), by score, ties in code point order (module docstring)."""
    ordered = sorted(words)  # a fixed order: float sums do not depend on how the counts were made
    counts = [words[word] for word in ordered]
    lattices, scores, n_chars = seed_lattices(ordered, counts, seed_size, max_piece_length)
    pieces = lattices.pieces
    alive = np.ones(len(pieces), dtype=bool)
    desired = int(vocab_size * DESIRED_MARGIN)
    rounds = max(1, math.ceil(math.log(max(len(pieces), 1) / max(desired, 1)) / -math.log(shrinking_factor)) + 1)
    done = 0
    while True:
        for _ in range(num_sub_iterations):
            expected, _ = lattices.expected_counts(scores, alive)
            scores, alive = m_step(expected, alive)
        done += 1
        if progress is not None:
            progress(done, max(rounds, done))
        if alive.sum() <= desired:
            break
        kept = _pruned(lattices.pruning_losses(scores, alive), alive, desired, shrinking_factor)
        if kept.sum() == alive.sum():
            break  # nothing more can go
        alive = kept
    return _final_pieces(pieces, scores, alive, n_chars, vocab_size - n_specials)


def _pruned(facts: PruningFacts, alive: np.ndarray, desired: int, shrinking_factor: float) -> np.ndarray:
    """The alive mask after one pruning: the pieces kept whatever their loss, then those of highest loss
    (ties: the earlier seed piece), ``max(desired, int(shrinking_factor · alive))`` in all."""
    target = max(desired, int(shrinking_factor * alive.sum()))
    kept = facts.always.copy()
    candidates = np.flatnonzero(~facts.dropped & ~facts.always)
    order = candidates[np.lexsort((candidates, -facts.loss[candidates]))]
    room = max(0, target - int(kept.sum()))
    kept[order[:room]] = True
    return kept


def _final_pieces(pieces: list[str], scores: np.ndarray, alive: np.ndarray, n_chars: int,
                  size: int) -> list[tuple[str, float]]:  # fmt: skip
    """Every character (a dropped one scored just below the lowest score), then the best other pieces up
    to ``size``, all sorted by score, ties in code point order."""
    lowest = float(scores[alive].min()) if alive.any() else 0.0
    final: dict[str, float] = {}
    penalty = 0
    for index in range(n_chars):  # the characters, most frequent first
        if alive[index]:
            final[pieces[index]] = float(scores[index])
        else:
            final[pieces[index]] = lowest - penalty * MIN_SCORE_PENALTY_DELTA
            penalty += 1
    others = [index for index in np.flatnonzero(alive).tolist() if index >= n_chars]
    others.sort(key=lambda index: (-scores[index], pieces[index]))
    for index in others[: max(0, size - len(final))]:
        final[pieces[index]] = float(scores[index])
    return sorted(final.items(), key=lambda item: (-item[1], item[0]))


def log_likelihood(words: Mapping[str, int], scored: Mapping[str, float]) -> float:
    """Σ count · log Σ_segmentations exp(Σ scores) of ``words`` (word -> count) under the pieces ``scored``
    (piece -> log probability), by the forward algorithm; a character in no piece is ``<unk>``."""
    lattices, scores, alive = Lattices.over(words, scored)
    return lattices.expected_counts(scores, alive)[1]
