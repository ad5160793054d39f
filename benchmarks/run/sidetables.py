"""The facts behind a run's side tables (the ``vocab_overlap`` rows, ``audit.csv``, ``audit-entries.csv``), computed on
several processes.

Each tokenizer row of ``evaluate.report_size_results`` needs its vocabulary's bytes
(``evaluate.overlap_vocabulary``), its ``audit.audit_vocabulary`` (every entry's text encoded alone) and, per
corpus, the entries its encodings of that corpus's test text never use (``audit.unused_entries``).  The
audits of production vocabularies (100k-200k entries) are the bulk of it, and they depend on nothing but the
tokenizer, so each tokenizer is one task (``side_tasks``): a production row's label once for all corpora, a
trained row per unit.  A run hands these tasks to the pool that evaluates its units (a production task at once,
a trained unit's once the unit is evaluated: it reads the tokenizer the unit saved), and ``side_facts``
computes whatever is left (all of it on one job, or for units a resumed run had finished), the largest
vocabularies first, on ``jobs`` worker processes.  The facts are the same numbers wherever they are computed
(the same functions on the same tokenizer files), so the tables do not depend on ``jobs``.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

from benchmarks.measure.audit import AuditSummary, UnitAuditFacts, audit_vocabulary
from benchmarks.measure.evaluate import is_report_size, overlap_vocabulary
from benchmarks.run.units import Unit, UnitResult
from bpe.base import Tokenizer

if TYPE_CHECKING:
    from benchmarks.run.config import ExperimentConfig


@dataclass(frozen=True)
class SideFacts:
    """A unit's overlap vocabulary and its ``UnitAuditFacts``."""

    vocabulary: frozenset[bytes]
    audit: UnitAuditFacts


#: one task: the units that share one tokenizer (a production label on every corpus, or one trained unit)
SideTask = tuple[Unit, ...]

# what the worker processes need, set before they are forked (never pickled: tokenizers load in the worker)
_worker_tokenizer_of: Callable[[Unit], Tokenizer] | None = None
_worker_texts_of: Callable[[str], Sequence[str]] | None = None


def side_tasks(units: Iterable[Unit], config: ExperimentConfig) -> list[SideTask]:
    """The rows the side tables list (``evaluate.is_report_size``) grouped by tokenizer: a production label once,
    every trained unit alone, the largest vocabularies first (a production row, whose unit has no size, counts
    as the largest): the long tasks first."""
    groups: dict[object, list[Unit]] = {}
    for unit in sorted((unit for unit in units if is_report_size(unit, config)),
                       key=lambda unit: (unit.corpus, unit.tokenizer)):  # fmt: skip
        key = ("production", unit.tokenizer) if unit.row_type == "production" else unit
        groups.setdefault(key, []).append(unit)
    tasks = [tuple(units) for units in groups.values()]
    return sorted(tasks, key=lambda task: -(task[0].vocab_size if task[0].vocab_size is not None else 1 << 40))


def side_facts(results: Sequence[UnitResult], tokenizer_of: Callable[[Unit], Tokenizer],
               texts_of: Callable[[str], Sequence[str]], config: ExperimentConfig, jobs: int,
               known: Mapping[Unit, SideFacts] | None = None) -> dict[Unit, SideFacts]:  # fmt: skip
    """``SideFacts`` of every row the side tables list (``report_size_results`` of each corpus), those of
    ``known`` (computed while the units were evaluated) taken as they are.  ``tokenizer_of`` must give one
    object per production label (``runner.run_tokenizer``); on ``jobs`` > 1 worker processes (forked: the
    loaded corpora and the tokenizer loader are inherited, not pickled) when the platform can fork, else in
    this process."""
    known = known or {}
    listed = side_tasks((result.unit for result in results), config)
    tasks = [task for task in listed if not all(unit in known for unit in task)]
    can_fork = "fork" in multiprocessing.get_all_start_methods()
    if jobs < 2 or len(tasks) < 2 or not can_fork:
        computed = [task_facts(task, tokenizer_of, texts_of) for task in tasks]
    else:
        global _worker_tokenizer_of, _worker_texts_of
        _worker_tokenizer_of, _worker_texts_of = tokenizer_of, texts_of
        try:
            with ProcessPoolExecutor(max_workers=min(jobs, len(tasks)),
                                     mp_context=multiprocessing.get_context("fork")) as pool:  # fmt: skip
                computed = [future.result() for future in [pool.submit(_task_facts_in_worker, task) for task in tasks]]
        finally:
            _worker_tokenizer_of = _worker_texts_of = None
    facts = {unit: known[unit] for task in listed for unit in task if unit in known}
    facts.update((unit, facts) for task_facts in computed for unit, facts in task_facts.items())
    return facts


def _task_facts_in_worker(task: SideTask) -> dict[Unit, SideFacts]:
    assert _worker_tokenizer_of is not None and _worker_texts_of is not None, "worker forked without its loader"
    return task_facts(task, _worker_tokenizer_of, _worker_texts_of)


def task_facts(task: SideTask, tokenizer_of: Callable[[Unit], Tokenizer],
               texts_of: Callable[[str], Sequence[str]]) -> dict[Unit, SideFacts]:  # fmt: skip
    """The facts of the units of one tokenizer: its vocabulary and audit once, its unused entries per unit."""
    tokenizer = tokenizer_of(task[0])
    vocabulary, audit = overlap_vocabulary(tokenizer), audit_vocabulary(tokenizer)
    summary = AuditSummary.of(audit)  # what the tables use: a production audit is large to send back
    facts = {}
    for unit in task:
        facts[unit] = SideFacts(vocabulary, UnitAuditFacts.of(summary, audit, tokenizer, unit.language,
                                                              list(texts_of(unit.corpus))))  # fmt: skip
    return facts
