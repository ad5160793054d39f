""""Shared multilingual vocabularies": on a run with ``[[multilingual]]`` rows, how each shared tokenizer (one
per sampling exponent alpha) divides itself between the languages, at the report vocabulary size:

- its sample: each corpus's share of the training characters (the manifest's ``multilingual`` entry);
- its vocabulary: the share of entries of each script (audit.csv, ``benchmarks.measure.audit``);
- per language, bytes per token and, where the run pairs parallel text, the parity premium against English
  (``parity_vs_eng``), beside the monolingual rows of the same families.

Nothing for a run without multilingual rows."""

from __future__ import annotations

import pandas as pd

from benchmarks.measure.audit import SCRIPT_COLUMNS, SCRIPTS
from benchmarks.measure.metrics import METRICS
from benchmarks.report.cells import at_report_size
from benchmarks.report.document import Block, Heading, Inline, Paragraph, SimpleTable, Verbatim, text
from benchmarks.report.formats import MISSING
from benchmarks.report.sections.context import Context

#: the per-language comparisons, each where the run has it
PER_LANGUAGE = ("bytes_per_token", "parity_vs_eng")


def multilingual_section(context: Context) -> list[Block]:
    run = context.run
    samples = run.manifest.get("multilingual")
    if not isinstance(samples, dict) or not samples:
        return []
    labels = list(samples)
    intro = (f"Each shared tokenizer is trained once on a sample of several corpora, language i drawn with "
             f"probability ∝ n_i^α (n_i: its training characters), and evaluated on every corpus beside the "
             f"monolingual rows. At {run.at}: each corpus's share of the sample, and the share of vocabulary entries "
             "whose letters are all of one script (`other`: other scripts, a mix, or no letter).")  # fmt: skip
    corpora = sorted({corpus for facts in samples.values() for corpus in facts["characters"]},
                     key=lambda corpus: list(run.manifest.get("corpora", {})).index(corpus)
                     if corpus in run.manifest.get("corpora", {}) else 0)  # fmt: skip
    header: list[Inline] = [Verbatim(name) for name in ["tokenizer", "α", *(f"sample: {c}" for c in corpora),
                                                        *(f"vocabulary: {script}" for script in SCRIPTS)]]  # fmt: skip
    body: list[list[Inline]] = []
    values: list[list[float | None]] = []
    for label in labels:
        characters = samples[label]["characters"]
        total = sum(characters.values()) or 1
        shares = [characters.get(corpus, 0) / total for corpus in corpora]
        scripts = _script_shares(run.audit, label)
        body.append([label, f"{samples[label]['alpha']:g}", *(f"{share:.1%}" for share in shares),
                     *(MISSING if share is None else f"{share:.1%}" for share in scripts)])  # fmt: skip
        values.append([None, float(samples[label]["alpha"]), *shares, *scripts])
    blocks: list[Block] = [Heading(2, Verbatim("Shared multilingual vocabularies")), Paragraph(text(intro)),
                           SimpleTable(header, body, "l" + "r" * (len(header) - 1), values)]  # fmt: skip
    for metric in PER_LANGUAGE:
        blocks += _per_language(context, metric, labels)
    return blocks


def _script_shares(audit: pd.DataFrame | None, label: str) -> list[float | None]:
    """The label's share of entries per script (its first audit row: a shared vocabulary is one on every corpus)."""
    rows = audit[audit["tokenizer"] == label] if audit is not None else None
    if rows is None or rows.empty:
        return [None] * len(SCRIPTS)
    first = rows.iloc[0]
    return [float(first[f"{column}_share"]) for column in SCRIPT_COLUMNS.values()]


def _per_language(context: Context, metric: str, labels: list[str]) -> list[Block]:
    """``metric`` per language (rows) for the multilingual rows and the monolingual rows of their families."""
    run = context.run
    rows = run.results[run.results["metric"] == metric]
    if rows.empty:
        return []
    eval_set = "test" if (rows["eval_set"] == "test").any() else str(rows["eval_set"].iloc[0])
    rows = rows[rows["eval_set"] == eval_set]
    kinds = set(rows.loc[rows["tokenizer"].isin(labels), "kind"])
    compared = rows[rows["tokenizer"].isin(labels) | (rows["kind"].isin(kinds) & rows["vocab_size"].notna())]
    cells = at_report_size(compared, run)
    if cells.empty:
        return []
    order = [label for label in dict.fromkeys(cells["tokenizer"]) if label not in labels] + [
        label for label in labels if label in set(cells["tokenizer"])]  # fmt: skip
    table = cells.pivot_table(index="language", columns="tokenizer", values="value", aggfunc="first")
    info = METRICS[metric]
    better = {True: "↑ higher is better", False: "↓ lower is better", None: "descriptive"}[info.higher_is_better]
    body: list[list[Inline]] = []
    values: list[list[float | None]] = []
    for language in table.index:
        numbers = [table.loc[language, label] if label in table.columns else float("nan") for label in order]
        body.append([str(language), *(MISSING if pd.isna(v) else info.fmt.format(v) for v in numbers)])
        values.append([None, *(None if pd.isna(v) else float(v) for v in numbers)])
    header: list[Inline] = [Verbatim(name) for name in ["language", *order]]
    intro = f"{info.label} ({better}) on `{eval_set}`, the monolingual rows of the same families first."
    return [Heading(3, Verbatim(f"{info.label} per language")), Paragraph(text(intro)),
            SimpleTable(header, body, "l" + "r" * len(order), values,
                        [{"language": str(language)} for language in table.index])]  # fmt: skip
