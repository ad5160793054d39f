"""The report's tables: one per metric and evaluation set (parity: shared and monolingual), one per
morpheme reference; each with its caption and the notes that explain its markers.  A ``Table`` is
format-free: ``benchmarks.report.formats`` prints it as Markdown, LaTeX and CSV, the HTML renderer as
HTML."""

from __future__ import annotations

import functools
import inspect
import math
import re
from dataclasses import dataclass
from typing import Any

import pandas as pd

from benchmarks.downstream.settings import SCORED_ROLES
from benchmarks.measure.metrics import METRICS
from benchmarks.measure.registry import DESCRIPTIVE, Capability, Metric, Needs, boundary_baseline_of, capabilities_of
from benchmarks.report.cells import at_report_size, column_keys, constant_columns, mark_best, tokenizer_order
from benchmarks.report.findings import vocab_label
from benchmarks.report.load import Run
from benchmarks.run.parallel import ENGLISH

REACHED_MARK, UNK_MARK, BASELINE_MARK = "†", "‡", "§"
#: a correlation whose confidence interval includes 0 (the validity tables)
INCLUDES_ZERO_MARK = "∘"
#: what each evaluation set is, for captions
EVAL_SETS = {
    "test": "the held-out test text of each corpus",
    "eval": "the evaluation text (a parallel set such as FLORES: the same sentences in every language)",
    "train": "the trained tokenizer itself",
}


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
    row_header: str = "tokenizer"  # what the rows are

    @functools.cached_property
    def corner(self) -> str:
        """The header of the row labels, with ``↓``/``↑`` (lower/higher is better) when every cell is a value of
        one ranked metric of the registry; a table of several metrics marks its column labels instead."""
        metrics = set(self.cells["metric"])
        mark = METRICS[next(iter(metrics))].direction_mark if len(metrics) == 1 and metrics <= set(METRICS) else ""
        return f"{self.row_header} {mark}" if mark else self.row_header

    def cell(self, tokenizer: str, column: str) -> dict[str, Any] | None:
        """The first cell of (tokenizer, column) as a record (column name -> value), None when there is none."""
        return self._records.get((tokenizer, column))

    @functools.cached_property
    def _records(self) -> dict[tuple[str, str], dict[str, Any]]:
        """The first cell of each (tokenizer, column) as a record, read once: every format asks for every cell."""
        records: dict[tuple[str, str], dict[str, Any]] = {}
        for record in self.cells.to_dict("records"):
            records.setdefault((record["tokenizer"], record["column"]), record)
        return records

    @functools.cached_property
    def rules_before(self) -> list[int]:
        """Rows that start a new row type (a rule above them)."""
        kinds: dict[str, str] = {}
        for tokenizer, row_type in zip(self.cells["tokenizer"], self.cells["row_type"], strict=True):
            kinds.setdefault(tokenizer, row_type)  # each tokenizer's first cell
        return [i for i in range(1, len(self.tokenizers))
                if kinds[self.tokenizers[i]] != kinds[self.tokenizers[i - 1]]]  # fmt: skip


def definition(info: Metric) -> str:
    """The one-sentence definition a caption quotes: the registry's, else the first line of the docstring."""
    if info.definition:
        return info.definition
    doc = inspect.getdoc(info.compute) or ""
    return doc.splitlines()[0].rstrip(".") if doc else info.label


def interval_phrase(run: Run, cells: pd.DataFrame) -> str:
    has_interval = cells["ci_low"].notna().any()
    return f"value with its {run.ci_name} (bootstrap over items) in brackets" if has_interval else "value"


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
        notes = table_notes(run, cells) + (LANGUAGE_MODEL_NOTES if info.needs is Needs.LANGUAGE_MODEL else [])
        notes += wordless_notes(run, info, cells)
        tables.append(build_table(cells, ranked=ranked, slug=slug, heading=heading, caption=caption, group=info.group,
                                  column_header="language", notes=notes))  # fmt: skip
    return tables


#: what every table of a language-model metric says (``benchmarks.downstream``)
LANGUAGE_MODEL_NOTES = [
    "Each value is the mean over the models' seeds; its CI resamples documents and seeds together. Bytes under an "
    "<unk> token are charged 8 bits each (an upper bound: the byte sent verbatim), so a row that emits <unk> is "
    "ranked on an upper bound of its cost (docs/metrics.md#bpb).",
]


def match_phrase(run: Run) -> str:
    return " (each trained tokenizer at the run size whose reached vocabulary is closest)" if run.match == "reached" \
        else ""  # fmt: skip


def parallel_pairs(run: Run) -> dict[str, dict[str, Any]]:
    """The manifest's parallel pairs (``benchmarks.run.parallel.ParallelPlan.to_json``): per non-English corpus its
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
    shared, trained = cells[run.shared(cells)], cells[~run.shared(cells)].copy()
    where = f"On `{eval_set}`, {EVAL_SETS.get(eval_set, 'an evaluation set')}"  # starts a sentence
    tables = []
    if not shared.empty:
        caption = (f"{info.label} (`{info.name}`), shared-tokenizer premium: one tokenizer (published, or trained "
                   "on every language) encodes every language, as in Petrov et al. 2023. "
                   f"Definition: {definition(info)}. {where}: {interval_phrase(run, shared)}; lowest premium per "
                   "language in bold.")  # fmt: skip
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
                column_header="metric", columns=metrics,
                column_labels=[f"{METRICS[m].label} {METRICS[m].direction_mark}".rstrip() for m in metrics],
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
    same = constant_columns(cells)
    if same:
        notes.append("Every ranked row prints the same value in " + "; ".join(f"{column} ({value})" for column, value
                                                                             in same.items()) + ": none is best there.")
    return notes


def wordless_notes(run: Run, info: Metric, cells: pd.DataFrame) -> list[str]:
    """For a metric that counts words: the languages of the run without a cell because their script writes no
    spaces between words and their corpus has no gold words (``Metric.counts_words``; none is computed)."""
    from corpora.spec import UNSPACED_SCRIPTS

    if not info.counts_words:
        return []
    corpora = run.manifest.get("corpora")
    languages = {str(entry.get("language", "")) for entry in (corpora.values() if isinstance(corpora, dict) else [])
                 if isinstance(entry, dict)}  # fmt: skip
    missing = sorted(language for language in languages - set(cells["language"])
                     if language.partition("_")[2] in UNSPACED_SCRIPTS)  # fmt: skip
    if not missing:
        return []
    scripts = sorted({language.partition("_")[2] for language in missing})
    return [f"No {info.label} for {', '.join(missing)}: their scripts ({', '.join(scripts)}) write no spaces between "
            "words and these corpora have no gold words, so there are no words to count (a word segmenter would be "
            "a choice of its own; none is made)."]


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


#: the validity tables' methods, as captions name them
CORRELATIONS = {"spearman": "Spearman's ρ", "kendall": "Kendall's τ-b"}


def predictor_label(metric: str, reference: str) -> str:
    """A validity table's row: the metric's name (as in results.*, short enough for a page's width), and the
    morpheme reference it was measured against."""
    return f"{metric} · {reference}" if reference else metric


def validity_tables(run: Run) -> list[Table]:
    """Per correlation method, the intrinsic metrics (rows, registry order) × languages and pooled (columns):
    the correlation with bits per byte across the tokenizer rows with a language model, with its bootstrap
    CI over tokenizers (``benchmarks.downstream.validity``)."""
    validity = run.validity
    if validity is None or validity.empty:
        return []
    # one row per metric: measured on the set the models are scored on first, on a reference, or on the tokenizer
    # itself (the CSV, downstream-validity.csv, has every evaluation set)
    primary = validity["bpb_eval_set"].iloc[0]
    validity = validity[(validity["eval_set"] == primary) | ~validity["eval_set"].isin(SCORED_ROLES)]
    tables = []
    for method, name in CORRELATIONS.items():
        rows = validity[validity["method"] == method]
        if rows.empty:
            continue
        labels = [predictor_label(metric, reference) for metric, reference
                  in zip(rows["metric"], rows["reference"], strict=True)]  # fmt: skip
        zero = (rows["ci_low"] <= 0) & (rows["ci_high"] >= 0)
        cells = pd.DataFrame({
            "tokenizer": labels, "column": rows["language"], "language": rows["language"], "corpus": "",
            "eval_set": rows["eval_set"], "reference": rows["reference"], "metric": rows["metric"],
            "row_type": "predictor", "kind": "", "vocab_size": pd.NA, "reached": math.nan, "reached_mark": "",
            "value": rows["value"], "ci_low": rows["ci_low"], "ci_high": rows["ci_high"], "n": rows["n"],
            "unk_share": math.nan, "not_ranked": ["interval_includes_zero" if flag else "" for flag in zero],
            "best": False, "fmt": "{:+.2f}"}).reset_index(drop=True)  # fmt: skip
        present = set(rows["language"])
        languages = sorted(present - {"pooled"}) + (["pooled"] if "pooled" in present else [])
        points = rows.groupby("language")["n"].max()
        tables.append(Table(
            slug=f"bpb-validity-{method}", heading=f"Which metric predicts bits per byte: {name}",
            caption=(f"{name} between each intrinsic metric (rows, named as in results.csv; after · the morpheme "
                     "reference it is measured against) and bits per "
                     f"byte (`bpb`) on `{primary}` across the tokenizer rows with a language model, per language "
                     "and pooled, with "
                     f"a {run.ci_name} from a bootstrap over tokenizers. BPB is lower-is-better: a negative value "
                     "means higher metric values go with better models. Other evaluation sets: "
                     "downstream-validity.csv."),
            group="downstream", column_header="language", columns=languages,
            column_labels=[f"{language} (n={int(points[language])})" for language in languages],
            tokenizers=list(dict.fromkeys(labels)), cells=cells, row_header="metric",
            notes=[f"{INCLUDES_ZERO_MARK}: the {run.ci_name} includes 0, so the sign of this correlation is not "
                   "established.",
                   "n: tokenizer rows with a model (each vocabulary size a point); pooled: every language's points "
                   "after subtracting that language's mean from the metric and from BPB (a within-language "
                   "correlation).",
                   "With a handful of tokenizers per language a rank correlation is coarse: a CI that excludes "
                   "0 is evidence for these models at this scale, not for large models."]))  # fmt: skip
    return tables
