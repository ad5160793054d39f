"""A warning at the top when trained tokenizers stopped far below the vocabulary size they were asked for."""

from __future__ import annotations

from benchmarks.report.document import Block, Quote, Strong, text
from benchmarks.report.figures import alphabet_kinds
from benchmarks.report.findings import vocab_label
from benchmarks.report.sections.context import Context
from benchmarks.report.tables import REACHED_MARK

#: a tokenizer that reached less than this share of its requested size "stops far below" it
FAR_BELOW = 0.9


def vocabulary_warning(context: Context) -> list[Block]:
    run = context.run
    reached = run.results[(run.results["metric"] == "vocab_size_reached") & run.results["vocab_size"].notna()]
    reached = reached[~reached["tokenizer"].isin(alphabet_kinds(reached))] if not reached.empty else reached
    if reached.empty:
        return []
    short = reached[reached["value"] < FAR_BELOW * reached["vocab_size"].astype("float64")]
    if short.empty:
        return []
    at_report = short[short["vocab_size"] == run.report_vocab_size]
    warning = (f"{len(short)} of {len(reached)} trained tokenizers stopped below "
               f"{FAR_BELOW:.0%} of the size requested: a size is an upper bound, and their training text had no more "
               f"to learn. Tables print the size reached beside such cells ({REACHED_MARK}n); curves plot against the "
               "size reached.")  # fmt: skip
    if not at_report.empty:
        listed = "; ".join(
            f"{language}: " + ", ".join(f"{row.tokenizer} {int(row.value):,}" for row in group.itertuples())
            for language, group in at_report.sort_values(["language", "tokenizer"]).groupby("language", sort=True)
        )
        warning += f" At the report size {run.at}: {listed}."
    by_size = short.groupby("vocab_size").size()
    totals = reached.groupby("vocab_size").size()
    warning += " Per requested size: " + ", ".join(
        f"{vocab_label(int(size))} {count} of {totals[size]}" for size, count in by_size.items()) + "."  # fmt: skip
    if run.match == "requested":
        warning += ' `report.match = "reached"` compares tokenizers at matched reached sizes instead.'
    return [Quote((Strong("Vocabulary sizes not reached."), " ", *text(warning, escape=False)))]
