"""The paper-style report of one run directory.

``write_report(RUN_DIR)`` reads only ``RUN_DIR/results.parquet`` (or ``results.csv``) and
``RUN_DIR/manifest.json`` and writes, atomically:

* ``report.md`` - run facts (corpora, morpheme references with gold/silver and agreement), a warning
  when tokenizers stopped far below their requested vocabulary size, how to read the markers, then one
  table per metric and evaluation set (per morpheme reference for morphology) and the plots with
  findings computed from the numbers (``benchmarks.findings``);
* ``tables/<slug>.tex`` (booktabs, ``benchmarks.render.latex``: fits a one- and a two-column ``article``)
  with a ``.csv`` of its cells (full precision) beside it; captions and notes are the Markdown ones;
* ``plots/<name>.png|.pdf|.svg`` (``benchmarks.plots``);
* the section "How the tokenizers split": the run's example sentences (``examples.json``) encoded by
  every tokenizer of the run, re-loaded from ``RUN_DIR/tokenizers/`` and the manifest.

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

import functools
import inspect
import json
import math
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import pandas as pd

import bpe
import bpe.render
from benchmarks import findings, plots, render
from benchmarks.errors import BenchmarkError
from benchmarks.evaluate import SIGNIFICANCE_LEVEL, holm_by_family
from benchmarks.examples import EXAMPLE_CHARS, Example, read_examples
from benchmarks.files import ROW_TYPES, atomic_write_text, read_results, train_chars_of, trained_tokenizer_path
from benchmarks.findings import vocab_label
from benchmarks.metrics import GROUPS, METRICS
from benchmarks.parallel import why_no_parity
from benchmarks.pretrained import PretrainedRow
from benchmarks.registry import DESCRIPTIVE, Capability, Metric, boundary_baseline_of, capabilities_of
from benchmarks.render import latex_escape, md_escape
from bpe.options import options_by_name
from bpe.render import EMPTY, SEPARATOR

REPORT_FILE = "report.md"
TABLES_DIR = "tables"
PLOTS_DIR = "plots"
MISSING = findings.MISSING  # an empty cell (this tokenizer has no row for this language)
ENGLISH = "eng_Latn"

REACHED_MARK, UNK_MARK, BASELINE_MARK = "†", "‡", "§"
#: a tokenizer that reached less than this share of its requested size "stops far below" it
FAR_BELOW = 0.9
#: what each evaluation set is, for captions
EVAL_SETS = {
    "test": "the held-out test text of each corpus",
    "eval": "the evaluation text (a parallel set such as FLORES: the same sentences in every language)",
    "train": "the trained tokenizer itself",
}
MATCHES = ("requested", "reached")


# --------------------------------------------------------------------------- reading a run


@dataclass(frozen=True)
class Run:
    run_dir: Path
    results: pd.DataFrame  # files.RESULT_COLUMNS, plus each row's unit facts (``with_unit_facts``)
    manifest: dict[str, Any]
    report_vocab_size: int
    ci_level: float  # e.g. 0.95
    match: str = "requested"  # MATCHES
    unk_threshold: float = 0.1

    @property
    def ci_name(self) -> str:
        return f"{self.ci_level * 100:g}% CI"

    @property
    def at(self) -> str:
        return vocab_label(self.report_vocab_size)

    def reference_facts(self, corpus: str, reference: str) -> dict[str, Any]:
        """The manifest's entry for a morpheme reference (empty when the manifest does not describe it)."""
        corpora = self.manifest.get("corpora")
        entry = corpora.get(corpus, {}) if isinstance(corpora, dict) else {}
        facts = entry.get("references", {}).get(reference, {}) if isinstance(entry, dict) else {}
        return facts if isinstance(facts, dict) else {}


def load_run(run_dir: Path) -> Run:
    """Read and check a run directory; every problem is one BenchmarkError naming the file and field."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise BenchmarkError(f"{run_dir}: no such run directory")
    results = at_most_training_text(read_results(run_dir))
    manifest = read_manifest(run_dir)
    config = manifest["config"]
    report = config.get("report")
    report = report if isinstance(report, dict) else {}
    where = run_dir / "manifest.json"
    size = report.get("vocab_size")
    if not isinstance(size, int) or isinstance(size, bool) or size <= 0:
        raise BenchmarkError(f"{where}: field config.report.vocab_size must be a positive integer, got {size!r}")
    level = config.get("confidence", 0.95)
    if not isinstance(level, float) or not 0 < level < 1:
        raise BenchmarkError(f"{where}: field config.confidence must be in (0, 1), got {level!r}")
    match = report.get("match", "requested")
    if match not in MATCHES:
        raise BenchmarkError(f"{where}: field config.report.match must be one of {', '.join(MATCHES)}, got {match!r}")
    threshold = report.get("unk_threshold", 0.1)
    if isinstance(threshold, bool) or not isinstance(threshold, int | float) or not 0 < threshold <= 1:
        raise BenchmarkError(f"{where}: field config.report.unk_threshold must be in (0, 1], got {threshold!r}")
    return Run(run_dir, with_unit_facts(results), manifest, size, level, match, float(threshold))


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


def _unit(row: Any) -> tuple[str, str, int | None]:
    return row.corpus, row.tokenizer, None if pd.isna(row.vocab_size) else int(row.vocab_size)


def with_unit_facts(results: pd.DataFrame) -> pd.DataFrame:
    """``results`` with two columns about the unit of each row (corpus, tokenizer, requested size):
    ``reached``, its ``vocab_size_reached`` (NaN for published rows and when not computed), and
    ``unk_share``, its ``unk_token_rate`` on the row's evaluation set (on a row of another set, such as a
    reference or the tokenizer itself: the largest over its evaluation sets; NaN when not computed)."""
    reached: dict[tuple[str, str, int | None], float] = {}
    unk: dict[tuple[str, str, int | None, str], float] = {}
    for row in results[results["metric"].isin(["vocab_size_reached", "unk_token_rate"])].itertuples():
        if row.metric == "vocab_size_reached":
            reached[_unit(row)] = row.value
        else:
            unk[(*_unit(row), row.eval_set)] = row.value
    worst: dict[tuple[str, str, int | None], float] = {}
    for (*unit, _), value in unk.items():
        key = tuple(unit)
        worst[key] = max(worst.get(key, value), value)  # type: ignore[index]
    rows = list(results.itertuples())
    return results.assign(
        reached=[reached.get(_unit(row), math.nan) for row in rows],
        unk_share=[unk.get((*_unit(row), row.eval_set), worst.get(_unit(row), math.nan)) for row in rows],
    )


# --------------------------------------------------------------------------- selecting cells

CELL_KEYS = ["language", "corpus", "eval_set", "reference", "metric", "tokenizer"]


def tokenizer_order(frame: pd.DataFrame) -> list[str]:
    """Row order: families, reference rows, published rows (row types in ``ROW_TYPES`` order, unknown ones
    last); each sorted by label."""
    kinds = frame.drop_duplicates("tokenizer").set_index("tokenizer")["row_type"]
    rank = {row_type: i for i, row_type in enumerate(ROW_TYPES)}
    return sorted(kinds.index, key=lambda label: (rank.get(kinds[label], len(ROW_TYPES)), label))


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


def at_report_size(rows: pd.DataFrame, run: Run) -> pd.DataFrame:
    """One row per cell: published rows as they are, trained rows at the run size closest to the report
    size, by requested or by reached size (``run.match``; equal distance: the smaller requested size);
    each cell flagged (``flag_cells``) and labelled (``add_row_labels``)."""
    target = run.report_vocab_size
    sized = rows[rows["vocab_size"].notna()].copy()
    basis = sized["vocab_size"].astype("float64")
    if run.match == "reached":
        basis = sized["reached"].where(sized["reached"].notna(), basis)
    sized["distance"] = (basis - target).abs()
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
    for row, is_morphology in zip(cells.itertuples(), morphology, strict=True):
        if (row.corpus, row.reference) in unreliable:
            reasons.append("unreliable")
        elif is_morphology and boundary_baseline_of(row.kind) is not None:
            reasons.append("baseline")
        elif row.unk_share > run.unk_threshold:
            reasons.append("unk")
        else:
            reasons.append("")
    short = cells["reached"].notna() & cells["vocab_size"].notna() & (cells["reached"] != cells["vocab_size"])
    marks = [f"{int(reached):,}" if is_short else "" for reached, is_short in zip(cells["reached"], short, strict=True)]
    return cells.assign(not_ranked=reasons, reached_mark=marks)


# --------------------------------------------------------------------------- tables


@dataclass(frozen=True)
class Table:
    slug: str  # file stem under tables/
    heading: str  # Markdown heading text (backticks mark names)
    caption: str  # plain text (backticks mark names), the same in report.md and the .tex
    group: str
    column_header: str  # what the columns are: "language" or "metric"
    columns: list[str]  # column keys, in order
    column_labels: list[str]
    tokenizers: list[str]  # rows, in order
    cells: pd.DataFrame  # one per (tokenizer, column): metric, value, ci_low, ci_high, not_ranked, best, ...
    notes: list[str]  # plain text (backticks mark names)

    def cell(self, tokenizer: str, column: str) -> pd.Series | None:
        position = self._cell_positions.get((tokenizer, column))
        return None if position is None else self.cells.iloc[position]

    @functools.cached_property
    def _cell_positions(self) -> dict[tuple[str, str], int]:
        """The row of the first cell of each (tokenizer, column): ``cell`` is called for every cell."""
        positions: dict[tuple[str, str], int] = {}
        for position, key in enumerate(zip(self.cells["tokenizer"], self.cells["column"], strict=True)):
            positions.setdefault(key, position)
        return positions

    @property
    def rules_before(self) -> list[int]:
        """Rows that start a new row type (a rule above them)."""
        kinds = self.cells.drop_duplicates("tokenizer").set_index("tokenizer")["row_type"]
        return [i for i in range(1, len(self.tokenizers))
                if kinds[self.tokenizers[i]] != kinds[self.tokenizers[i - 1]]]  # fmt: skip


def mark_best(cells: pd.DataFrame, ranked: bool) -> pd.Series:
    """True for the best ranked cell(s) of each column (by its metric's direction); ties as printed are all
    best.  Only cells without a ``not_ranked`` reason count, and only when a column has two of them."""
    best = pd.Series(False, index=cells.index)
    if not ranked:
        return best
    for _, column in cells.groupby("column", sort=True):
        info = METRICS[column["metric"].iloc[0]]
        candidates = column[(column["not_ranked"] == "") & column["value"].map(math.isfinite)]
        if info.higher_is_better is None or len(candidates) < 2:
            continue
        values = candidates["value"]
        top = findings.format_value(info, values.max() if info.higher_is_better else values.min())
        best[candidates.index[[findings.format_value(info, v) == top for v in values]]] = True
    return best


def definition(info: Metric) -> str:
    """The one-sentence definition a caption quotes: the registry's, else the first line of the docstring."""
    if info.definition:
        return info.definition
    doc = inspect.getdoc(info.compute) or ""
    return doc.splitlines()[0].rstrip(".") if doc else info.label


def interval_phrase(run: Run, cells: pd.DataFrame) -> str:
    has_interval = cells["ci_low"].notna().any()
    return f"value with its {run.ci_name} (bootstrap over items) in brackets" if has_interval else "value"


def column_keys(cells: pd.DataFrame) -> pd.DataFrame:
    """Columns of a metric table: one per language, or per (language, corpus) when a language has several."""
    corpora = cells.groupby("language")["corpus"].nunique()
    labels = [language if corpora[language] == 1 else f"{language} ({corpus})"
              for language, corpus in zip(cells["language"], cells["corpus"], strict=True)]  # fmt: skip
    return cells.assign(column=labels)


def build_table(cells: pd.DataFrame, *, ranked: bool, **fields: Any) -> Table:
    cells = cells.reset_index(drop=True)
    cells = cells.assign(best=mark_best(cells, ranked))
    columns = fields.pop("columns", None) or sorted(cells["column"].unique())
    return Table(tokenizers=tokenizer_order(cells), columns=columns,
                 column_labels=fields.pop("column_labels", None) or columns, cells=cells, **fields)  # fmt: skip


def eval_sets_in_order(rows: pd.DataFrame) -> list[str]:
    known = [name for name in EVAL_SETS if name in set(rows["eval_set"])]
    return known + sorted(set(rows["eval_set"]) - set(known))


def metric_tables(run: Run, metric: str) -> list[Table]:
    """One table per evaluation set of ``metric`` (parity: two per set, shared and monolingual)."""
    info = METRICS[metric]
    rows = run.results[(run.results["metric"] == metric) & (run.results["reference"] == "")]
    sets = eval_sets_in_order(rows)
    tables = []
    for eval_set in sets:
        cells = column_keys(at_report_size(rows[rows["eval_set"] == eval_set], run))
        slug = metric if len(sets) == 1 else f"{metric}--{eval_set}"
        where = "" if len(sets) == 1 else f" on `{eval_set}`"
        heading = f"{info.label} (`{metric}`){where}"
        if info.group == "parity":
            tables += parity_tables(run, info, cells, slug, heading, eval_set)
            continue
        ranked = info.higher_is_better is not DESCRIPTIVE
        caption = (f"{info.label} (`{metric}`) on `{eval_set}`, {EVAL_SETS.get(eval_set, 'an evaluation set')}, "
                   f"at vocabulary size {run.at}{match_phrase(run)}: {interval_phrase(run, cells)}"
                   f"{'; best per language in bold' if ranked else '; descriptive, not ranked'}.")  # fmt: skip
        tables.append(build_table(cells, ranked=ranked, slug=slug, heading=heading, caption=caption, group=info.group,
                                  column_header="language", notes=table_notes(run, cells)))  # fmt: skip
    return tables


def match_phrase(run: Run) -> str:
    return " (each trained tokenizer at the run size whose reached vocabulary is closest)" if run.match == "reached" \
        else ""  # fmt: skip


def parallel_pairs(run: Run) -> dict[str, dict[str, Any]]:
    """The manifest's parallel pairs (``benchmarks.parallel.ParallelPlan.to_json``): per non-English corpus its
    English partner, the parallel set and how many sentences both hold (empty for a run that records none)."""
    parallel = run.manifest.get("parallel")
    pairs = parallel.get("pairs") if isinstance(parallel, dict) else None
    return {corpus: pair for corpus, pair in pairs.items() if isinstance(pair, dict)} if isinstance(pairs, dict) \
        else {}  # fmt: skip


def pairing_note(run: Run, cells: pd.DataFrame) -> str:
    """How the table's sentences were paired with English's, with the number of pairs behind each language
    (the rows' ``n``: the sentences both corpora hold; the dev ones for TokSuite's mean of ratios)."""
    pairs = parallel_pairs(run)
    counts = cells.drop_duplicates("column").set_index("column")["n"].sort_index()
    how = ", ".join(f"{column} {int(n):,}" for column, n in counts.items())
    if len(set(counts)) == 1:
        how = f"{int(counts.iloc[0]):,} sentences for every language"
    described = sorted({(pair.get("set"), pair.get("partner")) for corpus, pair in pairs.items()
                        if corpus in set(cells["corpus"])}, key=str)  # fmt: skip
    if not described:
        return f"Sentences paired with English's translation of the same sentence: {how}."
    sets = "; ".join(f"parallel set `{name}`, English from `{partner}`" for name, partner in described)
    note = (f"Sentences paired with English's by the key their corpus spec declares ({sets}), never by position: "
            f"{how}.")  # fmt: skip
    parallel = run.manifest.get("parallel")
    remarks = [str(text) for text in (parallel.get("notes") or [] if isinstance(parallel, dict) else [])
               if any(str(text).startswith(f"{corpus}:") for corpus in set(cells["corpus"]))]  # fmt: skip
    return " ".join([note, *(remark.rstrip(".") + "." for remark in remarks)])


def parity_tables(run: Run, info: Metric, cells: pd.DataFrame, slug: str, heading: str, eval_set: str) -> list[Table]:
    """Two tables of one parity metric: the premium of each shared (published) tokenizer across languages,
    and the ratio of separately trained monolingual tokenizers (not ranked)."""
    cells = cells[cells["language"] != ENGLISH]  # English against itself is 1 by definition
    shared, trained = cells[cells["vocab_size"].isna()], cells[cells["vocab_size"].notna()].copy()
    where = f"On `{eval_set}`, {EVAL_SETS.get(eval_set, 'an evaluation set')}"  # starts a sentence
    tables = []
    if not shared.empty:
        caption = (f"{info.label} (`{info.name}`), shared-tokenizer premium: one published tokenizer encodes "
                   f"every language, as in Petrov et al. 2023. Definition: {definition(info)}. {where}: "
                   f"{interval_phrase(run, shared)}; lowest premium per language in bold.")  # fmt: skip
        tables.append(build_table(shared, ranked=True, slug=f"{slug}--shared", heading=f"{heading}: shared-tokenizer "
                                  "premium", caption=caption, group=info.group, column_header="language",
                                  notes=[*table_notes(run, shared), pairing_note(run, shared)]))  # fmt: skip
    if not trained.empty:
        partners = {corpus: pair.get("partner") for corpus, pair in parallel_pairs(run).items()}
        reached = {
            (row.corpus, row.tokenizer, int(row.vocab_size)): row.value
            for row in run.results[(run.results["metric"] == "vocab_size_reached")
                                   & run.results["vocab_size"].notna()].itertuples()  # trained rows
        }  # fmt: skip
        marks = []
        for row in trained.itertuples():
            theirs = reached.get((partners.get(row.corpus), row.tokenizer, int(row.vocab_size)), math.nan)
            ours = row.reached
            differs = any(not math.isnan(x) and x != row.vocab_size for x in (ours, theirs))
            marks.append(f"{_count(ours)}:{_count(theirs)}" if differs else "")
        trained["reached_mark"] = marks
        caption = (f"{info.label} (`{info.name}`), monolingual ratio: each language has its own tokenizer of the "
                   "row's family, trained on its own text at the same requested size, so the ratio measures what the "
                   "language costs at a fixed vocabulary budget, not a shared tokenizer's bias. "
                   f"Definition: {definition(info)}. {where}, at vocabulary size {run.at}"
                   f"{match_phrase(run)}: {interval_phrase(run, trained)}; not ranked.")  # fmt: skip
        notes = [*table_notes(run, trained, parity=True), pairing_note(run, trained)]
        tables.append(build_table(trained, ranked=False, slug=f"{slug}--monolingual", heading=f"{heading}: "
                                  "monolingual ratio", caption=caption, group=info.group, column_header="language",
                                  notes=notes))  # fmt: skip
    return tables


def _count(value: float) -> str:
    return "?" if math.isnan(value) else f"{int(value):,}"


#: kind of a morpheme reference -> how headings call it
MORPHEME_REFERENCE_KINDS = {"gold": "gold", "morphscore": "gold", "silver": "silver"}


def reference_label(run: Run, corpus: str, reference: str) -> str:
    """``gold: Tikhonov 2002``, ``silver: pymorphy3 stem|ending`` (``reference`` when the manifest is silent)."""
    facts = run.reference_facts(corpus, reference)
    kind = MORPHEME_REFERENCE_KINDS.get(str(facts.get("kind", "")), "reference")
    return f"{kind}: {facts.get('citation') or reference}"


def agreement_sentence(run: Run, corpus: str, reference: str, language: str) -> str:
    """What a silver reference's caption says about its agreement with gold (empty for gold)."""
    facts = run.reference_facts(corpus, reference)
    if facts.get("kind") != "silver":
        return ""

    def figures(items: list[dict[str, Any]]) -> str:
        return "; ".join(
            f"{item['gold']} boundary F1 {item['f1']:.3f} (P {item['precision']:.3f}, R {item['recall']:.3f}) "
            f"on {item['words']:,} of {item['gold_words']:,} gold words" for item in items
        )

    if facts.get("agreement_measured"):
        return f" Silver: its agreement with gold, measured in this run: {figures(facts['agreement_measured'])}."
    documented = facts.get("agreement_documented")
    if documented:
        return (f" Silver: not checked against gold in this run (no gold reference for {language} here); measured "
                f"once with `tokbench corpora agreement` ({documented[0]['measured_with']}): {figures(documented)}.")
    return " Silver: its agreement with gold is unknown."


def reference_tables(run: Run) -> list[Table]:
    """Per (corpus, morpheme reference): tokenizers x metrics; comparability modes in a second table."""
    rows = run.results[run.results["reference"] != ""]
    tables = []
    kind_rank = {"gold": 0, "morphscore": 1, "silver": 2}
    keys = sorted(rows.groupby(["corpus", "reference"]).groups, key=lambda key: (
        rows.loc[rows["corpus"] == key[0], "language"].iloc[0],
        kind_rank.get(str(run.reference_facts(*key).get("kind")), 3), key[1], key[0]))  # fmt: skip
    several = rows.groupby("language")["corpus"].nunique()
    for corpus, reference in keys:
        subset = rows[(rows["corpus"] == corpus) & (rows["reference"] == reference)]
        language = subset["language"].iloc[0]
        where = f"{language}, `{corpus}`" if several[language] > 1 else language
        cells = at_report_size(subset, run).assign(column=lambda frame: frame["metric"])
        facts = run.reference_facts(corpus, reference)
        label = reference_label(run, corpus, reference)
        words = f"the {facts['words']:,} words" if isinstance(facts.get("words"), int) else "the words"
        caveat = facts.get("caveat")
        stem = "morphology--" + re.sub(r"[^A-Za-z0-9._-]+", "-", f"{reference}--{language}").strip("-")
        for optional in (False, True):
            part = cells[[METRICS[metric].optional == optional for metric in cells["metric"]]]
            if part.empty:
                continue
            metrics = [metric for metric in METRICS if metric in set(part["metric"])]
            mode = " (comparability modes)" if optional else ""
            caption = (f"Morpheme-boundary alignment on {words} of the {label} reference (`{reference}`, {where}), "
                       f"each word encoded alone, at vocabulary size {run.at}{match_phrase(run)}{mode}: "
                       f"{interval_phrase(run, part)}; "
                       f"{'not ranked (see the caveat)' if caveat else 'best per metric in bold'}.")  # fmt: skip
            if optional:
                caption += (" Uzan et al. 2024's filter scores only the words whose gold morphemes are all tokens of "
                            "the vocabulary and whose whole form is not (`words scored` is that share); "
                            "MorphScore (upstream) scores every row as listed and encodes the bare word "
                            "(docs/metrics.md).")  # fmt: skip
            caption += agreement_sentence(run, corpus, reference, language)
            if caveat:
                caption += f" Caveat: {caveat}."
            tables.append(build_table(
                part, ranked=not caveat, slug=stem + ("--modes" if optional else ""),
                heading=f"{language}: {label} (`{reference}`){mode}", caption=caption, group="morphology",
                column_header="metric", columns=metrics, column_labels=[METRICS[m].label for m in metrics],
                notes=table_notes(run, part),
            ))  # fmt: skip
    return tables


def table_notes(run: Run, cells: pd.DataFrame, parity: bool = False) -> list[str]:
    """The notes under a table: substituted sizes, and each marker that appears in it."""
    notes = substitution_notes(cells, run.report_vocab_size, run.match)
    if (cells["reached_mark"] != "").any():
        if parity:
            notes.append(f"{REACHED_MARK}a:b: the vocabulary sizes reached by this language's tokenizer (a) and by "
                         "English's (b), shown when either differs from the size requested (a size is an upper bound: "
                         "training stops when the text has no more to learn).")  # fmt: skip
        else:
            alphabet = cells["kind"].map(lambda kind: Capability.CHARACTER_TOKENS in capabilities_of(kind))
            marked = alphabet[cells["reached_mark"] != ""].any()
            tail = "; a character tokenizer's vocabulary is its alphabet" if marked else ""
            notes.append(f"{REACHED_MARK}n: the tokenizer reached n ids, not the size requested (a size is an upper "
                         f"bound: training stops when the text has no more to learn{tail}).")  # fmt: skip
    unk = cells[cells["not_ranked"] == "unk"]
    if not unk.empty:
        shares = ", ".join(f"{tokenizer} ({_share_range(group['unk_share'])})"
                           for tokenizer, group in unk.groupby("tokenizer", sort=True))  # fmt: skip
        notes.append(f"{UNK_MARK} not ranked: more than {run.unk_threshold:.0%} of its tokens are <unk> on this text, "
                     f"a degenerate row (Petrov et al. 2023 mask such pairs): {shares}.")  # fmt: skip
    baselines = sorted(set(cells.loc[cells["not_ranked"] == "baseline", "kind"]))
    if baselines:
        reasons = "; ".join(f"{kind} {boundary_baseline_of(kind)}" for kind in baselines)
        notes.append(f"{BASELINE_MARK} not ranked: a baseline on boundary metrics ({reasons}).")
    return notes


def _share_range(shares: pd.Series) -> str:
    low, high = shares.min(), shares.max()
    return f"{low:.1%}" if f"{low:.1%}" == f"{high:.1%}" else f"{low:.1%}–{high:.1%}"


def substitution_notes(cells: pd.DataFrame, target: int, match: str = "requested") -> list[str]:
    """One sentence per tokenizer shown at another requested size than the report size."""
    notes = []
    shifted = cells[cells["vocab_size"].notna() & (cells["vocab_size"] != target)]
    for (tokenizer, size), group in shifted.groupby(["tokenizer", "vocab_size"], sort=True):
        columns = sorted(group["column"].unique())
        where = "" if len(columns) == cells["column"].nunique() else f" ({', '.join(columns)})"
        if match == "reached":
            notes.append(f"{tokenizer} is shown at requested size {vocab_label(int(size))}, the run size whose reached "
                         f"vocabulary is closest to {vocab_label(target)}{where}.")  # fmt: skip
        else:
            notes.append(f"{tokenizer} was not run at {vocab_label(target)}: shown at {vocab_label(int(size))}, the "
                         f"closest size it was run at{where}.")  # fmt: skip
    return notes


def cell_texts(cell: pd.Series | None, bold: Callable[[str], str], escape: Callable[[str], str]) -> list[str]:
    """A cell as printed, in three parts: the value with its markers (bold when best), the confidence
    interval, the reached vocabulary size; escaped for the target format by ``escape``.  ``MISSING`` when
    there is no cell; empty parts when the cell has no interval or reached the size requested."""
    if cell is None or math.isnan(cell["value"]):
        return [escape(MISSING), "", ""]
    info = METRICS[cell["metric"]]
    value = escape(findings.format_value(info, cell["value"]))
    value = bold(value) if cell["best"] else value
    value += escape({"unk": UNK_MARK, "baseline": BASELINE_MARK}.get(cell["not_ranked"], ""))
    reached = escape(f"{REACHED_MARK}{cell['reached_mark']}") if cell["reached_mark"] else ""
    if math.isnan(cell["ci_low"]) or math.isnan(cell["ci_high"]):
        return [value, "", reached]
    low, high = findings.format_value(info, cell["ci_low"]), findings.format_value(info, cell["ci_high"])
    return [value, escape(f"[{low}, {high}]"), reached]


def markdown_table(table: Table) -> str:
    header = [md_escape(h) for h in ["tokenizer", *table.column_labels]]
    rows = []
    for tokenizer in table.tokenizers:
        cells = [cell_texts(table.cell(tokenizer, c), lambda v: f"**{v}**", md_escape) for c in table.columns]
        rows.append([md_escape(tokenizer), *(" ".join(part for part in parts if part) for parts in cells)])
    return render.markdown(header, rows, "l" + "r" * len(table.columns))


def latex_text(text: str) -> str:
    """Plain text with `names` in backticks as LaTeX: names in typewriter type, breakable after _ and -."""
    out = []
    for index, part in enumerate(text.split("`")):
        escaped = latex_escape(part)
        if index % 2:
            escaped = r"\texttt{" + escaped.replace(r"\_", r"\_\allowbreak{}").replace("-", r"-\allowbreak{}") + "}"
        out.append(escaped)
    return "".join(out)


def latex_table(table: Table) -> str:
    header = [latex_escape(h) for h in ["tokenizer", *table.column_labels]]
    rows, sublines = [], []
    for tokenizer in table.tokenizers:
        cells = [cell_texts(table.cell(tokenizer, c), lambda v: rf"\textbf{{{v}}}", latex_escape)
                 for c in table.columns]  # fmt: skip
        rows.append([latex_escape(tokenizer), *(f"{value} {reached}".strip() for value, _, reached in cells)])
        sublines.append(["", *(ci for _, ci, _ in cells)])
    body = render.latex(header, rows, "l" + "r" * len(table.columns), latex_text(table.caption), f"tab:{table.slug}",
                        sublines=sublines, rules_before=table.rules_before,
                        notes=[latex_text(note) for note in table.notes])  # fmt: skip
    return f"% tokbench table {table.slug}: needs \\usepackage{{booktabs,graphicx}}\n{render.FIT_MACRO}\n{body}\n"


def csv_table(table: Table) -> str:
    """The table's cells in long form, with full precision, the sizes each cell used and why it is not ranked."""
    columns = ["tokenizer", "column", "language", "corpus", "eval_set", "reference", "metric", "row_type",
               "vocab_size", "reached", "value", "ci_low", "ci_high", "n", "unk_share", "not_ranked",
               "best"]  # fmt: skip
    order = {t: i for i, t in enumerate(table.tokenizers)}
    column_order = {c: i for i, c in enumerate(table.columns)}
    cells = table.cells.assign(order=table.cells["tokenizer"].map(order),
                               column_order=table.cells["column"].map(column_order))  # fmt: skip
    cells = cells.sort_values(["order", "column_order"], kind="stable")[columns]
    return cells.to_csv(index=False, lineterminator="\n")


# --------------------------------------------------------------------------- plots with findings


@dataclass(frozen=True)
class Plot:
    """One plot of a group: its file stem (written as .png, .pdf and .svg), a caption, the findings under it."""

    stem: str
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


def snapshot(run: Run, metric: str) -> pd.DataFrame:
    """The cells of one metric at the report size, every evaluation set, labelled for plots and findings."""
    rows = run.results[(run.results["metric"] == metric) & (run.results["reference"] == "")]
    return at_report_size(rows, run) if not rows.empty else rows


def excluded_sentence(cells: pd.DataFrame, run: Run) -> str | None:
    """Which tokenizers the findings leave out of comparisons, and why."""
    reasons = {"unk": f"more than {run.unk_threshold:.0%} of its tokens are <unk>",
               "baseline": "a baseline on boundary metrics", "unreliable": "its reference is unreliable"}  # fmt: skip
    left_out = cells[cells["not_ranked"] != ""].drop_duplicates(["tokenizer", "not_ranked"])
    if left_out.empty:
        return None
    parts = [f"{tokenizer} ({', '.join(reasons[r] for r in sorted(group['not_ranked']))})"
             for tokenizer, group in left_out.groupby("tokenizer", sort=True)]  # fmt: skip
    return f"Left out of these comparisons where marked in the tables: {findings.join_names(parts)}."


def curve_plot(metric: str, run: Run, palette: dict[str, Any], out_dir: Path) -> Plot | Skipped:
    info = METRICS[metric]
    caption = f"{info.label} against the vocabulary size reached, per language and evaluation set"
    frame = plot_frame(run.results, metric)
    if frame["vocab_size"].notna().sum() == 0:
        return Skipped(caption, f"this run has no `{metric}` rows with a vocabulary size")
    cells = snapshot(run, metric)
    plots.vocab_curves(frame, info, palette, out_dir / f"{metric}-vs-vocab", baselines=alphabet_kinds(frame))
    return Plot(f"{metric}-vs-vocab", caption, findings.pick(
        findings.best_count(cells, info, run.at),
        findings.vocab_trend(frame, info),
        findings.language_gap(cells, info, run.at),
        excluded_sentence(cells, run),
    ))  # fmt: skip


def alphabet_kinds(frame: pd.DataFrame) -> set[str]:
    """Tokenizer labels whose vocabulary is their alphabet (drawn as a flat line, not against size)."""
    kinds = frame.drop_duplicates("tokenizer").set_index("tokenizer")["kind"]
    return {label for label, kind in kinds.items() if Capability.CHARACTER_TOKENS in capabilities_of(kind)}


def heatmap_plot(metric: str, run: Run, palette: dict[str, Any], out_dir: Path) -> Plot | Skipped:
    info = METRICS[metric]
    caption = f"{info.label} at {run.at}: tokenizers × languages"
    cells = snapshot(run, metric)
    if cells.empty:
        return Skipped(caption, f"this run has no `{metric}` rows")
    plots.heatmap(cells, info, tokenizer_order(cells), out_dir / f"{metric}-heatmap")
    return Plot(f"{metric}-heatmap", caption, findings.pick(
        findings.extremes(cells, info, run.at), findings.language_gap(cells, info, run.at),
        excluded_sentence(cells, run),
    ))  # fmt: skip


def morphology_plot(run: Run, palette: dict[str, Any], out_dir: Path) -> Plot | Skipped:
    info = METRICS["boundary_f1"]
    caption = f"boundary precision against recall at {run.at}, one panel per language and reference (F1 as contours)"
    rows = run.results[run.results["metric"].isin(["boundary_precision", "boundary_recall", "boundary_f1"])
                       & (run.results["reference"] != "")]  # fmt: skip
    if rows.empty:
        return Skipped(caption, "this run has no boundary precision, recall and F1 rows")
    cells = at_report_size(rows, run)
    cells["panel"] = [f"{language} · {reference_label(run, corpus, reference)}"
                      for language, corpus, reference in zip(cells["language"], cells["corpus"], cells["reference"],
                                                             strict=True)]  # fmt: skip
    plots.precision_recall(cells, palette, out_dir / "boundary-precision-recall")
    f1 = cells[cells["metric"] == "boundary_f1"].assign(row=lambda frame: frame["panel"])
    return Plot("boundary-precision-recall", caption, findings.pick(
        findings.best_count(f1, info, run.at, unit="language/reference pairs"), findings.extremes(f1, info, run.at),
        excluded_sentence(f1, run),
    ))  # fmt: skip


def parity_plot(metric: str, run: Run, palette: dict[str, Any], out_dir: Path) -> Plot | Skipped:
    info = METRICS[metric]
    caption = f"{info.label} at {run.at}: shared published tokenizers (left), monolingual trained tokenizers (right)"
    cells = snapshot(run, metric)
    cells = cells[cells["language"] != ENGLISH] if not cells.empty else cells
    if cells.empty:
        return Skipped(caption, f"this run has no `{metric}` rows for a language other than English "
                                "(parity needs a parallel corpus such as FLORES)")  # fmt: skip
    plots.parity_bars(cells, info, palette, out_dir / f"{metric}-bars")
    shared = cells[cells["vocab_size"].isna()]
    return Plot(f"{metric}-bars", caption, findings.pick(
        findings.best_count(shared, info, run.at), findings.extremes(shared, info, run.at),
        excluded_sentence(shared, run),
    ))  # fmt: skip


def overlap_plot(run: Run, palette: dict[str, Any], out_dir: Path) -> Plot | Skipped:
    """The vocabulary overlap of every two tokenizer rows per language (``overlap.csv``)."""
    caption = f"vocabulary overlap (Jaccard of the vocabularies' byte strings) at {run.at}: tokenizers × tokenizers"
    path = run.run_dir / "overlap.csv"
    overlap = pd.read_csv(path) if path.is_file() else pd.DataFrame()
    if overlap.empty:
        return Skipped(caption, "this run has no overlap.csv, or fewer than two tokenizer rows per corpus")
    overlap["panel"] = [f"{language} ({corpus})" for language, corpus in zip(overlap["language"], overlap["corpus"],
                                                                             strict=True)]  # fmt: skip
    plots.overlap_heatmaps(overlap, tokenizer_order(run.results), out_dir / "vocab-overlap-heatmap")
    order = overlap.sort_values(["jaccard", "panel", "tokenizer_a", "tokenizer_b"],
                                ascending=[False, True, True, True], kind="stable")  # fmt: skip
    same = order[order["jaccard"] == 1].drop_duplicates(["tokenizer_a", "tokenizer_b"])
    identical = ", ".join(f"{row.tokenizer_a} and {row.tokenizer_b}" for row in same.itertuples())
    sentences = [f"Same vocabulary: {identical}."] if identical else []
    different = order[order["jaccard"] < 1]
    if not different.empty:
        top = different.iloc[0]
        sentences.append(f"The largest overlap of two different vocabularies is {top.tokenizer_a} and "
                         f"{top.tokenizer_b} in {top.panel}: {top.jaccard:.3f} ({top.shared:,} shared of "
                         f"{top['union']:,} entries).")  # fmt: skip
    return Plot("vocab-overlap-heatmap", caption, sentences)


def group_plots(group: str) -> list[Callable[[Run, dict[str, Any], Path], Plot | Skipped]]:
    """The plots of each report section, in order (parity: one per parity metric of the registry)."""
    if group == "parity":
        return [partial(parity_plot, metric) for metric, info in METRICS.items() if info.group == "parity"]
    return GROUP_PLOTS.get(group, [])


#: the plots of each report section, in order
GROUP_PLOTS: dict[str, list[Callable[[Run, dict[str, Any], Path], Plot | Skipped]]] = {
    "oov": [partial(curve_plot, "unk_word_rate"), partial(curve_plot, "oov_token_rate")],
    "compression": [partial(curve_plot, "bytes_per_token")],
    "fertility": [partial(curve_plot, "fertility_isolated"), partial(curve_plot, "fertility_running"),
                  partial(heatmap_plot, "fertility_isolated"), partial(heatmap_plot, "fertility_running")],
    "morphology": [morphology_plot],
    "distribution": [overlap_plot],
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
    matched = "closest reached size" if run.match == "reached" else "closest requested size"
    lines.append(
        f"- report vocabulary size: {vocab_label(run.report_vocab_size)}, each trained tokenizer at its {matched} "
        f"(`report.match = \"{run.match}\"`); published tokenizers have their own vocabularies"
    )
    lines.append(f"- `<unk>` threshold: {run.unk_threshold:.0%} of tokens (`report.unk_threshold`)")
    data_root = manifest.get("data_root")
    if isinstance(data_root, dict) and data_root.get("matches_manifest") is False:
        counts = {name: len(data_root.get(name) or []) for name in ("differing", "missing", "extra")}
        lines.append("- data root: differs from tokbench's manifest (`tokbench data verify DIR` lists the files): "
                     + ", ".join(f"{count} {name}" for name, count in counts.items()))  # fmt: skip
    packages = manifest.get("packages")
    if isinstance(packages, dict) and packages:
        lines.append("- packages: " + ", ".join(f"{name} {packages[name]}" for name in sorted(packages)))
    return [*lines, "", *corpus_table(run), *reference_table(run)]


def corpus_table(run: Run) -> list[str]:
    corpora = run.manifest.get("corpora")
    if not isinstance(corpora, dict) or not corpora:
        return []
    rows = []
    for corpus_id in sorted(corpora):
        entry = corpora[corpus_id] if isinstance(corpora[corpus_id], dict) else {}
        documents, characters = entry.get("documents", {}), entry.get("characters", {})
        sources = entry.get("sources", {})
        for role in [r for r in ("train", "test", "eval") if r in documents] + sorted(set(documents) - set(EVAL_SETS)):
            rows.append([f"`{md_escape(corpus_id)}`", md_escape(str(entry.get("language", ""))), role,
                         _number(documents.get(role)), _number(characters.get(role)),
                         md_escape("; ".join(sources.get(role, [])))])  # fmt: skip
    if not rows:
        return []
    header = ["corpus", "language", "set", "documents", "characters", "read from"]
    return ["Corpora:", "", render.markdown(header, rows, "lllrrl"), ""]


def _number(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else "–"


def reference_table(run: Run) -> list[str]:
    corpora = run.manifest.get("corpora")
    rows = []
    for corpus_id in sorted(corpora) if isinstance(corpora, dict) else []:
        references = corpora[corpus_id].get("references", {}) if isinstance(corpora[corpus_id], dict) else {}
        for name in sorted(references):
            facts = references[name]
            agreement = facts.get("agreement_measured") or facts.get("agreement_documented") or []
            measured = "this run" if facts.get("agreement_measured") else "documented"
            with_gold = "; ".join(f"F1 {a['f1']:.3f} vs {a['gold']} ({measured})" for a in agreement)
            if facts.get("kind") != "silver":
                with_gold = "(gold)"
            rows.append([f"`{md_escape(corpus_id)}`", f"`{md_escape(name)}`",
                         md_escape(reference_label(run, corpus_id, name)), _number(facts.get("words")),
                         f"{facts['share_kept']:.1%}" if isinstance(facts.get("share_kept"), float) else "–",
                         md_escape(with_gold or "unknown"), md_escape(str(facts.get("caveat", "")))])  # fmt: skip
    if not rows:
        return []
    header = ["corpus", "reference", "kind", "words", "entries kept", "agreement with gold", "caveat"]
    return ["Morpheme references (gold: hand-made segmentations; silver: an analyzer's output, with its boundary "
            "F1 against gold):", "", render.markdown(header, rows, "lllrrll"), ""]  # fmt: skip


def vocabulary_warning(run: Run) -> list[str]:
    """A warning at the top when trained tokenizers stopped far below the vocabulary size they were asked for."""
    reached = run.results[(run.results["metric"] == "vocab_size_reached") & run.results["vocab_size"].notna()]
    reached = reached[~reached["tokenizer"].isin(alphabet_kinds(reached))] if not reached.empty else reached
    if reached.empty:
        return []
    short = reached[reached["value"] < FAR_BELOW * reached["vocab_size"].astype("float64")]
    if short.empty:
        return []
    at_report = short[short["vocab_size"] == run.report_vocab_size]
    lines = [f"> **Vocabulary sizes not reached.** {len(short)} of {len(reached)} trained tokenizers stopped below "
             f"{FAR_BELOW:.0%} of the size requested: a size is an upper bound, and their training text had no more to "
             f"learn. Tables print the size reached beside such cells ({REACHED_MARK}n); curves plot against the size "
             "reached."]  # fmt: skip
    if not at_report.empty:
        listed = "; ".join(
            f"{language}: " + ", ".join(f"{row.tokenizer} {int(row.value):,}" for row in group.itertuples())
            for language, group in at_report.sort_values(["language", "tokenizer"]).groupby("language", sort=True)
        )
        lines[0] += f" At the report size {run.at}: {listed}."
    by_size = short.groupby("vocab_size").size()
    totals = reached.groupby("vocab_size").size()
    lines[0] += " Per requested size: " + ", ".join(
        f"{vocab_label(int(size))} {count} of {totals[size]}" for size, count in by_size.items()) + "."  # fmt: skip
    if run.match == "requested":
        lines[0] += ' `report.match = "reached"` compares tokenizers at matched reached sizes instead.'
    return [*lines, ""]


def reading_guide(run: Run) -> list[str]:
    guide = (
        f"How to read the tables: rows are tokenizers (trained families, sentencepiece reference rows, published "
        f"tokenizers), columns are languages (in a morphology table: metrics); each cell is the value with its "
        f"{run.ci_name} (bootstrap over items) in brackets, the best per column in bold (ties as printed are all bold; "
        "descriptive metrics are not ranked). "
        f"Markers: {REACHED_MARK}n the vocabulary size the tokenizer reached, when it differs from the size requested; "
        f"{UNK_MARK} more than {run.unk_threshold:.0%} of its tokens are <unk> (never ranked); {BASELINE_MARK} a "
        f"baseline on boundary metrics such as char (never ranked); {MISSING} no row for that column. "
        "Morphology tables say whether their reference is gold or silver. Findings under each plot are generated "
        "from the numbers and leave out the rows that are not ranked."
    )
    return [md_escape(guide), ""]


def _md(text: str) -> str:
    """Plain text with `names` as Markdown: escaped outside the backticks."""
    return "`".join(part if index % 2 else md_escape(part) for index, part in enumerate(text.split("`")))


def group_section(group: str, tables: list[Table], figures: list[Plot | Skipped]) -> list[str]:
    lines = [f"## {GROUPS[group]}", ""]
    if not tables:
        lines += [f"_This run has no {group} rows._", ""]
    for table in tables:
        lines += [f"### {_md(table.heading)}", "", f"*{_md(table.caption)}*", "", markdown_table(table), ""]
        for note in table.notes:
            lines.append(f"_Note: {_md(note)}_  ")
        lines += [f"[LaTeX]({TABLES_DIR}/{table.slug}.tex) · [CSV]({TABLES_DIR}/{table.slug}.csv)", ""]
    for figure in figures:
        if isinstance(figure, Skipped):
            lines += [f"_Plot skipped ({md_escape(figure.caption)}): {figure.reason}._", ""]
            continue
        caption = md_escape(figure.caption)
        links = " · ".join(f"[{kind.upper()}]({PLOTS_DIR}/{figure.stem}.{kind})" for kind in plots.FORMATS)
        lines += [f"![{caption}]({PLOTS_DIR}/{figure.stem}.png)", "", f"*{caption}.* {links}", ""]
        if figure.sentences:
            lines += [md_escape(" ".join(figure.sentences)), ""]
    return lines


def render_report(run: Run, tables: list[Table], figures: dict[str, list[Plot | Skipped]],
                  training_data: Sequence[str] = ()) -> str:  # fmt: skip
    """report.md: one section function after another (a new section is one more line here);
    ``training_data``: the lines of ``train_chars_section`` (it draws a plot, so it runs beside the groups)."""
    lines = title_section(run)
    lines += vocabulary_warning(run)
    lines += run_facts(run)
    lines += reading_guide(run)
    lines += metric_sections(tables, figures, {"parity": why_no_parity(run.manifest.get("parallel"))})
    lines += training_data
    lines += inference_section(run)
    lines += cost_section(run)
    lines += paired_section(run)
    lines += splits_section(run)
    return "\n".join(lines).rstrip("\n") + "\n"


def title_section(run: Run) -> list[str]:
    config = run.manifest["config"]
    title = config.get("name") or run.manifest.get("run") or run.run_dir.name
    lines = [f"# tokbench report: {title}", ""]
    return lines + ([str(config["description"]), ""] if config.get("description") else [])


def metric_sections(tables: list[Table], figures: dict[str, list[Plot | Skipped]],
                    why_absent: Mapping[str, str | None] | None = None) -> list[str]:  # fmt: skip
    """One section per metric group with rows in this run (tables, plots, findings); the groups without
    rows are named in one line instead, each with the reason ``why_absent`` knows (parity: no parallel set)."""
    present = [group for group in GROUPS if any(table.group == group for table in tables)
               or any(isinstance(figure, Plot) for figure in figures.get(group, []))]  # fmt: skip
    absent = [group for group in GROUPS if group not in present]
    lines = ["Groups without rows in this run: " + ", ".join(absent) + ".", ""] if absent else []
    known = {group: why for group, why in (why_absent or {}).items() if why}
    reasons = [f"No {group} rows: {known[group]}." for group in absent if group in known]
    lines += [*reasons, ""] if reasons else []
    for group in present:
        lines += group_section(group, [table for table in tables if table.group == group], figures.get(group, []))
    return lines


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
    results = with_unit_facts(read_results(run.run_dir))
    values = results["options"].map(train_chars_of)
    axis = results[values.notna()].assign(train_chars=values[values.notna()])
    metric = next((name for name in TRAIN_CHARS_METRICS if name in set(axis["metric"])), None)
    if metric is None:
        return []
    info, at = METRICS[metric], vocab_label(run.report_vocab_size)
    rows = axis[(axis["metric"] == metric) & (axis["reference"] == "")]
    cells = pd.concat([at_report_size(group, run) for _, group in rows.groupby("train_chars")],
                      ignore_index=True).astype({"train_chars": "int64"})  # fmt: skip
    amounts = sorted(cells["train_chars"].unique())
    table = cells.pivot(index=["row", "tokenizer"], columns="train_chars", values="value")
    order = {label: position for position, label in enumerate(tokenizer_order(cells))}
    keys = sorted(table.index, key=lambda key: (key[0], order[key[1]]))
    body = [[md_escape(row), md_escape(tokenizer), *(_formatted(info, table.loc[(row, tokenizer), amount])
                                                      for amount in amounts)]
            for row, tokenizer in keys]  # fmt: skip
    stem = f"{metric}-vs-train-chars"
    plots.vocab_curves(cells, info, palette, plots_dir / stem, x="train_chars", x_label="training characters")
    caption = f"{info.label} against training characters, at {at}"
    better = {True: "higher is better", False: "lower is better", None: "descriptive"}[info.higher_is_better]
    intro = (f"{info.label} ({better}) of every trained row at {at} (or the closest size it has), each trained on "
             "the first training documents of its corpus up to `train_chars` characters (nested prefixes of one "
             "stream). The other sections show the rows trained on the most text.")
    header = ["language", "tokenizer", *(f"{amount:,} chars" for amount in amounts)]
    return ["## Training data", "", intro, "", render.markdown(header, body, "ll" + "r" * len(amounts)), "",
            f"![{md_escape(caption)}]({PLOTS_DIR}/{stem}.png)", "", f"*{md_escape(caption)}.*", ""]  # fmt: skip


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


def _native_method(kind: str) -> str:
    """A family's own encoding when ``encode_mode`` is not set (declared on its class)."""
    return bpe.family_class(kind).native_method if kind in bpe.FAMILIES else "merges"


def _parse_options(options: str) -> dict[str, str]:
    return dict(part.split("=", 1) for part in options.split(",")) if options else {}


def inference_method(kind: str, options: str) -> str:
    """A row's inference method as the report names it: ``encode_mode`` (the family's own when unset),
    with its sampling (``+ dropout 0.1``, ``+ sampling α=0.1``)."""
    parsed = _parse_options(options)
    method = parsed.get("encode_mode", _native_method(kind))
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
    encode_options = set(options_by_name(encode_time_only=True))  # ``bpe.options``: ENCODE_TIME, any family
    trained["training"] = parsed.map(lambda o: ",".join(f"{k}={v}" for k, v in o.items() if k not in encode_options))
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
        methods = sorted(group["method"].unique(), key=lambda m: (m != _native_method(kind), m))
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
    if "p_value_holm" not in paired.columns:  # a run written before paired.csv held the adjusted p-values
        paired["p_value_holm"] = holm_by_family(paired)
    lines = ["## Paired comparisons", "",
             "Tokenizer A minus tokenizer B in tokens per 1,000 characters on the same test documents "
             f"(report vocabulary size), with a paired bootstrap {run.ci_name} and the p-value of a paired "
             "permutation test (`benchmarks/stats.py`). A difference is called significant when its "
             f"Holm–Bonferroni adjusted p-value is below {SIGNIFICANCE_LEVEL:g} (one family per metric and "
             f"evaluation set: here all {len(paired)} pairs of all corpora). "
             "Full table: [paired.csv](paired.csv).", ""]  # fmt: skip
    for corpus, group in paired.groupby("corpus", sort=True):
        significant = group[group["p_value_holm"] < SIGNIFICANCE_LEVEL]
        lines.append(f"- `{corpus}`: {len(significant)} of {len(group)} pairs differ "
                     f"(Holm-adjusted p < {SIGNIFICANCE_LEVEL:g}).")
    cells = [
        [md_escape(row.corpus), md_escape(row.tokenizer_a), md_escape(row.tokenizer_b), f"{row.difference:.1f}",
         f"[{row.ci_low:.1f}, {row.ci_high:.1f}]", f"{row.p_value:.3g}", f"{row.p_value_holm:.3g}"]
        for row in paired.itertuples()
    ]  # fmt: skip
    table = render.markdown(["corpus", "A", "B", "A − B", "CI", "p", "p (Holm)"], cells, "lllrlrr")
    return [*lines, "", "<details><summary>all pairs</summary>", "", table, "", "</details>", ""]


# --------------------------------------------------------------------------- orchestration


def build_tables(run: Run) -> list[Table]:
    """Metric tables in registry order, then per group the morphology tables (by language, gold first)."""
    present = set(run.results.loc[run.results["reference"] == "", "metric"])
    tables = [table for metric in METRICS if metric in present for table in metric_tables(run, metric)]
    tables += reference_tables(run)
    group_rank = {group: i for i, group in enumerate(GROUPS)}
    return sorted(tables, key=lambda table: group_rank[table.group])  # stable: keeps the order above per group


def write_report(run_dir: Path, jobs: int | None = None) -> Path:
    """Write report.md, tables/ and plots/ into ``run_dir`` from its own results; return report.md's path.

    Everything is built in a temporary directory inside ``run_dir`` and moved into
    place at the end, so an error leaves the previous report (if any) untouched.
    The plots are drawn on ``jobs`` processes (default: every core); each plot's files
    do not depend on where it was drawn.
    """
    run = load_run(Path(run_dir))
    staging = Path(tempfile.mkdtemp(dir=run.run_dir, prefix=".report-"))
    try:
        tables_dir, plots_dir = staging / TABLES_DIR, staging / PLOTS_DIR
        tables_dir.mkdir()
        plots_dir.mkdir()
        tables = build_tables(run)
        for table in tables:
            (tables_dir / f"{table.slug}.tex").write_text(latex_table(table), encoding="utf-8")
            (tables_dir / f"{table.slug}.csv").write_text(csv_table(table), encoding="utf-8")
        palette = plots.tokenizer_palette(tokenizer_order(run.results))
        draws = [draw for group in GROUPS for draw in group_plots(group)]
        drawn = iter(_draw_all(draws, run, palette, plots_dir, jobs or os.cpu_count() or 1))
        figures = {group: [next(drawn) for _ in group_plots(group)] for group in GROUPS}
        report_text = render_report(run, tables, figures, train_chars_section(run, palette, plots_dir))
        publish(staging, run.run_dir, report_text)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return run.run_dir / REPORT_FILE


def _draw_all(draws: list[Callable[[Run, dict[str, Any], Path], Plot | Skipped]], run: Run,
              palette: dict[str, Any], plots_dir: Path, jobs: int) -> list[Plot | Skipped]:  # fmt: skip
    """Every plot of ``draws``, in order; on ``jobs`` worker processes when there are several."""
    if jobs < 2 or len(draws) < 2:
        return [draw(run, palette, plots_dir) for draw in draws]
    with ProcessPoolExecutor(max_workers=min(jobs, len(draws))) as pool:
        futures = [pool.submit(draw, run, palette, plots_dir) for draw in draws]
        return [future.result() for future in futures]


def publish(staging: Path, run_dir: Path, report_text: str) -> None:
    """Swap the new tables/ and plots/ in (the old ones go to the staging dir, removed after), then
    replace report.md atomically."""
    for name in (TABLES_DIR, PLOTS_DIR):
        target = run_dir / name
        if target.exists():
            os.replace(target, staging / f"previous-{name}")
        os.replace(staging / name, target)
    atomic_write_text(run_dir / REPORT_FILE, report_text)
