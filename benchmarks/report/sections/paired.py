"""The paired tests of paired.csv: which tokenizer rows differ in tokens per 1,000 characters."""

from __future__ import annotations

from benchmarks.measure.evaluate import SIGNIFICANCE_LEVEL
from benchmarks.report.document import (
    Block,
    BulletList,
    Code,
    Details,
    Heading,
    Inline,
    Link,
    Paragraph,
    SimpleTable,
    Verbatim,
)
from benchmarks.report.sections.context import Context


def paired_section(context: Context) -> list[Block]:
    run = context.run
    paired = run.paired
    if paired is None or paired.empty:
        return []
    intro = ("Tokenizer A minus tokenizer B in tokens per 1,000 characters on the same test documents "
             f"(report vocabulary size), with a paired bootstrap {run.ci_name} and the p-value of a paired "
             "permutation test (")  # fmt: skip
    significance = (f"). A difference is called significant when its Holm–Bonferroni adjusted p-value is below "
                    f"{SIGNIFICANCE_LEVEL:g} (one family per metric and evaluation set: here all {len(paired)} pairs "
                    "of all corpora). Full table: ")  # fmt: skip
    counts: list[Inline] = []
    for corpus, group in paired.groupby("corpus", sort=True):
        significant = group[group["p_value_holm"] < SIGNIFICANCE_LEVEL]
        counts.append((Code(str(corpus)), Verbatim(f": {len(significant)} of {len(group)} pairs differ "
                                                   f"(Holm-adjusted p < {SIGNIFICANCE_LEVEL:g}).")))
    ordered = list(paired.itertuples())
    cells: list[list[Inline]] = [
        [str(row.corpus), str(row.tokenizer_a), str(row.tokenizer_b), f"{row.difference:.1f}",
         f"[{row.ci_low:.1f}, {row.ci_high:.1f}]", f"{row.p_value:.3g}", f"{row.p_value_holm:.3g}"]
        for row in ordered
    ]  # fmt: skip
    values = [[None, None, None, float(row.difference), float(row.ci_low), float(row.p_value),
               float(row.p_value_holm)] for row in ordered]
    header: list[Inline] = [Verbatim(name) for name in ["corpus", "A", "B", "A − B", "CI", "p", "p (Holm)"]]
    return [Heading(2, Verbatim("Paired comparisons")),
            Paragraph((Verbatim(intro), Code("benchmarks/measure/paired.py"), Verbatim(significance),
                       Link("paired.csv", "paired.csv"), Verbatim("."))),
            BulletList(counts), Details("all pairs", [SimpleTable(header, cells, "lllrlrr", values)])]  # fmt: skip
