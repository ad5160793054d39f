"""Morpheme-boundary alignment (group ``morphology``): boundary precision, recall, F1 and exact
segmentation against a morpheme reference, MorphScore, and the papers' variants (the Uzan et al. 2024
vocabulary filter, upstream MorphScore)."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from benchmarks.errors import BenchmarkError
from benchmarks.measure.metrics.inputs import MetricResult, MorphScoreRows, ReferenceWords, ratio_of_sums
from benchmarks.measure.metrics.spans import utf8_offsets

# metric -> (numerators, denominators) from the per-word table with columns TP, FP, FN, EXACT
_BOUNDARY_RATIOS: dict[str, Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]] = {
    "boundary_precision": lambda table: (table[:, 0], table[:, 0] + table[:, 1]),
    "boundary_recall": lambda table: (table[:, 0], table[:, 0] + table[:, 2]),
    "boundary_f1": lambda table: (table[:, 0], table[:, 0] + 0.5 * (table[:, 1] + table[:, 2])),
    "exact_segmentation": lambda table: (table[:, 3], np.ones(len(table))),
}


def boundary_metrics(reference: ReferenceWords) -> dict[str, MetricResult]:
    """Morpheme-boundary precision, recall, F1 and exact segmentation, from ONE pass over the words.

    Boundaries as defined in the module docstring (inner byte offsets of the word
    encoded in isolation vs. gold character offsets converted to bytes).  Against
    several gold alternatives, each word uses its best-matching alternative, chosen
    by ``corpora.morph.boundary_counts``: fewest errors (FP + FN), ties to more TP,
    then to the earlier alternative (the same choice for all four metrics).
    Items are the reference words; every metric is a ratio of sums over them (micro).

    * ``boundary_precision``: sum_w TP(w) / sum_w (TP(w) + FP(w)).
    * ``boundary_recall``: sum_w TP(w) / sum_w (TP(w) + FN(w)).
    * ``boundary_f1``: sum TP / (sum TP + ½ (sum FP + sum FN)), which equals the
      harmonic mean of micro precision and recall and is a ratio of sums (per word:
      TP over TP + ½(FP + FN)), so it bootstraps like the others.
    * ``exact_segmentation``: #{w : boundaries(w) in gold_alternatives(w)} / #words;
      a monomorphemic word kept as one token counts as exact.

    Source: Uzan et al. 2024 (MeLeLBGU/tokenizers_intrinsic_benchmark) for P/R/F1;
    word-level segmentation accuracy as in the SIGMORPHON 2022 shared task for exact
    segmentation.  Differences: offsets come from byte spans, so markers (``</w>``,
    ``▁``, ``Ġ``, ``##``) can never shift them (the bug fixed in morphscore PR #2).
    """
    counts = reference.counts
    best = counts.best()
    tp, fp, fn = counts.tp[best], counts.fp[best], counts.fn[best]
    table = np.stack([tp, fp, fn, fp + fn == 0], axis=1).astype(np.float64)  # exact: some alternative has no error
    return {name: ratio_of_sums(name, *ratios(table)) for name, ratios in _BOUNDARY_RATIOS.items()}


def morphscore(reference: ReferenceWords) -> dict[str, MetricResult]:
    """MorphScore v1 (``morphscore``) and the number of items it excludes (``morphscore_excluded``).

    Items: MorphScore rows ``(word, pt1, rest)``, given as analyses whose
    alternatives hold exactly ONE boundary ``len(pt1)`` each (a reference of
    kind ``"morphscore"``; rows with an empty pt1 or rest have no inner
    boundary and are dropped by the reader).
    Score of a word: 1 if its boundaries contain a gold boundary, else 0;
    words encoded as a single content token are EXCLUDED.  ``morphscore`` =
    mean score over the rest (NaN when every word is excluded);
    ``morphscore_excluded`` = the number excluded, its ``n`` the number of items
    (descriptive, no CI).
    Source: Arnett & Bergen (MorphScore v1, ``morph_eval``).
    Differences: boundaries from byte spans instead of decoded token strings
    (markers never interfere); a word listed with several split points counts
    once and scores 1 if any of them is matched.
    """
    if any(len(alternative) != 1 for alternatives in reference.analyses.values() for alternative in alternatives):
        raise BenchmarkError("metric morphscore: needs a MorphScore reference (exactly one boundary per analysis)",
                             code="bad_reference")  # fmt: skip
    counts = reference.counts
    scored = counts.content_tokens > 1
    excluded = MetricResult("morphscore_excluded", float(len(scored) - np.count_nonzero(scored)), len(scored))
    if not scored.any():  # e.g. a word-level tokenizer: every item excluded, the score is undefined
        return {"morphscore": MetricResult("morphscore", math.nan, 0, np.zeros(0), np.zeros(0)),
                "morphscore_excluded": excluded}  # fmt: skip
    # a word scores 1 when the predicted boundaries hold some alternative's (no false negative against it)
    covered = np.bincount(counts.gold.alternative_word[counts.fn == 0], minlength=len(scored)) > 0
    hits = covered[scored].astype(np.float64)
    return {"morphscore": ratio_of_sums("morphscore", hits, np.ones(len(hits))), "morphscore_excluded": excluded}


def in_vocabulary_boundary_metrics(reference: ReferenceWords) -> dict[str, MetricResult]:
    """Boundary precision, recall and F1 on the words Uzan et al. 2024 score, and the share of words scored.

    Filter (Uzan et al.'s ``get_seg_coverage``): a reference word is scored when every gold morpheme is a
    token of the vocabulary and the whole word is not; the first morpheme and the whole word are looked up
    in their word-initial form (``word_prefix`` + text: `` walk`` for a ``Ġ``/``▁`` vocabulary), later
    morphemes as they are.  A word with several gold alternatives is scored when one of them passes, and
    against the passing ones (best-matching, as in ``boundary_metrics``).
    * ``boundary_precision_in_vocab``, ``boundary_recall_in_vocab``, ``boundary_f1_in_vocab``: as the
      unfiltered metrics, micro over the scored words (NaN when no word passes);
    * ``in_vocab_word_share``: scored words / reference words (descriptive: the filter's coverage).
    Source: Uzan et al. 2024 (MeLeLBGU/tokenizers_intrinsic_benchmark, ``Intrinsic_measures/ling_utils.py``).
    Differences: boundaries from byte spans of the word in its mid-sentence form (Uzan et al. tokenize the
    bare word and compare with a ``Ġ``-prefixed gold); vocabulary membership by token bytes, so a
    family's markers (``Ġ``, ``▁``, ``</w>``) need no special case.
    """
    vocabulary, prefix = reference.vocabulary, reference.word_prefix
    counts = reference.counts
    gold, morphemes = counts.gold, counts.gold.morphemes
    first_known = np.fromiter((prefix + m in vocabulary for m in morphemes.first), dtype=bool,
                              count=len(morphemes.first))  # fmt: skip
    later_known = np.fromiter((m in vocabulary for m in morphemes.later), dtype=bool, count=len(morphemes.later))
    word_known = np.fromiter((prefix + w in vocabulary for w in morphemes.words), dtype=bool,
                             count=len(morphemes.words))  # fmt: skip
    later_unknown = np.bincount(morphemes.later_alternative[~later_known[morphemes.later_of]],
                                minlength=len(gold.alternative_word))  # fmt: skip
    passing = first_known[morphemes.first_of] & (later_unknown == 0) & ~word_known[gold.alternative_word]
    best = counts.best(passing)
    scored = np.zeros(len(word_known))
    scored[gold.alternative_word[best]] = 1.0
    table = np.stack([counts.tp[best], counts.fp[best], counts.fn[best]], axis=1).astype(np.float64)
    results = {"in_vocab_word_share": ratio_of_sums("in_vocab_word_share", scored, np.ones(len(scored)))}
    for name in ("boundary_precision", "boundary_recall", "boundary_f1"):
        filtered = f"{name}_in_vocab"
        results[filtered] = (ratio_of_sums(filtered, *_BOUNDARY_RATIOS[name](table)) if len(table)
                             else MetricResult(filtered, math.nan, 0, np.zeros(0), np.zeros(0)))  # fmt: skip
    return results


def morphscore_upstream(rows: MorphScoreRows) -> MetricResult:
    """MorphScore v1 computed as upstream's ``get_morphscore`` does (upstream-compatible mode).

    Items: every row of the file, duplicates included; the word is encoded bare (no leading space).
    A row scores nothing when its word is ONE token (all tokens counted: a bare ``▁`` is a token);
    otherwise 1 when exactly one split after token t (t < last) puts ``pt1`` before it and ``rest`` after,
    else 0 (``morph_eval``: points -1 count 0).  A row with an empty ``pt1`` or ``rest`` scores 0; a
    token that cuts a character (byte fallback, a byte-level piece) decodes to U+FFFD upstream, so such a
    word scores 0.  Value: mean over the scored rows (``n``).
    Source: Arnett & Bergen, MorphScore v1 (catherinearnett/morphscore, ``morphscore.py``).
    Differences from ``morphscore``: which rows are scored and how the word is encoded; nothing else.
    """
    points = []
    for word, split in rows.rows:
        encoding = rows.encodings.get(word)
        if encoding is None:
            raise BenchmarkError(f"metric morphscore_upstream: no bare encoding given for MorphScore word {word!r}",
                                 code="missing_encoding", value=word)  # fmt: skip
        if len(encoding) == 1:
            continue
        if split is None:
            points.append(0.0)
            continue
        offsets = set(utf8_offsets(word).tolist())
        if any(start not in offsets or end not in offsets for start, end in encoding.spans):
            points.append(0.0)
            continue
        target = len(word[:split].encode("utf-8"))
        points.append(float([end for _, end in encoding.spans[:-1]].count(target) == 1))
    if not points:
        return MetricResult("morphscore_upstream", math.nan, 0, np.zeros(0), np.zeros(0))
    return ratio_of_sums("morphscore_upstream", points, np.ones(len(points)))
