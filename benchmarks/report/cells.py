"""Choosing and flagging the cells of a report table: one cell per (tokenizer, column) at the report
vocabulary size, why a cell is not ranked, the reached size printed beside it, and the best cells of a
column (the conventions are those of the package docstring, ``benchmarks.report``)."""

from __future__ import annotations

import math
from collections.abc import Iterator

import pandas as pd

from benchmarks.errors import BenchmarkError
from benchmarks.files import ROW_TYPES
from benchmarks.measure.metrics import METRICS
from benchmarks.measure.registry import Metric, boundary_baseline_of
from benchmarks.report import findings
from benchmarks.report.load import Run

CELL_KEYS = ["language", "corpus", "eval_set", "reference", "metric", "tokenizer"]


def tokenizer_order(frame: pd.DataFrame) -> list[str]:
    """Row order: families, reference rows, published rows (row types in ``ROW_TYPES`` order, unknown ones
    last); each sorted by label."""
    kinds: dict[str, str] = {}
    for tokenizer, row_type in zip(frame["tokenizer"], frame["row_type"], strict=True):
        kinds.setdefault(tokenizer, row_type)  # each tokenizer's first row
    rank = {row_type: i for i, row_type in enumerate(ROW_TYPES)}
    return sorted(kinds, key=lambda label: (rank.get(kinds[label], len(ROW_TYPES)), label))


def add_row_labels(frame: pd.DataFrame) -> pd.DataFrame:
    """Label rows by language; a language with several (corpus, eval set) pairs gets one row for each,
    named by what differs: "tur_Latn (test)", "tur_Latn (ud-tur)" or "tur_Latn (ud-tur, test)"."""
    combos = frame[["language", "corpus", "eval_set"]].drop_duplicates()
    labels: dict[tuple[str, str, str], str] = {}
    for language, group in combos.groupby("language", sort=True):
        one_corpus, one_set = group["corpus"].nunique() == 1, group["eval_set"].nunique() == 1
        for corpus, eval_set in zip(group["corpus"], group["eval_set"], strict=True):
            if len(group) == 1:
                labels[language, corpus, eval_set] = language
            elif one_corpus:
                labels[language, corpus, eval_set] = f"{language} ({eval_set})"
            elif one_set:
                labels[language, corpus, eval_set] = f"{language} ({corpus})"
            else:
                labels[language, corpus, eval_set] = f"{language} ({corpus}, {eval_set})"
    return frame.assign(row=[labels[key] for key in zip(frame["language"], frame["corpus"], frame["eval_set"],
                                                         strict=True)])  # fmt: skip


def at_report_size(rows: pd.DataFrame, run: Run) -> pd.DataFrame:
    """One row per cell: published rows as they are, trained rows at the run size closest to the report
    size, by requested or by reached size (``run.match``; equal distance: the smaller requested size);
    each cell flagged (``flag_cells``) and labelled (``add_row_labels``)."""
    target = run.report_vocab_size
    rows = rows if rows.index.is_unique else rows.reset_index(drop=True)
    sized = rows["vocab_size"].notna()
    # the choice on the key columns only; the chosen rows are taken whole once
    keys = rows.loc[sized, [*CELL_KEYS, "vocab_size", "reached"]]
    basis = keys["vocab_size"].astype("float64")
    if run.match == "reached":
        basis = keys["reached"].where(keys["reached"].notna(), basis)
    keys = keys.assign(distance=(basis - target).abs()).sort_values([*CELL_KEYS, "distance", "vocab_size"],
                                                                    kind="stable")  # fmt: skip
    chosen = rows.loc[keys.drop_duplicates(CELL_KEYS).index]
    cells = pd.concat([chosen, rows[~sized]], ignore_index=True)
    duplicated = cells[CELL_KEYS].duplicated()
    if duplicated.any():
        first = cells[duplicated].iloc[0]
        raise BenchmarkError(
            f"results hold two {first['metric']} rows for {first['tokenizer']} on {first['corpus']} "
            f"({first['eval_set']}) at one vocabulary size",
            code="duplicate_rows",
            value=first["tokenizer"],
        )
    return flag_cells(add_row_labels(cells), run)


def caveats(run: Run) -> dict[tuple[str, str], str]:
    """(corpus, reference) -> the caveat the manifest gives for it (e.g. an unreliable MorphScore file)."""
    found = {}
    corpora = run.manifest.get("corpora")
    for corpus, entry in (corpora.items() if isinstance(corpora, dict) else []):
        references = entry.get("references", {}) if isinstance(entry, dict) else {}
        for name, facts in (references.items() if isinstance(references, dict) else []):
            if isinstance(facts, dict) and facts.get("caveat"):
                found[corpus, name] = str(facts["caveat"])
    return found


def flag_cells(cells: pd.DataFrame, run: Run) -> pd.DataFrame:
    """Why a cell is not ranked (``not_ranked``: "unk", "baseline", "unreliable" or ""), and the reached
    size to print beside it (``reached_mark``: "" when the tokenizer reached the size requested)."""
    unreliable = caveats(run)
    morphology = cells["metric"].map(lambda metric: METRICS[metric].group == "morphology")
    reasons = []
    columns = (cells["corpus"], cells["reference"], cells["kind"], cells["unk_share"], morphology)
    for corpus, reference, kind, unk_share, is_morphology in zip(*columns, strict=True):
        if (corpus, reference) in unreliable:
            reasons.append("unreliable")
        elif is_morphology and boundary_baseline_of(kind) is not None:
            reasons.append("baseline")
        elif unk_share > run.unk_threshold:
            reasons.append("unk")
        else:
            reasons.append("")
    short = cells["reached"].notna() & cells["vocab_size"].notna() & (cells["reached"] != cells["vocab_size"])
    marks = [f"{int(reached):,}" if is_short else "" for reached, is_short in zip(cells["reached"], short, strict=True)]
    return cells.assign(not_ranked=reasons, reached_mark=marks)


def _ranked_columns(cells: pd.DataFrame) -> Iterator[tuple[str, Metric, list[int]]]:
    """Per column of a ranked metric: the positions of its cells that may be ranked (no ``not_ranked``
    reason, a finite value), when there are two of them or more."""
    metrics, reasons, values = cells["metric"].tolist(), cells["not_ranked"].tolist(), cells["value"].tolist()
    columns: dict[str, list[int]] = {}
    for position, column in enumerate(cells["column"]):
        columns.setdefault(column, []).append(position)
    for column, positions in columns.items():
        info = METRICS[metrics[positions[0]]]
        candidates = [p for p in positions if reasons[p] == "" and math.isfinite(values[p])]
        if info.higher_is_better is not None and len(candidates) >= 2:
            yield column, info, candidates


def constant_columns(cells: pd.DataFrame) -> dict[str, str]:
    """The columns whose ranked cells all print the same value (column -> that value): none is best there."""
    values = cells["value"].tolist()
    found = {}
    for column, info, candidates in _ranked_columns(cells):
        printed = {findings.format_value(info, values[p]) for p in candidates}
        if len(printed) == 1:
            found[column] = printed.pop()
    return found


def mark_best(cells: pd.DataFrame, ranked: bool) -> pd.Series:
    """True for the best ranked cell(s) of each column (by its metric's direction); ties as printed are all
    best.  Only cells without a ``not_ranked`` reason count, only when a column has two of them, and not
    when they all print the same value (``constant_columns``: the table's notes say so instead)."""
    best = [False] * len(cells)
    if not ranked:
        return pd.Series(best, index=cells.index)
    values = cells["value"].tolist()
    for _, info, candidates in _ranked_columns(cells):
        chosen = [values[p] for p in candidates]
        top = findings.format_value(info, max(chosen) if info.higher_is_better else min(chosen))
        if all(findings.format_value(info, value) == top for value in chosen):
            continue
        for p in candidates:
            best[p] = findings.format_value(info, values[p]) == top
    return pd.Series(best, index=cells.index)



def column_keys(cells: pd.DataFrame) -> pd.DataFrame:
    """Columns of a metric table: one per language, or per (language, corpus) when a language has several."""
    corpora = cells.groupby("language")["corpus"].nunique()
    labels = [language if corpora[language] == 1 else f"{language} ({corpus})"
              for language, corpus in zip(cells["language"], cells["corpus"], strict=True)]  # fmt: skip
    return cells.assign(column=labels)

