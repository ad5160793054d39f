"""The paper-style report of one run directory.

``write_report(RUN_DIR)`` reads the run once (``load``: results, manifest, costs, paired tests, examples,
and the run's tokenizers for the splits section) and writes, atomically:

* ``report.md`` - run facts (corpora, morpheme references with gold/silver and agreement), a warning
  when tokenizers stopped far below their requested vocabulary size, how to read the markers, then one
  table per metric and evaluation set (per morpheme reference for morphology) and the plots with
  findings computed from the numbers (``benchmarks.report.findings``);
* ``tables/<slug>.tex`` (booktabs, ``benchmarks.render.latex``: fits a one- and a two-column ``article``)
  with a ``.csv`` of its cells (full precision) beside it; captions and notes are the Markdown ones;
* ``plots/<name>.png|.pdf|.svg`` (``benchmarks.report.plots``);
* ``report.html`` - the same document as one self-contained page (``html``): navigation, sortable tables,
  a filter by language and tokenizer family, markers explained on hover, the plots inline as SVG, the
  token explorer for the example sentences;

The package: ``load`` (the ``Run``), ``cells`` (choosing and flagging cells), ``tables`` (the ``Table``
of each metric and reference, with captions and notes), ``formats`` (a table as Markdown, LaTeX, CSV),
``figures`` (plots with findings), ``sections`` (one module per section, listed once in
``sections.SECTIONS``), ``document`` (the blocks sections return, and their Markdown) and ``html`` (the
same blocks as report.html).

Conventions (stated so every output is reproducible and every claim checkable):

* **Layout.**  Rows are tokenizers (trained families, then sentencepiece reference rows, then published
  rows, each sorted by label; a rule between the groups), columns are languages (a language with several
  corpora gets one column per corpus) or, in a morphology table, metrics.  A metric evaluated on several
  sets (UD test text, FLORES) gets one table per set: their rows never interleave.
* **Report vocabulary size** ``config.report.vocab_size``.  A trained tokenizer's cell is the run size
  closest to it: closest requested size (``report.match = "requested"``, ties to the smaller) or closest
  reached size (``"reached"``).  Published rows have their own vocabularies and are always shown.
* **Markers.**  † + a number: the vocabulary the tokenizer reached, when it differs from the size
  requested (monolingual parity: this language's and English's).  ‡: more than ``report.unk_threshold``
  of its tokens are ``<unk>`` (Petrov et al. 2023 mask such pairs): never ranked.  §: a baseline on
  boundary metrics (``registry.boundary_baseline_of``): never ranked.  Rows on a reference with a caveat
  (the Korean MorphScore file) are never ranked either.  Every table says in its notes which apply.
* **Best** per column: the highest or lowest ranked value by the metric's direction
  (``metrics.METRICS``); every ranked cell whose value *as printed* equals the printed best is bold too.
  Nothing is bold when fewer than two cells of a column are ranked, for descriptive metrics, and for
  monolingual parity (it compares languages, not tokenizers).
* Nothing depends on the clock: identical results and manifest give byte-identical files (the
  manifest's ``timings`` are not shown).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from benchmarks.files import atomic_write_text
from benchmarks.measure.metrics import GROUPS, METRICS
from benchmarks.report import plots
from benchmarks.report.cells import (
    CELL_KEYS,
    add_row_labels,
    at_report_size,
    caveats,
    column_keys,
    flag_cells,
    mark_best,
    tokenizer_order,
)
from benchmarks.report.document import PLOTS_DIR, TABLES_DIR, to_markdown
from benchmarks.report.figures import Plot, Skipped, draw_figures
from benchmarks.report.formats import MISSING, cell_texts, code_span, csv_table, latex_table, latex_text, markdown_table
from benchmarks.report.languages import language_tables
from benchmarks.report.load import MATCHES, Run, RunTokenizers, load_run, read_manifest, run_tokenizers, with_unit_facts
from benchmarks.report.sections import Context, document
from benchmarks.report.sections.inference import inference_groups, inference_method
from benchmarks.report.tables import (
    BASELINE_MARK,
    ENGLISH,
    EVAL_SETS,
    REACHED_MARK,
    UNK_MARK,
    Table,
    build_table,
    metric_tables,
    reference_tables,
    validity_tables,
)


def build_tables(run: Run) -> list[Table]:
    """Metric tables in registry order, then per group the morphology tables (by language, gold first), the
    tables across languages (``languages``) and the validity tables of the language models."""
    present = set(run.results.loc[run.results["reference"] == "", "metric"])
    tables = [table for metric in METRICS if metric in present for table in metric_tables(run, metric)]
    tables += reference_tables(run)
    tables += language_tables(run)
    tables += validity_tables(run)
    group_rank = {group: i for i, group in enumerate(GROUPS)}
    return sorted(tables, key=lambda table: group_rank[table.group])  # stable: keeps the order above per group


REPORT_FILE = "report.md"
HTML_FILE = "report.html"


def write_report(run_dir: Path, jobs: int | None = None) -> Path:
    """Write report.md, report.html, tables/ and plots/ into ``run_dir`` from its own files; return
    report.md's path.

    Everything is built in a temporary directory inside ``run_dir`` and moved into
    place at the end, so an error leaves the previous report (if any) untouched.
    The plots are drawn on ``jobs`` processes (default: every core); each plot's files
    do not depend on where it was drawn.
    """
    from benchmarks.report.html import to_html

    run = load_run(Path(run_dir))
    staging = Path(tempfile.mkdtemp(dir=run.run_dir, prefix=".report-"))
    try:
        tables_dir, plots_dir = staging / TABLES_DIR, staging / PLOTS_DIR
        tables_dir.mkdir()
        plots_dir.mkdir()
        tables: list[Table] = []

        def write_tables() -> None:  # while the plots are drawn
            tables.extend(build_tables(run))
            for table in tables:
                (tables_dir / f"{table.slug}.tex").write_text(latex_table(table), encoding="utf-8")
                (tables_dir / f"{table.slug}.csv").write_text(csv_table(table), encoding="utf-8")

        figures, training = draw_figures(run, plots_dir, jobs or os.cpu_count() or 1, write_tables)
        blocks = document(Context(run, tables, figures, training))
        (staging / HTML_FILE).write_text(to_html(blocks, plots_dir), encoding="utf-8")
        publish(staging, run.run_dir, to_markdown(blocks))
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return run.run_dir / REPORT_FILE


def publish(staging: Path, run_dir: Path, report_text: str) -> None:
    """Swap the new tables/ and plots/ in (the old ones go to the staging dir, removed after), then
    replace report.html and report.md atomically."""
    for name in (TABLES_DIR, PLOTS_DIR):
        target = run_dir / name
        if target.exists():
            os.replace(target, staging / f"previous-{name}")
        os.replace(staging / name, target)
    os.replace(staging / HTML_FILE, run_dir / HTML_FILE)
    atomic_write_text(run_dir / REPORT_FILE, report_text)


def splits_section(run: Run) -> list[str]:
    """The "How the tokenizers split" section of ``run`` as report.md's lines (empty without examples)."""
    from benchmarks.report.document import markdown_lines
    from benchmarks.report.sections.splits import splits_section as blocks_of

    return [line for block in blocks_of(Context(run, [], {})) for line in markdown_lines(block)]


__all__ = [
    "BASELINE_MARK", "CELL_KEYS", "ENGLISH", "EVAL_SETS", "HTML_FILE", "MATCHES", "MISSING", "PLOTS_DIR",
    "REACHED_MARK", "REPORT_FILE", "TABLES_DIR", "UNK_MARK", "Plot", "Run", "RunTokenizers", "Skipped", "Table",
    "add_row_labels", "at_report_size", "build_table", "build_tables", "caveats", "cell_texts", "code_span",
    "column_keys", "csv_table", "flag_cells", "inference_groups", "inference_method", "latex_table", "latex_text",
    "load_run", "mark_best", "markdown_table", "plots", "publish", "read_manifest", "run_tokenizers",
    "splits_section", "tokenizer_order", "with_unit_facts", "write_report",
]  # fmt: skip
