""""What the 2025 rows show": sentences computed from the run's numbers at the report vocabulary size, on

- each family that modifies another (``bpe.FamilyFacts.variant_of``: SuperBPE and parity-aware BPE modify
  byte-level BPE) against a row of that family with the same vocabulary size and the same training text kind
  (both monolingual; or both multilingual at the same alpha): tokens, fertility, gold boundary F1, English's own
  compression and, for a shared row (one tokenizer on every language), the largest premium against English (on
  devtest when the run has ``parity_vs_eng_held_out``);
- shared multilingual vocabularies (``[[multilingual]]``): how the share of each script's entries moves with
  alpha;
- robustness: per perturbation and language, the tokenizer whose segmentation changes least (``_robustness_items``;
  a language where no row changes is left out).

Each sentence names the values it compares; a language a row lacks is left out and the sentence says over how
many it averages.  Nothing for a run without such rows.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

import bpe
from benchmarks.measure.audit import SCRIPT_COLUMNS, SCRIPTS
from benchmarks.measure.metrics import METRICS
from benchmarks.report.cells import at_report_size
from benchmarks.report.document import Block, BulletList, Heading, Inline, Paragraph, Verbatim, text
from benchmarks.report.load import Run
from benchmarks.report.sections.context import Context
from benchmarks.report.summary import gold_references
from benchmarks.run.parallel import ENGLISH

#: the premium a variant is judged on: held-out sentences first (a parity-aware tokenizer saw the dev split)
PREMIUMS = ("parity_vs_eng_held_out", "parity_vs_eng")


def answers_section(context: Context) -> list[Block]:
    run = context.run
    items = [*_variant_items(run), *_alpha_items(run), *_robustness_items(run)]
    if not items:
        return []
    intro = (f"Computed from the tables of this report at {run.at}; each compares rows with the same vocabulary "
             "size and training text kind, and names the values it compares.")  # fmt: skip
    return [Heading(2, Verbatim("What the 2025 rows show")), Paragraph(text(intro)), BulletList(items)]


def _cells(run: Run, metric: str, eval_set: str | None = None, gold_only: bool = False) -> pd.DataFrame:
    """The report-size cells of ``metric`` (one evaluation set: ``eval_set``, else test, else the first)."""
    rows = run.results[run.results["metric"] == metric]
    if gold_only:
        gold = gold_references(run)
        rows = rows[rows["reference"].isin(gold)]
        largest = rows.sort_values(["n", "reference"], ascending=[False, True]).drop_duplicates("corpus")
        rows = rows.merge(largest[["corpus", "reference"]], on=["corpus", "reference"])
    if rows.empty:
        return rows
    sets = list(dict.fromkeys(rows["eval_set"]))
    chosen = eval_set or ("test" if "test" in sets else sets[0])
    return at_report_size(rows[rows["eval_set"] == chosen], run)


def _by_language(cells: pd.DataFrame, label: str) -> dict[str, float]:
    rows = cells[cells["tokenizer"] == label]
    return {str(language): float(value) for language, value in zip(rows["language"], rows["value"], strict=True)}


def _pairs(run: Run) -> list[tuple[str, str]]:
    """(variant row, base row) pairs: a row of a family with ``variant_of``, and the row of that family with the same
    requested sizes and the same training text kind (monolingual, or multilingual at the same alpha)."""
    samples = run.manifest.get("multilingual") or {}
    rows = run.results[run.results["vocab_size"].notna()].drop_duplicates(["tokenizer", "vocab_size"])
    kinds = dict(zip(rows["tokenizer"], rows["kind"], strict=False))
    sizes = {label: set(group["vocab_size"]) for label, group in rows.groupby("tokenizer")}
    pairs = []
    for label, kind in kinds.items():
        if kind not in bpe.FAMILIES or bpe.family_class(kind).facts.variant_of is None:
            continue
        base_kind = bpe.family_class(kind).facts.variant_of
        alpha = samples.get(label, {}).get("alpha")
        candidates = [other for other, other_kind in kinds.items() if other_kind == base_kind
                      and samples.get(other, {}).get("alpha") == alpha and sizes[other] & sizes[label]]  # fmt: skip
        if candidates:
            pairs.append((label, sorted(candidates, key=lambda other: (len(other), other))[0]))
    return pairs


def _variant_items(run: Run) -> list[Inline]:
    items: list[Inline] = []
    tokens = _cells(run, "tokens_per_kchar")
    for variant, base in _pairs(run):
        parts: list[str] = []
        mine, theirs = _by_language(tokens, variant), _by_language(tokens, base)
        shared = sorted(set(mine) & set(theirs))
        if shared:
            changes = {language: mine[language] / theirs[language] - 1 for language in shared}
            mean = sum(changes.values()) / len(changes)
            each = ", ".join(f"{language} {change:+.1%}" for language, change in changes.items())
            parts.append(f"`{variant}` uses {abs(mean):.1%} {'fewer' if mean < 0 else 'more'} tokens than `{base}` "
                         f"at the same vocabulary size (mean over {len(shared)} languages of tokens per 1,000 "
                         f"characters: {each})")  # fmt: skip
        for metric, gold in (("fertility_running", False), ("fertility_isolated", False), ("boundary_f1", True)):
            cells = _cells(run, metric, gold_only=gold)
            a, b = _by_language(cells, variant), _by_language(cells, base)
            common = sorted(set(a) & set(b))
            if common:
                fmt = METRICS[metric].fmt
                pairs = ", ".join(f"{language} {fmt.format(a[language])} vs {fmt.format(b[language])}"
                                  for language in common)  # fmt: skip
                parts.append(f"{METRICS[metric].label}: {pairs}")
        # a premium compares one tokenizer on two languages: only a shared (multilingual) row has one
        shared_rows = run.manifest.get("multilingual") or {}
        premium = next((name for name in PREMIUMS if not _cells(run, name).empty), None)
        if premium is not None and variant in shared_rows:
            cells = _cells(run, premium)
            a, b = _by_language(cells, variant), _by_language(cells, base)
            common = sorted(set(a) & set(b))
            if common:
                worst_a, worst_b = max(common, key=a.__getitem__), max(common, key=b.__getitem__)
                parts.append(f"the largest premium against English ({METRICS[premium].label}) is {a[worst_a]:.3f} "
                             f"({worst_a}) against {b[worst_b]:.3f} ({worst_b}), "
                             f"{(a[worst_a] - b[worst_b]) / b[worst_b]:+.1%}")  # fmt: skip
        english = _cells(run, "bytes_per_token")
        a, b = _by_language(english, variant), _by_language(english, base)
        if ENGLISH in a and ENGLISH in b:
            parts.append(f"English bytes per token {a[ENGLISH]:.3f} against {b[ENGLISH]:.3f} "
                         f"({a[ENGLISH] / b[ENGLISH] - 1:+.1%})")  # fmt: skip
        if parts:
            items.append(text("; ".join(parts) + ".", escape=False))
    return items


def _alpha_items(run: Run) -> list[Inline]:
    samples = run.manifest.get("multilingual") or {}
    if run.audit is None or run.audit.empty:
        return []
    groups: dict[tuple[str, int], list[tuple[float, str]]] = {}
    audited = run.audit.drop_duplicates("tokenizer").set_index("tokenizer")
    for label, facts in samples.items():
        if label in audited.index:
            key = (str(audited.loc[label, "kind"]), int(audited.loc[label, "vocab_size"]))
            groups.setdefault(key, []).append((float(facts["alpha"]), label))
    items: list[Inline] = []
    for (kind, size), rows in groups.items():
        if len(rows) < 2:
            continue
        rows.sort(reverse=True)
        alphas = " → ".join(f"{alpha:g}" for alpha, _ in rows)
        moves = []
        for script in SCRIPTS:
            column = f"{SCRIPT_COLUMNS[script]}_share"
            shares = [float(audited.loc[label, column]) for _, label in rows]
            if max(shares) > 0:
                moves.append(f"{script} {' → '.join(f'{share:.1%}' for share in shares)}")
        items.append(text(f"Shared {kind} vocabulary ({size:,} entries) as α goes {alphas}: the share of entries by "
                          f"script goes {'; '.join(moves)}."))  # fmt: skip
    return items


def _robustness_items(run: Run) -> list[Inline]:
    """Per perturbation and language, the ranked row whose segmentation changes least: the lowest share of words
    whose segmentation changes (``changed_word_share_<p>``), else the token-count inflation closest to 1 (a row
    that turns a perturbed word into one ``<unk>`` shrinks its count: "fewest tokens" would praise it)."""
    items: list[Inline] = []
    for metric in (name for name in METRICS if name.startswith("token_inflation_")):
        perturbation = metric.removeprefix("token_inflation_")
        inflation = _ranked(_cells(run, metric))
        if inflation.empty:
            continue
        changed = _ranked(_cells(run, f"changed_word_share_{perturbation}")) if (
            f"changed_word_share_{perturbation}" in METRICS) else inflation.iloc[0:0]  # fmt: skip
        basis = changed if not changed.empty else inflation.assign(value=np.log(inflation["value"]).abs())
        # a language where the perturbation changes no row says nothing (Korean has no case)
        spread = basis.groupby("language")["value"].agg(lambda values: values.max() - values.min())
        basis = basis[basis["language"].isin(spread[spread > 0].index)]
        best = basis.sort_values(["language", "value", "tokenizer"]).drop_duplicates("language")
        if best.empty:
            continue
        growth = {(row.language, row.tokenizer): row.value for row in inflation.itertuples()}
        each = ", ".join(
            f"{row.language} `{row.tokenizer}` ("
            + (f"{row.value:.1%} of words change, " if not changed.empty else "")
            + f"tokens ×{growth[(row.language, row.tokenizer)]:.3f})" for row in best.itertuples())  # fmt: skip
        how = "fewest words whose segmentation changes" if not changed.empty else "token count closest to unchanged"
        items.append(text(f"Most robust to `{perturbation}` ({how}): {each}.", escape=False))
    return items


def _ranked(cells: pd.DataFrame) -> pd.DataFrame:
    """The cells a finding may quote: never one marked ‡ or § (``not_ranked``)."""
    return cells[cells["not_ranked"].fillna("") == ""] if "not_ranked" in cells and not cells.empty else cells
