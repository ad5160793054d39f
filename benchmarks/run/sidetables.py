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
(the same functions on the same tokenizer files), so the tables do not depend on ``jobs``.  ``audit_tables``
lays the audit facts out as ``audit.csv`` and ``audit-entries.csv`` (``run_audit_tables``: with every fact
computed in this process, one tokenizer after the other).
"""

from __future__ import annotations

import math
import multiprocessing
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pandas as pd

from benchmarks.measure.audit import (
    AUDIT_COLUMNS,
    AUDIT_ENTRY_COLUMNS,
    UNUSED_ROLE,
    AuditSummary,
    UnitAuditFacts,
    VocabularyAudit,
    audit_vocabulary,
)
from benchmarks.measure.evaluate import overlap_vocabulary
from benchmarks.run.evaluate import is_report_size, report_size_results
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


# --------------------------------------------------------------------------- the audit tables


def run_audit_tables(results: Sequence[UnitResult], tokenizer_of: Callable[[Unit], Tokenizer],
                     texts_of: Callable[[str], Sequence[str]], config: ExperimentConfig,
                     facts: Mapping[Unit, UnitAuditFacts] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``audit.csv`` and ``audit-entries.csv`` of a run (``audit_tables``), with every unit's ``audit_facts``
    computed here, one tokenizer after the other, unless ``facts`` gives them (computed elsewhere, e.g. on
    several processes: ``side_facts``)."""
    if facts is None:
        facts = audit_facts(results, tokenizer_of, texts_of, config)
    return audit_tables(results, facts, texts_of, config)


def audit_facts(results: Sequence[UnitResult], tokenizer_of: Callable[[Unit], Tokenizer],
                texts_of: Callable[[str], Sequence[str]], config: ExperimentConfig) -> dict[Unit, UnitAuditFacts]:
    """The ``UnitAuditFacts`` of every row ``audit_tables`` lists; a tokenizer object shared by several rows
    (a production row on every corpus) is audited once."""
    audits: dict[int, tuple[Tokenizer, VocabularyAudit, AuditSummary]] = {}  # by tokenizer: a production row once
    facts = {}
    for corpus in sorted({result.unit.corpus for result in results}):
        texts = list(texts_of(corpus))
        for result in report_size_results(results, corpus, config):
            tokenizer = tokenizer_of(result.unit)
            if id(tokenizer) not in audits:
                audit = audit_vocabulary(tokenizer)
                audits[id(tokenizer)] = (tokenizer, audit, AuditSummary.of(audit))
            _, audit, summary = audits[id(tokenizer)]
            facts[result.unit] = UnitAuditFacts.of(summary, audit, tokenizer, result.unit.language, texts)
    return facts


def audit_tables(results: Sequence[UnitResult], facts: Mapping[Unit, UnitAuditFacts],
                 texts_of: Callable[[str], Sequence[str]], config: ExperimentConfig
                 ) -> tuple[pd.DataFrame, pd.DataFrame]:  # fmt: skip
    """``audit.csv`` and ``audit-entries.csv`` of a run: for every tokenizer row of each corpus that
    ``vocab_overlap`` pairs (``evaluate.report_size_results``: trained rows at the report vocabulary size,
    every production row), its ``audit_vocabulary`` counts by status and by script (with each script's share
    of the entries), and the entries it never used on the corpus's ``UNUSED_ROLE`` text (``unused_entries``;
    ``unused_reachable``: those of them that are reachable); and one row per unreachable entry of those rows
    (a production row's once, with corpus ``""``: its vocabulary is the same on every corpus).

    ``facts`` gives each row's audit and unused entries (``audit_facts``), ``texts_of`` a corpus's test texts
    (empty: no "never used" count).  Rows in corpus, then label order (``""`` first); entries in id order."""
    rows, unreachable, listed = [], [], set()
    for corpus in sorted({result.unit.corpus for result in results}):
        texts = list(texts_of(corpus))
        for result in report_size_results(results, corpus, config):
            unit = result.unit
            audit, never = facts[unit].audit, facts[unit].never
            statuses, scripts, total = audit.statuses, audit.scripts, audit.entries
            rows.append([corpus, unit.language, unit.tokenizer, unit.kind, unit.row_type, unit.vocab_size, total,
                         *statuses.values(), *scripts.values(),
                         *(count / total if total else math.nan for count in scripts.values()),
                         UNUSED_ROLE, len(texts), math.nan if never is None else len(never.never_used),
                         math.nan if never is None else never.by_status["reachable"]])  # fmt: skip
            # a production row's entries once, for every corpus (corpus ""); a trained row's per corpus
            where = "" if unit.row_type == "production" else corpus
            if (where, unit.tokenizer) not in listed:
                listed.add((where, unit.tokenizer))
                unreachable += [[where, unit.tokenizer, *entry.row()] for entry in audit.unreachable]
    frame = pd.DataFrame(rows, columns=AUDIT_COLUMNS).astype({"vocab_size": "Int64", "unused": "Int64",
                                                              "unused_reachable": "Int64"})  # fmt: skip
    unreachable.sort(key=lambda row: (row[0], row[1], row[2]))
    return frame, pd.DataFrame(unreachable, columns=AUDIT_ENTRY_COLUMNS)
