"""The facts behind a run's side tables (the ``vocab_overlap`` rows, ``audit.csv``, ``audit-entries.csv``), computed on
several processes.

Each tokenizer row of ``evaluate.report_size_results`` needs its vocabulary's bytes
(``evaluate.overlap_vocabulary``), its ``audit.audit_vocabulary`` (every entry's text encoded alone) and, per
corpus, the entries its encodings of that corpus's test text never use (``audit.unused_entries``).  The
audits of production vocabularies (100k-200k entries) are the bulk of it, and they depend on nothing but the
tokenizer, so each tokenizer is one task: a production row's label once for all corpora, a trained row per
unit, the largest vocabularies first, on ``jobs`` worker processes.  The facts are the same numbers wherever
they are computed (the same functions on the same tokenizer files), so the tables do not depend on ``jobs``.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

from benchmarks.measure.audit import UnitAuditFacts, audit_vocabulary, unused_entries
from benchmarks.measure.evaluate import overlap_vocabulary, report_size_results
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
_Task = tuple[Unit, ...]

# what the worker processes need, set before they are forked (never pickled: tokenizers load in the worker)
_worker_tokenizer_of: Callable[[Unit], Tokenizer] | None = None
_worker_texts_of: Callable[[str], Sequence[str]] | None = None


def side_facts(results: Sequence[UnitResult], tokenizer_of: Callable[[Unit], Tokenizer],
               texts_of: Callable[[str], Sequence[str]], config: ExperimentConfig,
               jobs: int) -> dict[Unit, SideFacts]:  # fmt: skip
    """``SideFacts`` of every row the side tables list (``report_size_results`` of each corpus).
    ``tokenizer_of`` must give one object per production label (``runner.run_tokenizer``); on ``jobs`` > 1
    worker processes (forked: the loaded corpora and the tokenizer loader are inherited, not pickled) when
    the platform can fork, else in this process."""
    tasks = _tasks(results, config)
    can_fork = "fork" in multiprocessing.get_all_start_methods()
    if jobs < 2 or len(tasks) < 2 or not can_fork:
        computed = [_task_facts(task, tokenizer_of, texts_of) for task in tasks]
    else:
        global _worker_tokenizer_of, _worker_texts_of
        _worker_tokenizer_of, _worker_texts_of = tokenizer_of, texts_of
        try:
            # largest vocabularies first: they are the long tasks
            order = sorted(range(len(tasks)), key=lambda i: -_vocab_size_hint(tasks[i]))
            with ProcessPoolExecutor(max_workers=min(jobs, len(tasks)),
                                     mp_context=multiprocessing.get_context("fork")) as pool:  # fmt: skip
                futures = {i: pool.submit(_task_facts_in_worker, tasks[i]) for i in order}
                computed = [futures[i].result() for i in range(len(tasks))]
        finally:
            _worker_tokenizer_of = _worker_texts_of = None
    return {unit: facts for task_facts in computed for unit, facts in task_facts.items()}


def _tasks(results: Sequence[UnitResult], config: ExperimentConfig) -> list[_Task]:
    """The side tables' rows grouped by tokenizer: a production label once, every trained unit alone."""
    groups: dict[object, list[Unit]] = {}
    for corpus in sorted({result.unit.corpus for result in results}):
        for result in report_size_results(results, corpus, config):
            unit = result.unit
            key = ("production", unit.tokenizer) if unit.row_type == "production" else unit
            groups.setdefault(key, []).append(unit)
    return [tuple(units) for units in groups.values()]


def _vocab_size_hint(task: _Task) -> int:
    """A task's vocabulary size without loading a tokenizer: a trained unit's own size; a production row
    (no size in its unit) counts as the largest."""
    size = task[0].vocab_size
    return size if size is not None else 1 << 40


def _task_facts_in_worker(task: _Task) -> dict[Unit, SideFacts]:
    assert _worker_tokenizer_of is not None and _worker_texts_of is not None, "worker forked without its loader"
    return _task_facts(task, _worker_tokenizer_of, _worker_texts_of)


def _task_facts(task: _Task, tokenizer_of: Callable[[Unit], Tokenizer],
                texts_of: Callable[[str], Sequence[str]]) -> dict[Unit, SideFacts]:  # fmt: skip
    """The facts of the units of one tokenizer: its vocabulary and audit once, its unused entries per unit."""
    tokenizer = tokenizer_of(task[0])
    vocabulary, audit = overlap_vocabulary(tokenizer), audit_vocabulary(tokenizer)
    facts = {}
    for unit in task:
        texts = list(texts_of(unit.corpus))
        never = unused_entries(audit, tokenizer, {unit.language: texts})[0] if texts else None
        facts[unit] = SideFacts(vocabulary, UnitAuditFacts(audit, never))
    return facts
