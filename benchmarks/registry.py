"""How a metric is declared: one ``Metric`` object per reported number.

A declaration says everything the rest of tokbench needs to know about a metric:
its name and label, the format and direction the report, ``check``, plots and
findings use, its report group, what it is computed from (``Needs``), which
tokenizers it applies to (``Capability``), whether it is deterministic, and the
function that computes it.  Its definition lives in ``docs/metrics.md`` under the
heading ``### `name```, whose anchor is the metric's name.

The declarations themselves are the table at the end of ``benchmarks.metrics``
(``METRICS``); this module only holds the vocabulary they are written in.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from benchmarks.errors import BenchmarkError

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
    CHAR_BASELINE = "token counts of the unit and of the run's char-level tokenizer, per document (PairedCounts)"
    ENGLISH_PARTNER = "token counts of the unit and of the same row on English, per parallel sentence (PairedCounts)"
    ENGLISH_PARTNER_DEV = (
        "token counts of the unit and of the same row on English, per parallel sentence of the dev split (PairedCounts)"
    )
    ENGLISH_PARTNER_JOINED = (
        "token counts of one string joining the parallel sentences, of the unit and of the same row on English "
        "(JoinedCounts)"
    )
    MEASUREMENT = "timed by the runner (no function); written to costs.csv"


class Capability(Enum):
    """What a metric may assume about a tokenizer's tokens."""

    WHOLE_PRETOKENS = "every token is one whole pre-token; an unknown pre-token becomes <unk>"
    CHARACTER_TOKENS = "one token per character: the no-merge baseline of the BPE families"


#: The capabilities of tokbench's families, by family name (production rows have none).
FAMILY_CAPABILITIES: dict[str, frozenset[Capability]] = {
    "word": frozenset({Capability.WHOLE_PRETOKENS}),
    "char": frozenset({Capability.CHARACTER_TOKENS}),
}


def capabilities_of(kind: str) -> frozenset[Capability]:
    """The capabilities of a family or production tokenizer named ``kind``."""
    return FAMILY_CAPABILITIES.get(kind, frozenset())


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
    compute: Compute | None  # None only for Needs.MEASUREMENT
    requires: frozenset[Capability] = frozenset()  # computed only for tokenizers with all of these
    deterministic: bool = True  # False for wall-clock figures: costs.csv, never compared by `check`

    @property
    def doc_anchor(self) -> str:
        """The anchor of the metric's section in docs/metrics.md (heading ``### `name```)."""
        return self.name

    def applies_to(self, capabilities: frozenset[Capability]) -> bool:
        return self.requires <= capabilities


def declare(groups: Mapping[str, str], metrics: Iterable[Metric]) -> dict[str, Metric]:
    """The registry: metrics by name, in report order; checks that the declarations are consistent."""
    registry: dict[str, Metric] = {}
    for metric in metrics:
        if metric.name in registry:
            raise BenchmarkError(f"metric {metric.name!r} is declared twice")
        if metric.group not in groups:
            raise BenchmarkError(f"metric {metric.name!r}: unknown group {metric.group!r} (known: {', '.join(groups)})")
        if (metric.compute is None) != (metric.needs is Needs.MEASUREMENT):
            raise BenchmarkError(f"metric {metric.name!r}: a function is required exactly when it is not measured")
        registry[metric.name] = metric
    return registry
