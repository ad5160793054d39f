"""Robustness (group ``robustness``): how a tokenizer's output moves when the evaluation text carries
realistic noise (``benchmarks.measure.perturb``: which perturbations, per language, and their seeds).

Three quantities per perturbation ``p``, each a ratio of sums over the documents of the evaluation set:
``token_inflation_<p>`` (tokens on the perturbed documents / tokens on the clean ones),
``changed_word_share_<p>`` (whitespace words whose inner token boundaries move / words) and
``boundary_edit_distance_<p>`` (boundaries added or removed inside a word / words), the last two only for
perturbations that keep the words (``Perturbation.keeps_words``).  A perturbation that does not apply to the
corpus language (``perturbations_for``) gives no row.  Definitions: docs/metrics.md, "Robustness".
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from benchmarks.errors import BenchmarkError
from benchmarks.measure.metrics.inputs import MetricResult, RunningText, ratio_of_sums
from benchmarks.measure.metrics.spans import _WHITESPACE_WORD, content_spans, utf8_offsets
from benchmarks.measure.perturb import PERTURBATIONS, origins, perturb_texts, perturbations_for
from bpe.base import Encoding

#: a whitespace word and its inner cuts in half characters (``word_cuts``)
WordCuts = tuple[str, frozenset[int]]


@dataclass(frozen=True, eq=False)
class PerturbedText:
    """``Needs.PERTURBED_TEXT``: the running text of an evaluation set (clean texts and encodings), the corpus
    language (``tur_Latn``), the tokenizer's batch encoder and whether whitespace separates the words of the
    text (False: a script written without spaces, no word metric).  ``perturbed(name)`` perturbs and encodes
    the texts once per perturbation, only when a metric asks for it; ``clean_cuts()`` finds the clean words' cuts
    once for every perturbation."""

    running: RunningText
    language: str
    encode_texts: Callable[[Sequence[str]], Sequence[Encoding]]
    spaced: bool = True
    _done: dict[str, tuple[list[str], Sequence[Encoding]]] = field(default_factory=dict, repr=False)
    _clean_cuts: list[list[WordCuts]] = field(default_factory=list, repr=False)

    def perturbed(self, name: str) -> tuple[list[str], Sequence[Encoding]] | None:
        """The texts under perturbation ``name`` and their encodings; None where it does not apply to the language."""
        if name not in perturbations_for(self.language):
            return None
        if name not in self._done:
            texts = perturb_texts(name, self.running.texts)
            self._done[name] = (texts, self.encode_texts(texts))
        return self._done[name]

    def clean_cuts(self) -> list[list[WordCuts]]:
        """Each clean document's whitespace words with their cuts (``word_cuts``)."""
        if not self._clean_cuts:
            running = self.running
            self._clean_cuts.extend(word_cuts(t, e) for t, e in zip(running.texts, running.encodings, strict=True))
        return self._clean_cuts


def word_cuts(text: str, encoding: Encoding) -> list[WordCuts]:
    """Every whitespace word of ``text`` (``str.split``'s) with its inner cuts: the byte offsets strictly
    inside the word where a content token starts or ends, each as a half-character offset in the word,
    ``2c`` at the start of its character ``c``, ``2c + 1`` inside character ``c`` (a byte-level cut)."""
    offsets = utf8_offsets(text).tolist()
    cuts = sorted({offset for span in content_spans(encoding) for offset in span})
    words = []
    for match in _WHITESPACE_WORD.finditer(text):
        start, end = offsets[match.start()], offsets[match.end()]
        inner = cuts[bisect.bisect_right(cuts, start):bisect.bisect_left(cuts, end)]
        halves = set()
        for cut in inner:
            char = bisect.bisect_right(offsets, cut) - 1  # the character the cut starts or lies in
            halves.add(2 * (char - match.start()) + (offsets[char] != cut))
        words.append((match.group(), frozenset(halves)))
    return words


def cuts_in_clean_word(halves: frozenset[int], origin: Sequence[int]) -> frozenset[int]:
    """Cuts of a perturbed word (half characters) moved onto its clean word through ``origin``
    (``perturb.origins``): a cut between characters from two clean characters lands at the start of the later
    one; a cut inside a character, or between two characters one clean character became (jamo of one
    syllable), lands inside that clean character."""
    moved = set()
    for half in halves:
        char, inside = divmod(half, 2)
        if inside or origin[char - 1] == origin[char]:
            moved.add(2 * origin[char] + 1)
        else:
            moved.add(2 * origin[char])
    return frozenset(moved)


def word_edits(name: str, clean: Sequence[WordCuts], perturbed: Sequence[WordCuts]) -> list[int]:
    """Per word of one document under perturbation ``name``, its boundary edits: the size of the symmetric
    difference of its clean cuts and its perturbed cuts moved onto it (``cuts_in_clean_word``), both in half
    characters of the clean word; the boundary edit distance of Fournier (2013) with additions and deletions
    only (no transpositions: a cut moved by one position is two edits).  Words that do not line up character
    by character (``perturb.origins``: None) are left out."""
    if len(clean) != len(perturbed):
        raise BenchmarkError(f"robustness: perturbation {name!r} changed the number of words of a document "
                             f"({len(clean)} vs {len(perturbed)})", code="length_mismatch",
                             value=(len(clean), len(perturbed)))  # fmt: skip
    edits = []
    for (word, cuts), (noisy, noisy_cuts) in zip(clean, perturbed, strict=True):
        origin = origins(PERTURBATIONS[name], word, noisy)
        if origin is not None:
            edits.append(len(cuts ^ cuts_in_clean_word(noisy_cuts, origin)))
    return edits


def changed_words(name: str, clean: Sequence[WordCuts], perturbed: Sequence[WordCuts]) -> tuple[int, int]:
    """(words whose cuts differ, words compared) of one document under perturbation ``name`` (``word_edits``)."""
    edits = word_edits(name, clean, perturbed)
    return sum(edit > 0 for edit in edits), len(edits)


def robustness(name: str) -> Callable[[PerturbedText], Mapping[str, MetricResult | None] | None]:
    """The function of the metrics of perturbation ``name`` (one pass: the texts are perturbed and encoded once)."""
    keeps_words = PERTURBATIONS[name].keeps_words

    def compute(text: PerturbedText) -> Mapping[str, MetricResult | None] | None:
        perturbed = text.perturbed(name)
        if perturbed is None:
            return None
        texts, encodings = perturbed
        clean = text.running
        results: dict[str, MetricResult | None] = {f"token_inflation_{name}": ratio_of_sums(
            f"token_inflation_{name}", [len(e) for e in encodings], [len(e) for e in clean.encodings])}
        # no words to pair: a script without spaces
        results[f"changed_word_share_{name}"] = results[f"boundary_edit_distance_{name}"] = None
        if keeps_words and text.spaced:
            edits = [word_edits(name, clean_words, word_cuts(p, q))
                     for clean_words, p, q in zip(text.clean_cuts(), texts, encodings, strict=True)]  # fmt: skip
            words = [len(document) for document in edits]
            results[f"changed_word_share_{name}"] = ratio_of_sums(
                f"changed_word_share_{name}", [sum(edit > 0 for edit in document) for document in edits], words)
            results[f"boundary_edit_distance_{name}"] = ratio_of_sums(
                f"boundary_edit_distance_{name}", [sum(document) for document in edits], words)
        return results

    compute.__name__ = f"robustness_{name}"
    compute.__qualname__ = compute.__name__
    words = f", `changed_word_share_{name}` and `boundary_edit_distance_{name}`" if keeps_words else ""
    compute.__doc__ = (
        f"Robustness to perturbation `{name}`: `token_inflation_{name}`{words}.\n\n"
        f"Formula: token_inflation_{name} = sum_i tokens(perturbed i) / sum_i tokens(i) over documents i; "
        + (f"changed_word_share_{name} = sum_i changed words(i) / sum_i words(i), a word changed when its "
           "inner cuts (word_cuts), moved onto the clean word (cuts_in_clean_word), differ from the clean "
           f"ones; boundary_edit_distance_{name} = sum_i sum_w |C_w xor P_w| / sum_i words(i), C_w the clean "
           "cuts of word w and P_w its perturbed cuts moved onto it. " if keeps_words else "")
        + "Aggregation: ratio of sums over documents.  Source: tokbench's own definitions; TokSuite 2025 "
        "measures robustness to such noise on benchmark items; the boundary edit distance is Fournier 2013's "
        "without transpositions (docs/metrics.md, Robustness).")
    return compute
