"""How to read the tables: layout, intervals, bold, and every marker."""

from __future__ import annotations

from benchmarks.report.document import Block, Paragraph
from benchmarks.report.formats import MISSING
from benchmarks.report.sections.context import Context
from benchmarks.report.tables import BASELINE_MARK, REACHED_MARK, UNK_MARK


def reading_guide(context: Context) -> list[Block]:
    run = context.run
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
    return [Paragraph(guide)]
