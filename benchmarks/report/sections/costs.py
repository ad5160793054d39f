"""Wall-clock costs from costs.csv at the report vocabulary size.  They vary between runs and machines, so
they stay out of results.* and the regression check; this is their only table."""

from __future__ import annotations

from benchmarks.report.document import Block, Heading, Inline, Paragraph, SimpleTable, Verbatim, text
from benchmarks.report.load import at_most_training_text
from benchmarks.report.sections.context import Context


def cost_section(context: Context) -> list[Block]:
    run = context.run
    if run.costs is None:
        return []
    costs = at_most_training_text(run.costs)
    rows = costs[costs["vocab_size"].isna() | (costs["vocab_size"] == run.report_vocab_size)]
    if rows.empty:
        return []
    intro = (f"At {run.report_vocab_size:,} (production rows: their own vocabulary). Training seconds are "
             "those measured when the tokenizer was trained (a cached tokenizer keeps its time; a size derived "
             "from the largest of its sweep shows the derivation's time, the training's is on the largest); encoding "
             "throughput is MB of UTF-8 test text per second, one process, documents one by one. "
             "These figures vary between runs and are never compared by `tokbench check`.")  # fmt: skip
    ordered = list(rows.sort_values(["corpus", "tokenizer"]).itertuples())
    cells: list[list[Inline]] = [
        [str(row.corpus), str(row.tokenizer), f"{row.train_seconds:.2f}", f"{row.encode_mb_per_s:.2f}"]
        for row in ordered
    ]
    values = [[None, None, float(row.train_seconds), float(row.encode_mb_per_s)] for row in ordered]
    facts = [{"language": "", "family": str(getattr(row, "kind", ""))} for row in ordered]
    header: list[Inline] = [Verbatim(name) for name in ["corpus", "tokenizer", "training (s)", "encode (MB/s)"]]
    return [Heading(3, Verbatim("Measured cost (wall clock)")), Paragraph(text(intro, escape=False)),
            SimpleTable(header, cells, "llrr", values, facts)]  # fmt: skip
