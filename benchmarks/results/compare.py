"""``tokbench compare``: several runs (or exported results folders) side by side.

Rows are each run's tokenizers, labelled ``run/tokenizer``; columns are languages (``language
(corpus)`` where a language has several corpora); one table per metric and evaluation set.  Cells are
the report's: each run's tokenizers at that run's report vocabulary size (``report.at_report_size``),
printed by ``report.cell_texts`` with the confidence interval and the report's markers; the best
ranked cell of a column is bold across all runs.

Tables come in the report's order: one section per metric group of the registry (``GROUPS`` order), in it
the metrics in registry order (``METRICS``), each metric's evaluation sets in ``report.EVAL_SETS`` order,
then a metric's separate tables (below) in the order of the runs given.  ``metrics`` and ``languages``
select tables and columns; the order stays the registry's whatever the order they are given in.

Runs are comparable only on the same evaluation data.  Every column of every run has a fingerprint:
the manifest's per-evaluation-set fingerprint (``corpora.<id>.eval_fingerprints.<set>``) when every
run being compared records it, else the corpus's content fingerprint (``corpora.<id>.fingerprint``,
over all its roles: stricter, never looser).  Runs whose fingerprints agree on every column they
share go in one table; a run that disagrees starts a separate table whose note names the column and
the two fingerprints.  Only the columns shown are compared: a language left out with ``languages``
cannot split a table.  Morpheme-reference metrics and the two-part parity tables of the report are
not compared (yet): their rows depend on references and pairings each run describes differently.

The page is the report's document (``benchmarks.report.document`` blocks): ``comparison.md`` is
``to_markdown`` of it and ``comparison.html`` ``to_html`` (navigation, sortable columns, the language and
family filter, the report's style), each table's LaTeX and CSV under ``tables/`` as the report writes them.
"""

from __future__ import annotations

import difflib
import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from benchmarks import report
from benchmarks.errors import BenchmarkError
from benchmarks.files import atomic_write_text
from benchmarks.measure.metrics import GROUPS, METRICS
from benchmarks.measure.registry import DESCRIPTIVE
from benchmarks.report.document import TABLES_DIR, Block, Code, Heading, Inline, Paragraph, TableBlock, Verbatim, text
from benchmarks.report.document import to_markdown as document_markdown

COMPARISON_FILES = ("comparison.md", "comparison.html", "comparison.csv")
#: groups whose tables compare cannot lay out side by side (their rows pair runs' sentences differently)
NOT_COMPARED_GROUPS = ("parity",)


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
    rows = rows[rows["metric"].map(lambda metric: METRICS[metric].group not in NOT_COMPARED_GROUPS)]
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


def _in_order(names: set[str], order: Sequence[str]) -> list[str]:
    return [name for name in order if name in names]


def select_metrics(cells: pd.DataFrame, metrics: Sequence[str] | None) -> pd.DataFrame:
    """The cells of the metrics named (``--metric``), every cell when None.  A name the registry does not know,
    or one these runs hold no comparable cell of, is an error listing the names that can be chosen."""
    if metrics is None:
        return cells
    held = _in_order(set(cells["metric"]), list(METRICS))
    choices = ", ".join(held) or "none"
    for name in metrics:
        if name not in METRICS:
            close = difflib.get_close_matches(name, list(METRICS), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise BenchmarkError(f"compare --metric: unknown metric {name!r}{hint}; the metrics of these runs: "
                                 f"{choices} (every metric: docs/metrics.md)", code="unknown_metric", value=name,
                                 field="--metric")  # fmt: skip
        if name not in held:
            why = (f"{METRICS[name].group} metrics are not compared" if METRICS[name].group in NOT_COMPARED_GROUPS
                   else "no run holds it without a morpheme reference on a test or eval set")  # fmt: skip
            raise BenchmarkError(f"compare --metric: {name!r} cannot be compared in these runs ({why}); the metrics "
                                 f"of these runs: {choices}", code="metric_not_compared", value=name,
                                 field="--metric")  # fmt: skip
    return cells[cells["metric"].isin(set(metrics))]


def select_languages(cells: pd.DataFrame, languages: Sequence[str] | None) -> pd.DataFrame:
    """The cells of the languages named (``--language``, FLORES-200 codes such as ``kor_Hang``), every cell when
    None.  A language no run evaluated (among the selected metrics) is an error listing those they did."""
    if languages is None:
        return cells
    held = sorted(set(cells["language"]))
    for code in languages:
        if code not in held:
            raise BenchmarkError(f"compare --language: no run compared holds {code!r} (on the metrics selected); "
                                 f"their languages: {', '.join(held) or 'none'}", code="language_not_compared",
                                 value=code, field="--language")  # fmt: skip
    return cells[cells["language"].isin(set(languages))]


def _table_order(metric: str, eval_set: str) -> tuple[int, int, int, str]:
    """Registry order: the metric's group, the metric, then its evaluation set (``report.EVAL_SETS`` first)."""
    groups, metrics, sets = list(GROUPS), list(METRICS), list(report.EVAL_SETS)
    known = eval_set in sets
    return (groups.index(METRICS[metric].group), metrics.index(metric), sets.index(eval_set) if known else len(sets),
            "" if known else eval_set)  # fmt: skip


def compare_runs(run_dirs: list[Path], metrics: Sequence[str] | None = None,
                 languages: Sequence[str] | None = None) -> list[ComparedTable]:  # fmt: skip
    """The comparison's tables in registry order (module docstring), of the ``metrics`` and ``languages`` given."""
    if len(run_dirs) < 1:
        raise BenchmarkError("compare: give at least one run directory or exported results folder")
    names = run_names(run_dirs)
    cells = pd.concat([run_cells(report.load_run(d), n) for d, n in zip(run_dirs, names, strict=True)],
                      ignore_index=True)  # fmt: skip
    cells = select_languages(select_metrics(cells, metrics), languages)
    order = {name: i for i, name in enumerate(names)}
    keys = sorted({(m, s) for m, s in zip(cells["metric"], cells["eval_set"], strict=True)},
                  key=lambda key: _table_order(*key))  # fmt: skip
    tables: list[ComparedTable] = []
    for metric, eval_set in keys:
        group = cells[(cells["metric"] == metric) & (cells["eval_set"] == eval_set)]
        info = METRICS[metric]
        ranked = info.higher_is_better is not DESCRIPTIVE
        for index, (members, note) in enumerate(_group_runs(group, names)):
            subset = report.column_keys(group[group["run"].isin(members)])
            slug = f"{metric}--{eval_set}" + (f"--{index + 1}" if index else "")
            runs = ", ".join(f"`{m}`" for m in members)
            what = report.EVAL_SETS.get(eval_set, "an evaluation set")
            caption = (f"{info.label} (`{metric}`) on `{eval_set}`, {what}, for {runs}, each at its run's report "
                       "vocabulary size: value with its confidence interval in brackets"
                       f"{'; best per language across the runs in bold' if ranked else '; descriptive, not ranked'}.")
            table = report.build_table(
                subset, ranked=ranked, slug=slug, heading=f"{info.label} (`{metric}`) on `{eval_set}`"
                + (f", table {index + 1}" if index else ""), caption=caption, group=info.group,
                column_header="language", notes=[f"Separate table: {note}."] if note else [],
            )  # fmt: skip
            # rows by run (in the order given), then the report's order within a run
            by_run = sorted(table.tokenizers, key=lambda t: order[t.split("/", 1)[0]])
            tables.append(ComparedTable(replace(table, tokenizers=by_run), members, note))
    return tables


#: what a cell shows, above the tables of both formats
LEGEND = ("Cells: value [CI] at each run's report vocabulary size (the CI level is each run's own); bold = best "
          f"of a column across the runs; {report.UNK_MARK} = not ranked, unknown-token share above the run's "
          f"threshold; {report.BASELINE_MARK} = not ranked, a boundary baseline; {report.REACHED_MARK}N = the "
          "tokenizer reached N ids, not the size requested; ↓ / ↑ = lower / higher is better.")  # fmt: skip


def _names(names: Sequence[str]) -> Inline:
    parts: list[Inline] = []
    for index, name in enumerate(names):
        parts += [", "] if index else []
        parts.append(Code(name))
    return tuple(parts)


def blocks(tables: list[ComparedTable], names: list[str], metrics: Sequence[str] | None = None,
           languages: Sequence[str] | None = None) -> list[Block]:  # fmt: skip
    """The comparison as the report's document: the title, the legend, what was selected, then one section per
    metric group holding its tables (the order of ``tables``: registry order)."""
    out: list[Block] = [Heading(1, ("tokbench comparison: ", _names(names))), Paragraph(("Runs: ", _names(names),
                        ". ", LEGEND))]  # fmt: skip
    chosen: list[Inline] = []
    for flag, values in (("--metric", metrics), ("--language", languages)):
        if values:
            chosen += [*(["; "] if chosen else []), Code(flag), " ", _names(list(dict.fromkeys(values)))]
    if chosen:
        out.append(Paragraph(("Selected with ", *chosen, ".")))
    for group in GROUPS:
        in_group = [compared.table for compared in tables if compared.table.group == group]
        if in_group:
            out.append(Heading(2, Verbatim(GROUPS[group])))
            for table in in_group:
                out += [Heading(3, text(table.heading)), TableBlock(table)]
    return out


def markdown(tables: list[ComparedTable], names: list[str], metrics: Sequence[str] | None = None,
             languages: Sequence[str] | None = None) -> str:  # fmt: skip
    """comparison.md: the document as the report prints report.md."""
    return document_markdown(blocks(tables, names, metrics, languages))


def html_page(tables: list[ComparedTable], names: list[str], metrics: Sequence[str] | None = None,
              languages: Sequence[str] | None = None) -> str:  # fmt: skip
    """comparison.html: the document as the report prints report.html (self-contained: no plots, no network)."""
    from benchmarks.report.html import to_html

    return to_html(blocks(tables, names, metrics, languages), Path(os.devnull))


def csv_text(tables: list[ComparedTable]) -> str:
    """Every table's cells in long form (``report.csv_table``), with the table they belong to."""
    parts = []
    for compared in tables:
        frame = pd.read_csv(pd.io.common.StringIO(report.csv_table(compared.table)), keep_default_na=False)
        parts.append(frame.assign(table=compared.table.slug))
    frame = pd.concat(parts, ignore_index=True)
    return frame[["table", *[c for c in frame.columns if c != "table"]]].to_csv(index=False, lineterminator="\n")


def write_comparison(run_dirs: list[Path], out_dir: Path, metrics: Sequence[str] | None = None,
                     languages: Sequence[str] | None = None) -> Path:  # fmt: skip
    """Write DIR/comparison.{md,html,csv} and DIR/tables/<slug>.{tex,csv}; nothing is written when a run cannot
    be read or the selection is refused.  The new tables/ replaces an earlier comparison's whole."""
    tables = compare_runs(run_dirs, metrics, languages)
    if not tables:
        raise BenchmarkError("compare: the runs hold no comparable metric (test or eval set, no morpheme reference)",
                             code="nothing_to_compare")  # fmt: skip
    names = run_names(run_dirs)
    out_dir.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=out_dir, prefix=".comparison-"))
    try:
        (staging / TABLES_DIR).mkdir()
        for compared in tables:
            table = compared.table
            (staging / TABLES_DIR / f"{table.slug}.tex").write_text(report.latex_table(table), encoding="utf-8")
            (staging / TABLES_DIR / f"{table.slug}.csv").write_text(report.csv_table(table), encoding="utf-8")
        page, text_md = html_page(tables, names, metrics, languages), markdown(tables, names, metrics, languages)
        if (out_dir / TABLES_DIR).exists():
            os.replace(out_dir / TABLES_DIR, staging / f"previous-{TABLES_DIR}")
        os.replace(staging / TABLES_DIR, out_dir / TABLES_DIR)
        atomic_write_text(out_dir / "comparison.md", text_md)
        atomic_write_text(out_dir / "comparison.html", page)
        atomic_write_text(out_dir / "comparison.csv", csv_text(tables))
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return out_dir
