"""The compiled cores of Unigram LM training (``bpe.training.unigram_trainer``): forward-backward
expected counts, Viterbi piece counts and each piece's best resegmentation without itself.

Every distinct pre-token (a *word*) is a lattice of *edges*: each occurrence of a seed piece in it,
as (start, end, piece) in character positions, the edges of a word contiguous and sorted by start
(then end).  Sorted by start, a forward pass can push each edge's score from its start to its end
(every edge ending at a start has a smaller start, so it came first) and a backward pass, in reverse
order, from its end to its start.  An edge counts only while its piece is alive; the one-character
edge of a dead character stands for sentencepiece's ``<unk>`` node (score ``unk_score``, counted for
no piece), so every word keeps a path.
"""

from __future__ import annotations

import numpy as np

from bpe.kernels._numba import njit

_NEG_INF = -np.inf


@njit(cache=True)
def _log_add(a, b):
    """log(exp(a) + exp(b)) without overflow."""
    if a == _NEG_INF:
        return b
    if b == _NEG_INF:
        return a
    if a > b:
        return a + np.log1p(np.exp(b - a))
    return b + np.log1p(np.exp(a - b))


@njit(cache=True)
def _edge_score(edge, starts, ends, pieces, scores, alive, unk_score):
    """(score, piece counted) of an edge: its piece's score while alive, else ``unk_score`` for a
    one-character edge (piece -1) and -inf (no edge) otherwise."""
    piece = pieces[edge]
    if alive[piece]:
        return scores[piece], piece
    if ends[edge] - starts[edge] == 1:
        return unk_score, -1
    return _NEG_INF, -1


@njit(cache=True)
def expected_counts(word_edges, word_lengths, word_counts, starts, ends, pieces, scores, alive, unk_score):
    """The E-step: (each piece's expected count over all words, each weighted by its count; the total
    log-likelihood sum of count · log Z(word)), Z by the forward algorithm, posteriors by forward-backward."""
    expected = np.zeros(scores.size)
    total = 0.0
    longest = word_lengths.max() if word_lengths.size else 0
    alpha = np.empty(longest + 1)
    beta = np.empty(longest + 1)
    for word in range(word_lengths.size):
        length = word_lengths[word]
        first, last = word_edges[word], word_edges[word + 1]
        alpha[: length + 1] = _NEG_INF
        beta[: length + 1] = _NEG_INF
        alpha[0] = 0.0
        beta[length] = 0.0
        for edge in range(first, last):
            score, _ = _edge_score(edge, starts, ends, pieces, scores, alive, unk_score)
            if score != _NEG_INF:
                alpha[ends[edge]] = _log_add(alpha[ends[edge]], alpha[starts[edge]] + score)
        for edge in range(last - 1, first - 1, -1):
            score, _ = _edge_score(edge, starts, ends, pieces, scores, alive, unk_score)
            if score != _NEG_INF:
                beta[starts[edge]] = _log_add(beta[starts[edge]], score + beta[ends[edge]])
        log_z = alpha[length]
        count = word_counts[word]
        total += count * log_z
        for edge in range(first, last):
            score, piece = _edge_score(edge, starts, ends, pieces, scores, alive, unk_score)
            if piece >= 0:
                expected[piece] += count * np.exp(alpha[starts[edge]] + score + beta[ends[edge]] - log_z)
    return expected, total


@njit(cache=True)
def _best_path(first, last, origin, stop, skip, starts, ends, pieces, scores, alive, unk_score, best, back):
    """Viterbi over the edges ``first..last-1`` of one word between positions ``origin`` and ``stop``,
    edge ``skip`` left out (-1: none).  Among equal scores the edge with the earliest start wins (the
    longest last piece), as sentencepiece's encoder: edges come by start and only a higher score
    replaces.  Fills ``best`` (score) and ``back`` (edge) at ``origin..stop``."""
    best[origin : stop + 1] = _NEG_INF
    back[origin : stop + 1] = -1
    best[origin] = 0.0
    for edge in range(first, last):
        start, end = starts[edge], ends[edge]
        if start < origin or end > stop or edge == skip or best[start] == _NEG_INF:
            continue
        score, _ = _edge_score(edge, starts, ends, pieces, scores, alive, unk_score)
        if score == _NEG_INF:
            continue
        if best[start] + score > best[end]:
            best[end] = best[start] + score
            back[end] = edge
    return best[stop]


@njit(cache=True)
def viterbi_counts(word_edges, word_lengths, word_counts, starts, ends, pieces, scores, alive, unk_score):
    """How often each piece occurs in the Viterbi segmentations of all words, weighted by their counts."""
    counts = np.zeros(scores.size)
    longest = word_lengths.max() if word_lengths.size else 0
    best = np.empty(longest + 1)
    back = np.empty(longest + 1, dtype=np.int64)
    for word in range(word_lengths.size):
        length = word_lengths[word]
        _best_path(word_edges[word], word_edges[word + 1], 0, length, -1, starts, ends, pieces, scores, alive,
                   unk_score, best, back)  # fmt: skip
        position = length
        while position > 0:
            edge = back[position]
            if alive[pieces[edge]]:
                counts[pieces[edge]] += word_counts[word]
            position = starts[edge]
    return counts


@njit(cache=True)
def resegmentations(occurrence, edge_words, word_edges, starts, ends, pieces, scores, alive, unk_score):
    """For every alive piece of length two or more, its best segmentation without itself: Viterbi over
    the edges inside one of its occurrences (edge ``occurrence[piece]``), that edge left out.  Returns
    (its score per piece, -inf where none; the pieces of each, -1 for an ``<unk>`` character, as a flat
    array and offsets into it)."""
    size = scores.size
    alternative = np.full(size, _NEG_INF)
    offsets = np.zeros(size + 1, dtype=np.int64)
    flat = np.empty(16, dtype=np.int64)
    used = 0
    longest = 0
    for piece in range(size):
        if occurrence[piece] >= 0:
            longest = max(longest, ends[occurrence[piece]] - starts[occurrence[piece]])
    best = np.empty(int(ends.max()) + 1 if ends.size else 1)
    back = np.empty(best.size, dtype=np.int64)
    path = np.empty(longest + 1, dtype=np.int64)
    for piece in range(size):
        offsets[piece] = used
        edge = occurrence[piece]
        if edge < 0 or not alive[piece] or ends[edge] - starts[edge] < 2:
            continue
        origin, stop = starts[edge], ends[edge]
        word = edge_words[edge]
        first = edge
        while first > word_edges[word] and starts[first - 1] == origin:
            first -= 1
        last = edge
        while last < word_edges[word + 1] and starts[last] < stop:
            last += 1
        alternative[piece] = _best_path(first, last, origin, stop, edge, starts, ends, pieces, scores, alive,
                                        unk_score, best, back)  # fmt: skip
        steps = 0
        position = stop
        while position > origin:
            step = back[position]
            path[steps] = pieces[step] if alive[pieces[step]] else -1
            steps += 1
            position = starts[step]
        while used + steps > flat.size:
            grown = np.empty(2 * flat.size, dtype=np.int64)
            grown[:used] = flat[:used]
            flat = grown
        for index in range(steps):
            flat[used + index] = path[steps - 1 - index]
        used += steps
    offsets[size] = used
    return alternative, flat[:used].copy(), offsets
