"""``tokbench compare``: several runs (or exported results folders) side by side.

Rows are each run's tokenizers, labelled ``run/tokenizer``; columns are languages (``language
(corpus)`` where a language has several corpora); one table per metric and evaluation set.  Cells are
the report's: each run's tokenizers at that run's report vocabulary size (``report.at_report_size``),
printed by ``report.cell_texts`` with the confidence interval and the report's markers; the best
ranked cell of a column is bold across all runs.

Runs are comparable only on the same evaluation data.  Every column of every run has a fingerprint:
the manifest's per-evaluation-set fingerprint (``corpora.<id>.eval_fingerprints.<set>``) when every
run being compared records it, else the corpus's content fingerprint (``corpora.<id>.fingerprint``,
over all its roles: stricter, never looser).  Runs whose fingerprints agree on every column they
share go in one table; a run that disagrees starts a separate table whose note names the column and
the two fingerprints.  Morpheme-reference metrics and the two-part parity tables of the report are
not compared (yet): their rows depend on references and pairings each run describes differently.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from benchmarks import render, report
from benchmarks.errors import BenchmarkError
from benchmarks.files import atomic_write_text
from benchmarks.measure.metrics import METRICS
from benchmarks.measure.registry import DESCRIPTIVE

COMPARISON_FILES = ("comparison.md", "comparison.html", "comparison.csv")


@dataclass(frozen=True)
class ComparedTable:
    table: report.Table
    runs: list[str]
    note: str  # why this table stands apart ("" for the first of a metric and set)


def run_names(run_dirs: list[Path]) -> list[str]:
    """Each folder's name; a name given twice gets ``#2``, ``#3``..."""
    names: list[str] = []
    for run_dir in run_dirs:
        name = run_dir.resolve().name
        candidate, count = name, 1
        while candidate in names:
            count += 1
            candidate = f"{name}#{count}"
        names.append(candidate)
    return names


def _fingerprints(run: report.Run, corpus: str, eval_set: str) -> tuple[str, str]:
    """(per-set fingerprint or "", corpus content fingerprint) from the run's manifest."""
    entry = run.manifest.get("corpora", {}).get(corpus, {})
    entry = entry if isinstance(entry, dict) else {}
    per_set = entry.get("eval_fingerprints", {})
    per_set = per_set.get(eval_set, "") if isinstance(per_set, dict) else ""
    corpus_fingerprint = entry.get("fingerprint", "")
    if not corpus_fingerprint:
        raise BenchmarkError(f"{run.run_dir / 'manifest.json'}: corpora.{corpus}.fingerprint is missing: "
                             "cannot tell whether its evaluation data match another run's")  # fmt: skip
    return str(per_set), str(corpus_fingerprint)


def run_cells(run: report.Run, name: str) -> pd.DataFrame:
    """Every comparable cell of a run (report size, flagged), labelled ``name/tokenizer``, with fingerprints."""
    rows = run.results[(run.results["reference"] == "")]
    rows = rows[rows["metric"].map(lambda metric: METRICS[metric].group not in ("parity",))]
    rows = rows[rows["eval_set"].isin(["test", "eval"])]
    parts = []
    for (_, _), group in rows.groupby(["metric", "eval_set"], sort=True):
        parts.append(report.at_report_size(group, run))
    cells = pd.concat(parts, ignore_index=True) if parts else rows.head(0)
    prints = [_fingerprints(run, corpus, eval_set) for corpus, eval_set in zip(cells["corpus"], cells["eval_set"],
                                                                               strict=True)]  # fmt: skip
    return cells.assign(run=name, source_tokenizer=cells["tokenizer"],
                        tokenizer=[f"{name}/{t}" for t in cells["tokenizer"]],
                        set_fingerprint=[p[0] for p in prints], corpus_fingerprint=[p[1] for p in prints])  # fmt: skip


def _group_runs(cells: pd.DataFrame, names: list[str]) -> list[tuple[list[str], str]]:
    """Runs in groups whose fingerprints agree on every shared (language, corpus); each group's note."""
    use_set = bool((cells["set_fingerprint"] != "").all())
    key = "set_fingerprint" if use_set else "corpus_fingerprint"
    maps = {name: dict(zip(zip(group["language"], group["corpus"], strict=True), group[key], strict=True))
            for name, group in cells.groupby("run", sort=False)}  # fmt: skip
    groups: list[tuple[list[str], dict, str]] = []
    for name in [n for n in names if n in maps]:
        mapping, reasons = maps[name], []
        for members, merged, _ in groups:
            shared = set(mapping) & set(merged)
            differing = sorted(column for column in shared if mapping[column] != merged[column])
            if shared and not differing:
                members.append(name)
                merged.update(mapping)
                break
            if differing:
                language, corpus = differing[0]
                reasons.append(f"`{name}` evaluated {language} (`{corpus}`) on other data than `{members[0]}` "
                               f"({'set' if use_set else 'corpus'} fingerprint {mapping[differing[0]][:12]} "
                               f"against {merged[differing[0]][:12]})")  # fmt: skip
            else:
                reasons.append(f"`{name}` shares no language and corpus with `{members[0]}`")
        else:
            groups.append(([name], dict(mapping), "; ".join(reasons)))
    return [(members, note) for members, _, note in groups]


def compare_runs(run_dirs: list[Path]) -> list[ComparedTable]:
    if len(run_dirs) < 1:
        raise BenchmarkError("compare: give at least one run directory or exported results folder")
    names = run_names(run_dirs)
    cells = pd.concat([run_cells(report.load_run(d), n) for d, n in zip(run_dirs, names, strict=True)],
                      ignore_index=True)  # fmt: skip
    tables: list[ComparedTable] = []
    for (metric, eval_set), group in cells.groupby(["metric", "eval_set"], sort=True):
        info = METRICS[metric]
        ranked = info.higher_is_better is not DESCRIPTIVE
        for index, (members, note) in enumerate(_group_runs(group, names)):
            subset = report.column_keys(group[group["run"].isin(members)])
            order = {name: i for i, name in enumerate(names)}
            slug = f"{metric}--{eval_set}" + (f"--{index + 1}" if index else "")
            table = report.build_table(
                subset, ranked=ranked, slug=slug, heading=f"{info.label} (`{metric}`) on `{eval_set}`"
                + (f", table {index + 1}" if index else ""),
                caption=f"{info.label} (`{metric}`) on `{eval_set}` for {', '.join(f'`{m}`' for m in members)}",
                group=info.group, column_header="language", notes=[note] if note else [],
            )  # fmt: skip
            # rows by run (in the order given), then the report's order within a run
            by_run = sorted(table.tokenizers, key=lambda t: order[t.split("/", 1)[0]])
            tables.append(ComparedTable(replace(table, tokenizers=by_run), members, note))
    return tables


#: what a cell shows, above the tables of both formats
LEGEND = ("Cells: value [CI] at each run's report vocabulary size (the CI level is each run's own); bold = best "
          f"of a column across the runs; {report.UNK_MARK} = not ranked, unknown-token share above the run's "
          f"threshold; {report.BASELINE_MARK} = not ranked, a boundary baseline; {report.REACHED_MARK}N = the "
          "tokenizer reached N ids, not the size requested.")  # fmt: skip


def markdown(tables: list[ComparedTable], names: list[str]) -> str:
    lines = ["# tokbench comparison", "", f"Runs: {', '.join(f'`{n}`' for n in names)}. " + render.md_escape(LEGEND)]
    for compared in tables:
        lines += ["", f"## {compared.table.heading}", ""]
        lines += [f"*Separate table: {render.md_escape(compared.note)}.*", ""] if compared.note else []
        lines.append(report.markdown_table(compared.table))
    return "\n".join(lines) + "\n"


def html_page(tables: list[ComparedTable], names: list[str]) -> str:
    """A self-contained page: the same tables, no scripts, no network."""
    body = []
    for compared in tables:
        table = compared.table
        body.append(f"<h2>{html.escape(table.heading.replace('`', ''))}</h2>")
        if compared.note:
            body.append(f"<p class=note>Separate table: {html.escape(compared.note.replace('`', ''))}.</p>")
        head = "".join(f"<th>{html.escape(label)}</th>" for label in ["tokenizer", *table.column_labels])
        rows = []
        for tokenizer in table.tokenizers:
            cells = [report.cell_texts(table.cell(tokenizer, c), lambda v: f"<b>{v}</b>", html.escape)
                     for c in table.columns]  # fmt: skip
            rows.append(f"<tr><th>{html.escape(tokenizer)}</th>" + "".join(
                f"<td>{value} <small>{ci}</small> {reached}</td>" for value, ci, reached in cells) + "</tr>")
        body.append(f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>")
    style = ("body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin-bottom:1.5em}"
             "td,th{border:1px solid #ccc;padding:.25em .5em;text-align:right}th{text-align:left}"
             "small{color:#555}.note{color:#a40}")  # fmt: skip
    title = f"tokbench comparison: {', '.join(names)}"
    return (f"<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8><title>{html.escape(title)}</title>"
            f"<style>{style}</style></head><body><h1>{html.escape(title)}</h1>\n<p>{html.escape(LEGEND)}</p>\n"
            + "\n".join(body)
            + "\n</body></html>\n")  # fmt: skip


def csv_text(tables: list[ComparedTable]) -> str:
    """Every table's cells in long form (``report.csv_table``), with the table they belong to."""
    parts = []
    for compared in tables:
        frame = pd.read_csv(pd.io.common.StringIO(report.csv_table(compared.table)), keep_default_na=False)
        parts.append(frame.assign(table=compared.table.slug))
    frame = pd.concat(parts, ignore_index=True)
    return frame[["table", *[c for c in frame.columns if c != "table"]]].to_csv(index=False, lineterminator="\n")


def write_comparison(run_dirs: list[Path], out_dir: Path) -> Path:
    """Write DIR/comparison.{md,html,csv}; nothing is written when a run cannot be read."""
    tables = compare_runs(run_dirs)
    if not tables:
        raise BenchmarkError("compare: the runs hold no comparable metric (test or eval set, no morpheme reference)")
    names = run_names(run_dirs)
    atomic_write_text(out_dir / "comparison.md", markdown(tables, names))
    atomic_write_text(out_dir / "comparison.html", html_page(tables, names))
    atomic_write_text(out_dir / "comparison.csv", csv_text(tables))
    return out_dir
