""""Inference methods on one vocabulary": per shared vocabulary, boundary F1 against each morpheme
reference and tokens per 1,000 test characters for every inference method (Uzan et al. 2024's question,
here per language), with generated findings: which method aligns best with each reference and at what
compression cost (``findings.inference_method_finding``)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

import bpe
from benchmarks.files import option_values
from benchmarks.measure.metrics import METRICS
from benchmarks.report import findings
from benchmarks.report.document import Block, Heading, Inline, Paragraph, SimpleTable, Verbatim, text
from benchmarks.report.findings import vocab_label
from benchmarks.report.formats import MISSING
from benchmarks.report.sections.context import Context
from bpe.options import options_by_name


def _native_method(kind: str) -> str:
    """A family's own encoding when ``encode_mode`` is not set (declared on its class)."""
    return bpe.family_class(kind).facts.native_method if kind in bpe.FAMILIES else "merges"


def inference_method(kind: str, options: Mapping[str, Any]) -> str:
    """A row's inference method as the report names it: ``encode_mode`` (the family's own when unset),
    with its sampling (``+ dropout 0.1``, ``+ sampling α=0.1``); ``options`` as ``files.option_values``."""
    method = options.get("encode_mode", _native_method(kind))
    if (options.get("dropout") or 0) > 0:
        method += f" + dropout {options['dropout']}"
    if options.get("alpha") is not None:
        method += f" + sampling α={options['alpha']}"
    if options.get("tie_break", "longest-first") != "longest-first":
        method += f" ({options['tie_break']})"
    return method


def inference_groups(results: pd.DataFrame) -> list[tuple[tuple[Any, ...], pd.DataFrame]]:
    """Trained rows that share one vocabulary (corpus, family, size, training options) and differ only in
    encode-time options, with their ``method`` column; only groups of two or more methods."""
    trained = results[results["vocab_size"].notna()].copy()
    if trained.empty:
        return []
    options = [option_values(row) for row in trained.to_dict("records")]
    encode_options = set(options_by_name(encode_time_only=True))  # ``bpe.options``: ENCODE_TIME, any family
    trained["training"] = [",".join(f"{k}={v}" for k, v in o.items() if k not in encode_options) for o in options]
    trained["method"] = [inference_method(kind, o) for kind, o in zip(trained["kind"], options, strict=True)]
    groups = []
    for key, group in trained.groupby(["corpus", "language", "kind", "vocab_size", "training"], sort=True):
        if group["method"].nunique() >= 2 and group.groupby("method")["tokenizer"].nunique().max() == 1:
            groups.append((key, group))
    return groups


def inference_section(context: Context) -> list[Block]:
    run = context.run
    groups = inference_groups(run.results)
    if not groups:
        return []
    f1_info, cost_info = METRICS["boundary_f1"], METRICS["tokens_per_kchar"]
    paired = run.paired if run.paired is not None else pd.DataFrame()
    seeds = run.manifest["config"].get("seeds")
    intro = ("Rows that share one trained vocabulary and differ only in how it encodes: the inference methods of "
             "Uzan et al. 2024 (merges in learned order, longest prefix, longest suffix, longest token, fewest "
             "tokens) and sampling (BPE-dropout, Provilkov et al. 2020; unigram sampling, Kudo 2018"
             + (f": the mean over seeds {', '.join(map(str, seeds))}, CI over items and seeds" if seeds else "")
             + f"). Cells: {f1_info.label} per morpheme reference and {cost_info.label} on the test text, each with "
             f"its {run.ci_name}. Findings compare each reference's best method with the family's own encoding; "
             "the compression cost is the paired difference in tokens per 1,000 characters on the same test "
             "documents (paired.csv, at the report vocabulary size).")  # fmt: skip
    blocks: list[Block] = [Heading(2, Verbatim("Inference methods on one vocabulary")),
                           Paragraph(text(intro, escape=False))]  # fmt: skip
    for (corpus, language, kind, size, training), group in groups:
        methods = sorted(group["method"].unique(), key=lambda m: (m != _native_method(kind), m))
        baseline = methods[0]
        label = {m: group.loc[group["method"] == m, "tokenizer"].iloc[0] for m in methods}
        title = f"{corpus} ({language}), {kind} {vocab_label(int(size))}" + (f", {training}" if training else "")
        rows: list[list[Inline]] = []
        values: list[list[float | None]] = []
        sentences = []
        f1 = group[(group["metric"] == "boundary_f1") & (group["eval_set"] == "reference")]
        compression = group[(group["metric"] == "tokens_per_kchar") & (group["eval_set"] == "test")].set_index("method")
        for reference, cells in f1.groupby("reference", sort=True):
            cells = cells.set_index("method")
            rows.append([f"{f1_info.label}: {reference}", *(_cell(cells, m, f1_info) for m in methods)])
            values.append([None, *(_value(cells, m) for m in methods)])
            cost = _paired_cost(paired, corpus, label, cells, baseline, int(size))
            sentence = findings.inference_method_finding(cells.reset_index(), baseline, cost, f1_info, cost_info,
                                                         f"{reference}", compression)  # fmt: skip
            if sentence:
                sentences.append(sentence)
        if not compression.empty:
            rows.append([f"{cost_info.label} (test)", *(_cell(compression, m, cost_info) for m in methods)])
            values.append([None, *(_value(compression, m) for m in methods)])
        if not rows:
            continue
        facts = [{"language": str(language), "family": str(kind)} for _ in rows]
        blocks += [Heading(3, title),
                   SimpleTable(["", *methods], rows, "l" + "r" * len(methods), values, facts)]  # fmt: skip
        blocks += [Paragraph(" ".join(sentences))] if sentences else []
    return blocks


def _value(cells: pd.DataFrame, method: str) -> float | None:
    return float(cells.loc[method, "value"]) if method in cells.index else None


def _cell(cells: pd.DataFrame, method: str, info: Any) -> Inline:
    if method not in cells.index:
        return MISSING
    cell = cells.loc[method]
    value = findings.format_value(info, cell["value"])
    if math.isnan(cell["ci_low"]):
        return Verbatim(value)
    low, high = findings.format_value(info, cell["ci_low"]), findings.format_value(info, cell["ci_high"])
    return Verbatim(f"{value} [{low}, {high}]")


def _paired_cost(paired: pd.DataFrame, corpus: str, label: dict[str, str], cells: pd.DataFrame, baseline: str,
                 size: int) -> tuple[float, float, float, float] | None:  # fmt: skip
    """The best method's tokens per 1,000 characters minus the baseline's, with the paired CI and the
    Holm-adjusted p-value (paired.csv)."""
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
        return float(row["difference"]), float(row["ci_low"]), float(row["ci_high"]), float(row["p_value_holm"])
    backward = rows[(rows["tokenizer_a"] == b) & (rows["tokenizer_b"] == a)]
    if not backward.empty:
        row = backward.iloc[0]
        return -float(row["difference"]), -float(row["ci_high"]), -float(row["ci_low"]), float(row["p_value_holm"])
    return None

