"""How a metric is declared: one ``Metric`` object per reported number.

A declaration says everything the rest of tokbench needs to know about a metric:
its name and label, the format and direction the report, ``check``, plots and
findings use, its report group, what it is computed from (``Needs``), which
tokenizers it applies to (``Capability``), whether it is deterministic, and the
function that computes it.  Its definition lives in ``docs/metrics.md`` under the
heading ``### `name```, whose anchor is the metric's name.

The declarations themselves are the table in ``benchmarks.measure.metrics`` (``METRICS``, in
the package's ``__init__``); this module only holds the vocabulary they are written in.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

import bpe
from benchmarks.errors import BenchmarkError
from bpe.base import Capability
from bpe.pretrained.production import PRODUCTION

__all__ = ["Capability"]  # re-exported: metrics declare what they assume with it

DOC_PATH = "docs/metrics.md"

#: values of ``Metric.higher_is_better``
HIGHER, LOWER, DESCRIPTIVE = True, False, None


class Needs(Enum):
    """What a metric is computed from.  The evaluator builds each input once per unit and passes it,
    as the object named here, to the function of every metric that needs it."""

    TOKENIZER = "the trained tokenizer itself (TokenizerFacts); one row per unit, eval set `train`"
    RUNNING_TEXT = "the texts of an evaluation set and their encodings (RunningText)"
    ISOLATED_WORDS = "the words of an evaluation set, each encoded alone (IsolatedWords)"
    MORPHEME_REFERENCE = "a gold or silver morpheme segmentation, its words encoded alone (ReferenceWords)"
    MORPHSCORE_REFERENCE = "MorphScore split points, their words encoded alone (ReferenceWords)"
    MORPHEME_REFERENCE_VOCABULARY = (
        "a gold or silver morpheme segmentation, its words encoded alone, and the tokenizer's vocabulary as byte "
        "strings (ReferenceWords with vocabulary)"
    )
    MORPHSCORE_ROWS = "every MorphScore row as listed, its word encoded bare as upstream does (MorphScoreRows)"
    PERTURBED_TEXT = (
        "the texts of an evaluation set and their encodings, and the same texts perturbed (benchmarks.measure.perturb) "
        "and encoded (PerturbedText)"
    )
    CHAR_BASELINE = "token counts of the unit and of the run's char-level tokenizer, per document (PairedCounts)"
    ENGLISH_PARTNER = "token counts of the unit and of the same row on English, per parallel sentence (PairedCounts)"
    ENGLISH_PARTNER_DEV = (
        "token counts of the unit and of the same row on English, per parallel sentence of the dev split (PairedCounts)"
    )
    ENGLISH_PARTNER_HELD_OUT = (
        "token counts of the unit and of the same row on English, per parallel sentence outside the dev split "
        "(PairedCounts)"
    )
    ENGLISH_PARTNER_JOINED = (
        "token counts of one string joining the parallel sentences, of the unit and of the same row on English "
        "(JoinedCounts)"
    )
    VOCABULARY_PARTNER = (
        "the vocabularies of the unit and of another tokenizer row of its corpus, as byte strings (VocabularyPair); "
        "one row per pair, the other row named in `partner`, eval set `train`"
    )
    MEASUREMENT = "timed by the runner (no function); written to costs.csv"
    LANGUAGE_MODEL = (
        "small causal language models trained on the unit's ids, one per seed of [downstream] (no function: "
        "benchmarks.downstream trains and scores them once every unit is done)"
    )


def capabilities_of(kind: str) -> frozenset[Capability]:
    """The capabilities of a family (declared on its class, ``bpe.base.FamilyFacts``); production
    tokenizers have none."""
    return bpe.family_class(kind).facts.capabilities if kind in bpe.FAMILIES else frozenset()


def boundary_baseline_of(kind: str) -> str | None:
    """Why the boundaries inside a word of tokenizer ``kind`` (family or production name) are fixed by
    construction, or None.  Such tokenizers are baselines on morpheme-boundary metrics, never "best"
    there: a tokenizer that splits everywhere has recall 1 and MorphScore 1, one that never splits has
    precision 1 on the few words it does split at punctuation."""
    if kind in bpe.FAMILIES:
        return bpe.family_class(kind).facts.boundary_baseline
    named = PRODUCTION.get(kind)
    return named.boundary_baseline if named is not None else None


#: A metric function: the input its ``Needs`` names -> its result, or the results of several metrics
#: computed in one pass (by metric name).
Compute = Callable[[Any], Any]


@dataclass(frozen=True)
class Metric:
    name: str  # the `metric` column of results.*
    label: str  # column/axis label in reports
    group: str  # report section: a key of the registry's groups
    higher_is_better: bool | None  # HIGHER, LOWER or DESCRIPTIVE (neither: nothing is ranked or "regresses")
    fmt: str  # value format in tables and findings
    needs: Needs
    compute: Compute | None  # None only for Needs.MEASUREMENT and Needs.LANGUAGE_MODEL
    requires: frozenset[Capability] = frozenset()  # computed only for tokenizers with all of these
    deterministic: bool = True  # False for wall-clock figures: costs.csv, never compared by `check`
    optional: bool = False  # True: computed only when a config names it (a comparability mode)
    definition: str = ""  # one sentence for table captions, where two definitions of a quantity coexist

    @property
    def doc_anchor(self) -> str:
        """The anchor of the metric's section in docs/metrics.md (heading ``### `name```)."""
        return self.name

    def applies_to(self, capabilities: frozenset[Capability]) -> bool:
        return self.requires <= capabilities

    @property
    def direction_mark(self) -> str:
        """``↓`` lower is better, ``↑`` higher is better, ``""`` for a descriptive metric (table headers)."""
        return "" if self.higher_is_better is None else ("↑" if self.higher_is_better else "↓")

    @property
    def counts_words(self) -> bool:
        """Whether it counts words: gold words where the corpus has them, else the whitespace words of the
        text, which a script written without spaces between words does not have (``_measure`` skips it)."""
        return self.needs is Needs.ISOLATED_WORDS or (self.group == "fertility" and self.needs is Needs.RUNNING_TEXT)


def declare(groups: Mapping[str, str], metrics: Iterable[Metric]) -> dict[str, Metric]:
    """The registry: metrics by name, in report order; checks that the declarations are consistent."""
    registry: dict[str, Metric] = {}
    for metric in metrics:
        if metric.name in registry:
            raise BenchmarkError(f"metric {metric.name!r} is declared twice", code="duplicate_metric",
                                 value=metric.name)  # fmt: skip
        if metric.group not in groups:
            raise BenchmarkError(f"metric {metric.name!r}: unknown group {metric.group!r} (known: {', '.join(groups)})",
                                 code="unknown_group", value=metric.group)  # fmt: skip
        if (metric.compute is None) != (metric.needs in (Needs.MEASUREMENT, Needs.LANGUAGE_MODEL)):
            raise BenchmarkError(f"metric {metric.name!r}: a function is required exactly when it is neither "
                                 "measured nor taken from a language model", code="bad_metric",
                                 value=metric.name)  # fmt: skip
        registry[metric.name] = metric
    return registry
