"""The paper-style report of one run directory.

``write_report(RUN_DIR)`` reads only ``RUN_DIR/results.parquet`` (or
``results.csv``) and ``RUN_DIR/manifest.json`` and writes, atomically:

* ``report.md`` - run facts, one table per metric (per morpheme reference for
  morphology) of languages x tokenizers at the report vocabulary size, value
  with its bootstrap CI, the best value per row in bold, links to the plots
  with findings computed from the numbers (``benchmarks.findings``);
* ``tables/<metric>.tex`` and ``tables/morphology--<reference>.tex`` (booktabs),
  each with a ``.csv`` of its cells (full precision) beside it;
* ``plots/*.png`` (``benchmarks.plots``);
* the section "How the tokenizers split": the run's example sentences (``examples.json``) encoded by
  every tokenizer of the run, re-loaded from ``RUN_DIR/tokenizers/`` and the manifest.

Conventions (stated so every output is reproducible):

* Report vocabulary size: ``manifest.config.report.vocab_size``.  A cell whose
  tokenizer was not run at that size uses the closest size it was run at
  (equal distance: the smaller size) and the table says so.  Production rows
  have no vocabulary size and are always shown.
* Rows are languages (sorted by code); a language evaluated on several
  corpora/eval sets gets one row per corpus ("tur_Latn (ud-tur)").  A
  morphology table has one row per (language, metric).  Columns
  are tokenizers: trained families, then reference rows, then production
  rows, each group sorted by label.
* Best per row: the highest or lowest value by the metric's direction
  (``metrics.METRICS``); every cell whose value *as printed* equals the printed
  best is bold too (a tie a reader cannot see would be a false claim).
  Descriptive metrics (direction None) bold nothing.
* Nothing depends on the clock: identical results and manifest give
  byte-identical files (the manifest's ``timings`` are not shown).
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import pandas as pd

import bpe
import bpe.render
from benchmarks import findings, plots, render
from benchmarks.errors import BenchmarkError
from benchmarks.examples import EXAMPLE_CHARS, Example, read_examples
from benchmarks.files import ROW_TYPES, atomic_write_text, read_results, train_chars_of, trained_tokenizer_path
from benchmarks.findings import vocab_label
from benchmarks.metrics import GROUPS, METRICS
from benchmarks.pretrained import PretrainedRow
from benchmarks.registry import Metric
from benchmarks.render import latex_escape, md_escape
from bpe.render import EMPTY, SEPARATOR

REPORT_FILE = "report.md"
TABLES_DIR = "tables"
PLOTS_DIR = "plots"
MISSING = findings.MISSING  # an empty cell (this tokenizer has no row for this language)


# --------------------------------------------------------------------------- reading a run


@dataclass(frozen=True)
class Run:
    run_dir: Path
    results: pd.DataFrame  # files.RESULT_COLUMNS, normalised dtypes (files.read_results)
    manifest: dict[str, Any]
    report_vocab_size: int
    ci_level: float  # e.g. 0.95

    @property
    def ci_name(self) -> str:
        return f"{self.ci_level * 100:g}% CI"


def load_run(run_dir: Path) -> Run:
    """Read and check a run directory; every problem is one BenchmarkError naming the file and field."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise BenchmarkError(f"{run_dir}: no such run directory")
    results = at_most_training_text(read_results(run_dir))
    manifest = read_manifest(run_dir)
    config = manifest.get("config")
    report = config.get("report") if isinstance(config, dict) else None
    size = report.get("vocab_size") if isinstance(report, dict) else None
    if not isinstance(size, int) or isinstance(size, bool) or size <= 0:
        raise BenchmarkError(
            f"{run_dir / 'manifest.json'}: field config.report.vocab_size must be a positive integer, got {size!r}"
        )
    level = config.get("confidence", 0.95)
    if not isinstance(level, float) or not 0 < level < 1:
        raise BenchmarkError(f"{run_dir / 'manifest.json'}: field config.confidence must be in (0, 1), got {level!r}")
    return Run(run_dir, results, manifest, size, level)


def at_most_training_text(results: pd.DataFrame) -> pd.DataFrame:
    """On a run with a ``train_chars`` axis, the rows of its largest value and the pretrained rows: the
    report's tables show the tokenizers trained on the most text (``train_chars_section`` shows the
    axis).  Other runs' results as they are."""
    values = results["options"].astype(object).fillna("").map(train_chars_of)  # costs.csv: empty reads as NaN
    if values.isna().all():
        return results
    return results[values.isna() | (values == values.max())].reset_index(drop=True)


def read_manifest(run_dir: Path) -> dict[str, Any]:
    path = run_dir / "manifest.json"
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BenchmarkError(f"{path}: missing (the run did not finish?)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BenchmarkError(f"{path}: cannot read ({exc})") from None
    except json.JSONDecodeError as exc:
        raise BenchmarkError(f"{path}: not JSON (line {exc.lineno}: {exc.msg})") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("config"), dict):
        raise BenchmarkError(f'{path}: expected a JSON object with a "config" object')
    return manifest


# --------------------------------------------------------------------------- selecting cells

CELL_KEYS = ["language", "corpus", "eval_set", "tokenizer"]


def tokenizer_order(frame: pd.DataFrame) -> list[str]:
    """Column order: families, reference rows, production rows; each sorted by label."""
    kinds = frame.drop_duplicates("tokenizer").set_index("tokenizer")["row_type"]
    return sorted(kinds.index, key=lambda label: (ROW_TYPES.index(kinds[label]), label))


def add_row_labels(frame: pd.DataFrame) -> pd.DataFrame:
    """Label rows by language; a language with several (corpus, eval set) pairs gets one row for each,
    named by what differs: "tur_Latn (test)", "tur_Latn (ud-tur)" or "tur_Latn (ud-tur, test)"."""
    frame = frame.copy()
    combos = frame.drop_duplicates(["language", "corpus", "eval_set"])
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
    frame["row"] = [labels[key] for key in zip(frame["language"], frame["corpus"], frame["eval_set"], strict=True)]
    return frame


def at_report_size(rows: pd.DataFrame, target: int) -> pd.DataFrame:
    """One row per cell: production rows as they are, trained rows at the vocabulary size closest to
    ``target`` (equal distance: the smaller size)."""
    sized = rows[rows["vocab_size"].notna()].copy()
    sized["distance"] = (sized["vocab_size"].astype("int64") - target).abs()
    sized = sized.sort_values([*CELL_KEYS, "distance", "vocab_size"], kind="stable")
    chosen = sized.drop_duplicates(CELL_KEYS).drop(columns="distance")
    cells = pd.concat([chosen, rows[rows["vocab_size"].isna()]], ignore_index=True)
    duplicated = cells.duplicated(CELL_KEYS)
    if duplicated.any():
        first = cells[duplicated].iloc[0]
        raise BenchmarkError(
            f"results hold two {first['metric']} rows for {first['tokenizer']} on {first['corpus']} "
            f"({first['eval_set']}) at one vocabulary size"
        )
    return add_row_labels(cells)


# --------------------------------------------------------------------------- tables


def mark_best(cells: pd.DataFrame) -> pd.Series:
    """True for the best cell(s) of each table row (by that row's metric); ties as printed are all best."""
    best = pd.Series(False, index=cells.index)
    for _, row_cells in cells.groupby("label", sort=True):
        info = METRICS[row_cells["metric"].iloc[0]]
        values = row_cells["value"].dropna()
        if info.higher_is_better is None or values.empty:
            continue
        top = findings.format_value(info, values.max() if info.higher_is_better else values.min())
        printed = [findings.format_value(info, value) for value in row_cells["value"]]
        best[row_cells.index[[text == top for text in printed]]] = True
    return best


@dataclass(frozen=True)
class Table:
    slug: str  # file stem under tables/
    title: str
    key: str  # the metric key (metric tables) or the reference name (morphology tables)
    group: str
    row_header: str
    rows: list[str]  # row labels, in order
    tokenizers: list[str]  # columns, in order
    cells: pd.DataFrame  # one per (label, tokenizer): metric, value, ci_low, ci_high, vocab_size, best, ...
    notes: list[str]

    @property
    def heading(self) -> str:
        return f"{md_escape(self.title)} (`{self.key}`)" if self.group != "morphology" else self.title

    @property
    def ranked(self) -> bool:
        return any(METRICS[m].higher_is_better is not None for m in self.cells["metric"].unique())

    def cell(self, label: str, tokenizer: str) -> pd.Series | None:
        match = self.cells[(self.cells["label"] == label) & (self.cells["tokenizer"] == tokenizer)]
        return None if match.empty else match.iloc[0]


def metric_table(results: pd.DataFrame, metric: str, target: int) -> Table:
    """Languages x tokenizers for one metric (rows without a morpheme reference)."""
    cells = at_report_size(results[(results["metric"] == metric) & (results["reference"] == "")], target)
    cells["label"] = cells["row"]
    info = METRICS[metric]
    return finish_table(cells, target, slug=metric, title=info.label, key=metric, group=info.group,
                        row_header="language")  # fmt: skip


def reference_table(results: pd.DataFrame, reference: str, target: int) -> Table:
    """Every morphology metric against one morpheme reference: (language, metric) rows x tokenizers."""
    rows = results[results["reference"] == reference]
    metrics = [metric for metric in METRICS if metric in set(rows["metric"])]
    cells = pd.concat([at_report_size(rows[rows["metric"] == metric], target) for metric in metrics])
    languages = sorted(cells["row"].unique())
    if len(languages) == 1:
        cells["label"] = cells["metric"].map(lambda m: METRICS[m].label)
        row_header = f"metric ({languages[0]})"
    else:
        cells["label"] = cells["row"] + ": " + cells["metric"].map(lambda m: METRICS[m].label)
        row_header = "language: metric"
    slug = "morphology--" + re.sub(r"[^A-Za-z0-9._-]+", "-", reference).strip("-")
    title = f"Morpheme boundaries against reference `{reference}` ({', '.join(languages)})"
    return finish_table(cells, target, slug=slug, title=title, key=reference, group=METRICS[metrics[0]].group,
                        row_header=row_header)  # fmt: skip


def finish_table(cells: pd.DataFrame, target: int, **fields: str) -> Table:
    metric_rank = {metric: i for i, metric in enumerate(METRICS)}
    cells = cells.assign(metric_rank=cells["metric"].map(metric_rank))
    cells = cells.sort_values(["row", "metric_rank", "tokenizer"], kind="stable").reset_index(drop=True)
    cells["best"] = mark_best(cells)
    return Table(rows=list(dict.fromkeys(cells["label"])), tokenizers=tokenizer_order(cells),
                 cells=cells.drop(columns="metric_rank"), notes=substitution_notes(cells, target),
                 **fields)  # fmt: skip


def substitution_notes(cells: pd.DataFrame, target: int) -> list[str]:
    """One sentence per tokenizer shown at another vocabulary size than the report size."""
    notes = []
    shifted = cells[cells["vocab_size"].notna() & (cells["vocab_size"] != target)]
    for (tokenizer, size), group in shifted.groupby(["tokenizer", "vocab_size"], sort=True):
        rows = sorted(group["row"].unique())
        where = "" if len(rows) == cells["row"].nunique() else f" ({', '.join(rows)})"
        notes.append(
            f"{tokenizer} was not run at {vocab_label(target)}: shown at {vocab_label(int(size))}, "
            f"the closest size it was run at{where}."
        )
    return notes


def cell_text(cell: pd.Series | None, bold: Callable[[str], str]) -> str:
    if cell is None or math.isnan(cell["value"]):
        return MISSING
    info = METRICS[cell["metric"]]
    value = findings.format_value(info, cell["value"])
    if cell["best"]:
        value = bold(value)
    if math.isnan(cell["ci_low"]) or math.isnan(cell["ci_high"]):
        return value
    return f"{value} [{findings.format_value(info, cell['ci_low'])}, {findings.format_value(info, cell['ci_high'])}]"


def markdown_table(table: Table) -> str:
    header = [md_escape(h) for h in [table.row_header, *table.tokenizers]]
    rows = [
        [md_escape(label), *(cell_text(table.cell(label, t), lambda v: f"**{v}**") for t in table.tokenizers)]
        for label in table.rows
    ]
    return render.markdown(header, rows, "l" + "r" * len(table.tokenizers))


def latex_table(table: Table, run: Run) -> str:
    best = "; best per row in bold" if table.ranked else ""
    caption = (
        f"{latex_escape(table.title.replace('`', ''))} at vocabulary size "
        f"{latex_escape(vocab_label(run.report_vocab_size))} ({latex_escape(run.ci_name)} in brackets{best})."
    )
    header = [latex_escape(h) for h in [table.row_header, *table.tokenizers]]
    rows = []
    for label in table.rows:
        texts = [cell_text(table.cell(label, t), lambda v: rf"\textbf{{{v}}}") for t in table.tokenizers]
        rows.append([latex_escape(label), *(t.replace(MISSING, "--") for t in texts)])
    body = render.latex(header, rows, "l" + "r" * len(table.tokenizers), caption, f"tab:{table.slug}")
    return f"% tokbench table {table.slug}\n{body}\n"


def csv_table(table: Table) -> str:
    """The table's cells in long form, with full precision and the vocabulary size each cell used."""
    columns = ["label", "language", "corpus", "eval_set", "reference", "metric", "tokenizer", "row_type",
               "vocab_size", "value", "ci_low", "ci_high", "n", "best"]  # fmt: skip
    order = {t: i for i, t in enumerate(table.tokenizers)}
    rows = {label: i for i, label in enumerate(table.rows)}
    cells = table.cells.assign(order=table.cells["tokenizer"].map(order), row_order=table.cells["label"].map(rows))
    cells = cells.sort_values(["row_order", "order"], kind="stable")[columns]
    return cells.to_csv(index=False, lineterminator="\n")


# --------------------------------------------------------------------------- plots with findings


@dataclass(frozen=True)
class Plot:
    """One plot of a group: its file, a caption, and the findings sentences under it."""

    file: str
    caption: str
    sentences: list[str]


@dataclass(frozen=True)
class Skipped:
    caption: str
    reason: str


def plot_frame(results: pd.DataFrame, metric: str) -> pd.DataFrame:
    """All rows of one metric (no morpheme reference), labelled for plotting."""
    rows = results[(results["metric"] == metric) & (results["reference"] == "")]
    return add_row_labels(rows) if not rows.empty else rows.assign(row=pd.Series(dtype=str))


def is_english(language: str) -> bool:
    return language.startswith("eng_") or language == "eng"


def curve_plot(metric: str, run: Run, palette: dict[str, Any], out_dir: Path) -> Plot | Skipped:
    info, at = METRICS[metric], vocab_label(run.report_vocab_size)
    caption = f"{info.label} against vocabulary size, per language"
    frame = plot_frame(run.results, metric)
    if frame["vocab_size"].notna().sum() == 0:
        return Skipped(caption, f"this run has no `{metric}` rows with a vocabulary size")
    snapshot = at_report_size(frame, run.report_vocab_size)
    file = f"{metric}-vs-vocab.png"
    plots.vocab_curves(frame, info, palette, out_dir / file)
    return Plot(file, caption, findings.pick(
        findings.best_count(snapshot, info, at),
        findings.vocab_trend(frame, info),
        findings.language_gap(snapshot, info, at),
    ))  # fmt: skip


def heatmap_plot(metric: str, run: Run, palette: dict[str, Any], out_dir: Path) -> Plot | Skipped:
    info, at = METRICS[metric], vocab_label(run.report_vocab_size)
    caption = f"{info.label} at {at}: languages × tokenizers"
    frame = plot_frame(run.results, metric)
    if frame.empty:
        return Skipped(caption, f"this run has no `{metric}` rows")
    snapshot = at_report_size(frame, run.report_vocab_size)
    file = f"{metric}-heatmap.png"
    plots.heatmap(snapshot, info, tokenizer_order(snapshot), out_dir / file)
    return Plot(file, caption, findings.pick(
        findings.extremes(snapshot, info, at), findings.language_gap(snapshot, info, at)
    ))  # fmt: skip


def morphology_plot(run: Run, palette: dict[str, Any], out_dir: Path) -> Plot | Skipped:
    info, at = METRICS["boundary_f1"], vocab_label(run.report_vocab_size)
    caption = f"{info.label} at {at} by tokenizer and language"
    rows = run.results[(run.results["metric"] == "boundary_f1") & (run.results["reference"] != "")]
    if rows.empty:
        return Skipped(caption, "this run has no `boundary_f1` rows")
    references = sorted(rows["reference"].unique())
    snapshot = pd.concat([at_report_size(rows[rows["reference"] == ref], run.report_vocab_size) for ref in references])
    snapshot["row"] = snapshot["row"] + " · " + snapshot["reference"]
    file = "boundary_f1-bars.png"
    plots.bars(snapshot, info, palette, out_dir / file, "language · reference")
    return Plot(file, caption, findings.pick(
        findings.best_count(snapshot, info, at, unit="language/reference pairs"), findings.extremes(snapshot, info, at)
    ))  # fmt: skip


def parity_plot(run: Run, palette: dict[str, Any], out_dir: Path) -> Plot | Skipped:
    info, at = METRICS["parity_vs_eng"], vocab_label(run.report_vocab_size)
    caption = f"{info.label} at {at}, per language"
    frame = plot_frame(run.results, "parity_vs_eng")
    frame = frame[~frame["language"].map(is_english)]  # English against itself is 1 by definition
    if frame.empty:
        return Skipped(caption, "this run has no `parity_vs_eng` rows for a language other than English "
                                "(parity needs a parallel corpus such as FLORES)")  # fmt: skip
    snapshot = at_report_size(frame, run.report_vocab_size)
    file = "parity_vs_eng-bars.png"
    plots.bars(snapshot, info, palette, out_dir / file, "language", reference_line=1.0)
    return Plot(file, caption, findings.pick(
        findings.extremes(snapshot, info, at), findings.best_count(snapshot, info, at)
    ))  # fmt: skip


#: the plots of each report section, in order
GROUP_PLOTS: dict[str, list[Callable[[Run, dict[str, Any], Path], Plot | Skipped]]] = {
    "oov": [partial(curve_plot, "unk_word_rate"), partial(curve_plot, "oov_token_rate")],
    "compression": [partial(curve_plot, "bytes_per_token")],
    "fertility": [partial(curve_plot, "fertility_isolated"), partial(curve_plot, "fertility_running"),
                  partial(heatmap_plot, "fertility_isolated"), partial(heatmap_plot, "fertility_running")],
    "morphology": [morphology_plot],
    "parity": [parity_plot],
}  # fmt: skip


# --------------------------------------------------------------------------- report.md


def run_facts(run: Run) -> list[str]:
    manifest = run.manifest
    config = manifest["config"]
    lines = []
    for name, value in (
        ("run", manifest.get("run_id") or manifest.get("run")),
        ("config", config.get("name")),
        ("config source", config.get("source")),
        ("config fingerprint", manifest.get("config_fingerprint")),
        ("git revision", manifest.get("git_revision")),
        ("seed", config.get("seed")),
        ("bootstrap", f"{config['bootstrap_resamples']} resamples" if "bootstrap_resamples" in config else None),
    ):
        if value is not None:
            lines.append(f"- {name}: `{value}`")
    lines.append(
        f"- report vocabulary size: {vocab_label(run.report_vocab_size)} "
        f"(tables and snapshot plots; production rows have their own vocabularies)"
    )
    corpora = manifest.get("corpora")
    if isinstance(corpora, dict) and corpora:
        lines.append("- corpora:")
        for corpus_id in sorted(corpora):
            lines.append(f"  - `{corpus_id}`: {describe(corpora[corpus_id])}")
    packages = manifest.get("packages")
    if isinstance(packages, dict) and packages:
        lines.append("- packages: " + ", ".join(f"{name} {packages[name]}" for name in sorted(packages)))
    return lines


def describe(value: Any) -> str:
    """A manifest entry as short text: ``key value`` pairs, nested objects in braces, keys sorted."""
    if isinstance(value, dict):
        return ", ".join(f"{key} {describe(value[key])}" for key in sorted(value)) if value else "{}"
    if isinstance(value, list):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def group_section(group: str, run: Run, tables: list[Table], figures: list[Plot | Skipped]) -> list[str]:
    lines = [f"## {GROUPS[group]}", ""]
    if not tables:
        lines += [f"_This run has no {group} rows._", ""]
    for table in tables:
        lines += [f"### {table.heading}", "", markdown_table(table), ""]
        for note in table.notes:
            lines.append(f"_Note: {md_escape(note)}_  ")
        lines += [f"[LaTeX]({TABLES_DIR}/{table.slug}.tex) · [CSV]({TABLES_DIR}/{table.slug}.csv)", ""]
    for figure in figures:
        if isinstance(figure, Skipped):
            lines += [f"_Plot skipped ({md_escape(figure.caption)}): {figure.reason}._", ""]
            continue
        caption = md_escape(figure.caption)
        lines += [f"![{caption}]({PLOTS_DIR}/{figure.file})", "", f"*{caption}.*", ""]
        if figure.sentences:
            lines += [md_escape(" ".join(figure.sentences)), ""]
    return lines


def render_report(run: Run, tables: list[Table], figures: dict[str, list[Plot | Skipped]],
                  sections: Sequence[str] = ()) -> str:  # fmt: skip
    """The report's markdown; ``sections``: lines of sections drawn beside the groups (``train_chars_section``)."""
    config = run.manifest["config"]
    title = config.get("name") or run.manifest.get("run") or run.run_dir.name
    lines = [f"# tokbench report: {title}", ""]
    if config.get("description"):
        lines += [str(config["description"]), ""]
    lines += run_facts(run)
    lines += [
        "",
        f"Cells show the value with its {run.ci_name} (bootstrap over items) in brackets; the best value per "
        "language is bold (ties as printed are all bold; descriptive metrics are not ranked). "
        f"{MISSING} marks a tokenizer with no row for that language. "
        "Findings under each plot are generated from the numbers.",
        "",
    ]
    present = [group for group in GROUPS if any(t.group == group for t in tables)]
    absent = [group for group in GROUPS if group not in present]
    if absent:
        lines += ["Groups without rows in this run: " + ", ".join(absent) + ".", ""]
    for group in GROUPS:
        group_tables = [t for t in tables if t.group == group]
        if group_tables or figures.get(group):
            lines += group_section(group, run, group_tables, figures.get(group, []))
    lines += [*sections, *inference_section(run), *cost_section(run), *paired_section(run), *splits_section(run)]
    return "\n".join(lines).rstrip("\n") + "\n"


def code_span(text: str) -> str:
    """``text`` as inline code inside a Markdown table cell (a pipe escaped, backticks fenced)."""
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    padded = f" {text} " if text.startswith("`") or text.endswith("`") else text
    return f"{fence}{padded.replace('|', chr(92) + '|')}{fence}"


@dataclass(frozen=True)
class RunTokenizers:
    """The tokenizers a run used at the report vocabulary size, re-loaded from its directory."""

    trained: dict[tuple[str, str], tuple[str, bpe.Tokenizer]]  # (corpus, label) -> (label shown, tokenizer)
    pretrained: dict[str, bpe.Tokenizer]  # by label: the same for every corpus
    notes: list[str]  # rows that could not be re-loaded, and why

    def of(self, corpus: str, label: str) -> tuple[str, bpe.Tokenizer] | None:
        if (corpus, label) in self.trained:
            return self.trained[corpus, label]
        return (label, self.pretrained[label]) if label in self.pretrained else None


def run_tokenizers(run: Run) -> RunTokenizers:
    """Trained rows from ``RUN_DIR/tokenizers/`` at the size closest to the report size (equal
    distance: the smaller), labelled with that size when it is another; pretrained rows from the
    manifest (``PretrainedRow.from_json``)."""
    found = RunTokenizers({}, {}, [])
    for label, entry in sorted(run.manifest.get("pretrained", {}).items()):
        try:
            found.pretrained[label] = PretrainedRow.from_json(label, entry).load()
        except (BenchmarkError, bpe.TokenizerError) as exc:
            found.notes.append(f"{label} is not shown: {exc}")
    trained = run.results[run.results["vocab_size"].notna()].drop_duplicates(["corpus", "tokenizer", "vocab_size"])
    for (corpus, label), rows in trained.groupby(["corpus", "tokenizer"], sort=True):
        size = min((int(s) for s in rows["vocab_size"]), key=lambda s: (abs(s - run.report_vocab_size), s))
        shown = label if size == run.report_vocab_size else f"{label} ({vocab_label(size)})"
        path = trained_tokenizer_path(run.run_dir, corpus, label, size, train_chars_of(rows["options"].iloc[0]))
        try:
            found.trained[corpus, label] = (shown, bpe.load(path))
        except bpe.TokenizerError as exc:
            found.notes.append(f"{label} on {corpus} is not shown: {exc}")
    return found


def splits_section(run: Run) -> list[str]:
    """"How the tokenizers split": the run's example sentences (``benchmarks.examples``) encoded by every
    tokenizer of the run at the report vocabulary size (``run_tokenizers``), each token shown as the text
    it covers (``bpe.render``), with its token count.  Nothing for a run without ``examples.json``."""
    chosen = read_examples(run.run_dir)
    if chosen is None:
        return []
    document, examples = chosen
    tokenizers, order, at = run_tokenizers(run), tokenizer_order(run.results), vocab_label(run.report_vocab_size)
    if document.get("role") == "test":
        which = (f"the first test documents of each corpus (a longer one cut at a space after at most "
                 f"{EXAMPLE_CHARS} characters, marked …)")  # fmt: skip
    else:
        which = (f"sentences of the parallel set `{document.get('set')}`, the same in every language (the "
                 f"{len(document.get('keys', []))} whose longest translation is shortest)")  # fmt: skip
    intro = (f"Every tokenizer of the run at {at} (trained rows: the one trained on that corpus; a row not run at "
             f"{at} is named with the size it is shown at) on {which}. Each token is shown as the text it covers, "
             f"tokens separated by {SEPARATOR}: ␣ is a space (whatever marker the tokenizer uses), <0xEB> a byte "
             f"of a UTF-8 character the token covers only in part, {EMPTY} a token that covers no text, <unk:…> an "
             "unknown token. The sentences are quoted from the run's corpora (licenses: the corpora listed "
             "above).")  # fmt: skip
    lines = ["## How the tokenizers split", "", md_escape(intro), ""]
    groups: dict[str, list[Example]] = {}
    for example in examples:
        heading = f"Sentence `{example.key}`" if example.key is not None else f"{example.language} ({example.corpus})"
        groups.setdefault(heading, []).append(example)
    for heading, group in groups.items():
        lines += [f"### {heading}", ""]
        for example in group:
            where = example.language if example.key is not None else example.id
            rows = []
            for label in order:
                found = tokenizers.of(example.corpus, label)
                if found is not None:
                    shown, tokenizer = found
                    encoding = tokenizer.encode_with_spans(example.text)
                    pieces = bpe.render.render(example.text, encoding, tokenizer.unk_id)
                    rows.append([md_escape(shown), str(len(encoding)), code_span(pieces)])
            lines += [f"**{md_escape(where)}**: {md_escape(example.text)}{' …' if example.cut else ''}", ""]
            lines += [render.markdown(["tokenizer", "tokens", "pieces"], rows, "lrl"), ""]
    lines += [f"_Note: {md_escape(note)}_  " for note in tokenizers.notes]
    return [*lines, ""] if tokenizers.notes else lines


#: the metric shown against the amount of training text: the first of these the run has (compression, as
#: Goldman et al. 2024, "Unpacking Tokenization", relate it to downstream quality)
TRAIN_CHARS_METRICS = ("bytes_per_token", "chars_per_token", "tokens_per_kchar")


def train_chars_section(run: Run, palette: dict[str, Any], plots_dir: Path) -> list[str]:
    """"Training data": on a run with a ``train_chars`` axis, how a compression metric moves with the
    amount of training text (Goldman et al. 2024, "Unpacking Tokenization"): per language and trained
    row at the report vocabulary size (the closest size), one column per ``train_chars`` value, and the
    same as a plot.  Nothing for a run without the axis."""
    results = read_results(run.run_dir)
    values = results["options"].map(train_chars_of)
    axis = results[values.notna()].assign(train_chars=values[values.notna()])
    metric = next((name for name in TRAIN_CHARS_METRICS if name in set(axis["metric"])), None)
    if metric is None:
        return []
    info, at = METRICS[metric], vocab_label(run.report_vocab_size)
    rows = axis[(axis["metric"] == metric) & (axis["reference"] == "")]
    cells = pd.concat([at_report_size(group, run.report_vocab_size) for _, group in rows.groupby("train_chars")],
                      ignore_index=True).astype({"train_chars": "int64"})  # fmt: skip
    amounts = sorted(cells["train_chars"].unique())
    table = cells.pivot(index=["row", "tokenizer"], columns="train_chars", values="value")
    order = {label: position for position, label in enumerate(tokenizer_order(cells))}
    keys = sorted(table.index, key=lambda key: (key[0], order[key[1]]))
    body = [[md_escape(row), md_escape(tokenizer), *(_formatted(info, table.loc[(row, tokenizer), amount])
                                                      for amount in amounts)]
            for row, tokenizer in keys]  # fmt: skip
    file = f"{metric}-vs-train-chars.png"
    plots.vocab_curves(cells, info, palette, plots_dir / file, x="train_chars", x_label="training characters")
    caption = f"{info.label} against training characters, at {at}"
    better = {True: "higher is better", False: "lower is better", None: "descriptive"}[info.higher_is_better]
    intro = (f"{info.label} ({better}) of every trained row at {at} (or the closest size it has), each trained on "
             "the first training documents of its corpus up to `train_chars` characters (nested prefixes of one "
             "stream). The other sections show the rows trained on the most text.")
    header = ["language", "tokenizer", *(f"{amount:,} chars" for amount in amounts)]
    return ["## Training data", "", intro, "", render.markdown(header, body, "ll" + "r" * len(amounts)), "",
            f"![{md_escape(caption)}]({PLOTS_DIR}/{file})", "", f"*{md_escape(caption)}.*", ""]  # fmt: skip


def _formatted(info: Metric, value: float) -> str:
    return MISSING if pd.isna(value) else info.fmt.format(value)


def cost_section(run: Run) -> list[str]:
    """Wall-clock costs from costs.csv at the report vocabulary size.  They vary between runs and
    machines, so they stay out of results.* and the regression check; this is their only table."""
    path = run.run_dir / "costs.csv"
    if not path.is_file():
        return []
    costs = at_most_training_text(pd.read_csv(path))
    rows = costs[costs["vocab_size"].isna() | (costs["vocab_size"] == run.report_vocab_size)]
    if rows.empty:
        return []
    lines = ["### Measured cost (wall clock)", "",
             f"At {run.report_vocab_size:,} (production rows: their own vocabulary). Training seconds are "
             "those measured when the tokenizer was trained (a cached tokenizer keeps its time; a size derived "
             "from the largest of its sweep shows the derivation's time, the training's is on the largest); encoding "
             "throughput is MB of UTF-8 test text per second, one process, documents one by one. "
             "These figures vary between runs and are never compared by `tokbench check`.", ""]  # fmt: skip
    cells = [
        [md_escape(row.corpus), md_escape(row.tokenizer), f"{row.train_seconds:.2f}", f"{row.encode_mb_per_s:.2f}"]
        for row in rows.sort_values(["corpus", "tokenizer"]).itertuples()
    ]
    return [*lines, render.markdown(["corpus", "tokenizer", "training (s)", "encode (MB/s)"], cells, "llrr"), ""]


#: the options that only change encoding (``bpe.options``: ENCODE_TIME), in every family that has them
ENCODE_OPTIONS = ("encode_mode", "dropout", "alpha", "nbest", "seed")
#: each family's own encoding, when ``encode_mode`` is not set
NATIVE_METHOD = {"spm-unigram": "likelihood"}


def _parse_options(options: str) -> dict[str, str]:
    return dict(part.split("=", 1) for part in options.split(",")) if options else {}


def inference_method(kind: str, options: str) -> str:
    """A row's inference method as the report names it: ``encode_mode`` (the family's own when unset),
    with its sampling (``+ dropout 0.1``, ``+ sampling α=0.1``)."""
    parsed = _parse_options(options)
    method = parsed.get("encode_mode", NATIVE_METHOD.get(kind, "merges"))
    method = "longest-prefix" if method == "greedy" else method
    if float(parsed.get("dropout", 0) or 0) > 0:
        method += f" + dropout {parsed['dropout']}"
    if parsed.get("alpha") not in (None, "None"):
        method += f" + sampling α={parsed['alpha']}"
    return method


def inference_groups(results: pd.DataFrame) -> list[tuple[tuple[Any, ...], pd.DataFrame]]:
    """Trained rows that share one vocabulary (corpus, family, size, training options) and differ only in
    encode-time options, with their ``method`` column; only groups of two or more methods."""
    trained = results[results["vocab_size"].notna()].copy()
    if trained.empty:
        return []
    parsed = trained["options"].fillna("").map(_parse_options)
    trained["training"] = parsed.map(lambda o: ",".join(f"{k}={v}" for k, v in o.items() if k not in ENCODE_OPTIONS))
    trained["method"] = [inference_method(kind, options) for kind, options in
                         zip(trained["kind"], trained["options"].fillna(""), strict=True)]  # fmt: skip
    groups = []
    for key, group in trained.groupby(["corpus", "language", "kind", "vocab_size", "training"], sort=True):
        if group["method"].nunique() >= 2 and group.groupby("method")["tokenizer"].nunique().max() == 1:
            groups.append((key, group))
    return groups


def inference_section(run: Run) -> list[str]:
    """"Inference methods on one vocabulary": per shared vocabulary, boundary F1 against each morpheme
    reference and tokens per 1,000 test characters for every inference method (Uzan et al. 2024's
    question, here per language), with generated findings: which method aligns best with each
    reference and at what compression cost (``findings.inference_method_finding``)."""
    groups = inference_groups(run.results)
    if not groups:
        return []
    f1_info, cost_info = METRICS["boundary_f1"], METRICS["tokens_per_kchar"]
    paired_path = run.run_dir / "paired.csv"
    paired = pd.read_csv(paired_path) if paired_path.is_file() else pd.DataFrame()
    seeds = run.manifest["config"].get("seeds")
    lines = ["## Inference methods on one vocabulary", "",
             "Rows that share one trained vocabulary and differ only in how it encodes: the inference methods of "
             "Uzan et al. 2024 (merges in learned order, longest prefix, longest suffix, longest token, fewest "
             "tokens) and sampling (BPE-dropout, Provilkov et al. 2020; unigram sampling, Kudo 2018"
             + (f": the mean over seeds {', '.join(map(str, seeds))}, CI over items and seeds" if seeds else "")
             + f"). Cells: {f1_info.label} per morpheme reference and {cost_info.label} on the test text, each with "
             f"its {run.ci_name}. Findings compare each reference's best method with the family's own encoding; "
             "the compression cost is the paired difference in tokens per 1,000 characters on the same test "
             "documents (paired.csv, at the report vocabulary size).", ""]  # fmt: skip
    for (corpus, language, kind, size, training), group in groups:
        methods = sorted(group["method"].unique(), key=lambda m: (m != NATIVE_METHOD.get(kind, "merges"), m))
        baseline = methods[0]
        label = {m: group.loc[group["method"] == m, "tokenizer"].iloc[0] for m in methods}
        title = f"{corpus} ({language}), {kind} {vocab_label(int(size))}" + (f", {training}" if training else "")
        rows, sentences = [], []
        f1 = group[(group["metric"] == "boundary_f1") & (group["eval_set"] == "reference")]
        for reference, cells in f1.groupby("reference", sort=True):
            cells = cells.set_index("method")
            rows.append([md_escape(f"{f1_info.label}: {reference}")]
                        + [_cell(cells, m, f1_info) for m in methods])  # fmt: skip
            cost = _paired_cost(paired, corpus, label, cells, baseline, int(size))
            sentence = findings.inference_method_finding(cells.reset_index(), baseline, cost, f1_info, cost_info,
                                                         f"{reference}")  # fmt: skip
            if sentence:
                sentences.append(sentence)
        compression = group[(group["metric"] == "tokens_per_kchar") & (group["eval_set"] == "test")].set_index("method")
        if not compression.empty:
            rows.append([md_escape(f"{cost_info.label} (test)")] + [_cell(compression, m, cost_info) for m in methods])
        if not rows:
            continue
        lines += [f"### {md_escape(title)}", "",
                  render.markdown(["", *(md_escape(m) for m in methods)], rows, "l" + "r" * len(methods)), ""]
        lines += [md_escape(" ".join(sentences)), ""] if sentences else []
    return lines


def _cell(cells: pd.DataFrame, method: str, info: Any) -> str:
    if method not in cells.index:
        return MISSING
    cell = cells.loc[method]
    value = findings.format_value(info, cell["value"])
    if math.isnan(cell["ci_low"]):
        return value
    return f"{value} [{findings.format_value(info, cell['ci_low'])}, {findings.format_value(info, cell['ci_high'])}]"


def _paired_cost(paired: pd.DataFrame, corpus: str, label: dict[str, str], cells: pd.DataFrame, baseline: str,
                 size: int) -> tuple[float, float, float] | None:  # fmt: skip
    """The best method's tokens per 1,000 characters minus the baseline's, with the paired CI (paired.csv)."""
    finite = cells[cells["value"].map(math.isfinite)].reset_index()
    if paired.empty or finite.empty:
        return None
    best = finite.sort_values(["value", "method"], ascending=[False, True], kind="stable").iloc[0]["method"]
    if best == baseline:
        return None
    a, b = label[best], label[baseline]
    rows = paired[(paired["corpus"] == corpus) & (paired["vocab_size"] == size)]
    forward = rows[(rows["tokenizer_a"] == a) & (rows["tokenizer_b"] == b)]
    if not forward.empty:
        row = forward.iloc[0]
        return float(row["difference"]), float(row["ci_low"]), float(row["ci_high"])
    backward = rows[(rows["tokenizer_a"] == b) & (rows["tokenizer_b"] == a)]
    if not backward.empty:
        row = backward.iloc[0]
        return -float(row["difference"]), -float(row["ci_high"]), -float(row["ci_low"])
    return None


def paired_section(run: Run) -> list[str]:
    """The paired tests of paired.csv: which tokenizer rows differ in tokens per 1k characters."""
    path = run.run_dir / "paired.csv"
    if not path.is_file():
        return []
    paired = pd.read_csv(path)
    if paired.empty:
        return []
    lines = ["## Paired comparisons", "",
             "Tokenizer A minus tokenizer B in tokens per 1,000 characters on the same test documents "
             f"(report vocabulary size), with a paired bootstrap {run.ci_name} and the p-value of a paired "
             "permutation test (`benchmarks/stats.py`). Full table: [paired.csv](paired.csv).", ""]  # fmt: skip
    for corpus, group in paired.groupby("corpus", sort=True):
        significant = group[group["p_value"] < 0.05]
        lines.append(f"- `{corpus}`: {len(significant)} of {len(group)} pairs differ at p < 0.05.")
    cells = [
        [md_escape(row.corpus), md_escape(row.tokenizer_a), md_escape(row.tokenizer_b), f"{row.difference:.1f}",
         f"[{row.ci_low:.1f}, {row.ci_high:.1f}]", f"{row.p_value:.3g}"]
        for row in paired.itertuples()
    ]  # fmt: skip
    table = render.markdown(["corpus", "A", "B", "A − B", "CI", "p"], cells, "lllrlr")
    return [*lines, "", "<details><summary>all pairs</summary>", "", table, "", "</details>", ""]


# --------------------------------------------------------------------------- orchestration


def build_tables(run: Run) -> list[Table]:
    """Metric tables in registry order; morphology tables per reference (sorted) after the group's metric tables."""
    results, target = run.results, run.report_vocab_size
    present = set(results.loc[results["reference"] == "", "metric"])
    tables = [metric_table(results, metric, target) for metric in METRICS if metric in present]
    references = sorted(set(results["reference"]) - {""})
    tables += [reference_table(results, reference, target) for reference in references]
    group_rank = {group: i for i, group in enumerate(GROUPS)}
    return sorted(tables, key=lambda table: group_rank[table.group])  # stable: keeps the order above per group


def write_report(run_dir: Path) -> Path:
    """Write report.md, tables/ and plots/ into ``run_dir`` from its own results; return report.md's path.

    Everything is built in a temporary directory inside ``run_dir`` and moved into
    place at the end, so an error leaves the previous report (if any) untouched.
    """
    run = load_run(Path(run_dir))
    staging = Path(tempfile.mkdtemp(dir=run.run_dir, prefix=".report-"))
    try:
        tables_dir, plots_dir = staging / TABLES_DIR, staging / PLOTS_DIR
        tables_dir.mkdir()
        plots_dir.mkdir()
        tables = build_tables(run)
        for table in tables:
            (tables_dir / f"{table.slug}.tex").write_text(latex_table(table, run), encoding="utf-8")
            (tables_dir / f"{table.slug}.csv").write_text(csv_table(table), encoding="utf-8")
        palette = plots.tokenizer_palette(tokenizer_order(run.results))
        figures = {group: [draw(run, palette, plots_dir) for draw in GROUP_PLOTS.get(group, [])] for group in GROUPS}
        report_text = render_report(run, tables, figures, train_chars_section(run, palette, plots_dir))
        publish(staging, run.run_dir, report_text)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return run.run_dir / REPORT_FILE


def publish(staging: Path, run_dir: Path, report_text: str) -> None:
    """Swap the new tables/ and plots/ in (the old ones go to the staging dir, removed after), then
    replace report.md atomically."""
    for name in (TABLES_DIR, PLOTS_DIR):
        target = run_dir / name
        if target.exists():
            os.replace(target, staging / f"previous-{name}")
        os.replace(staging / name, target)
    atomic_write_text(run_dir / REPORT_FILE, report_text)
