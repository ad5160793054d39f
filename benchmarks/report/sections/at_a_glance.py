"""The answer first: the best ranked tokenizer per language on each headline metric (``report.summary``)."""

from __future__ import annotations

from benchmarks.report.document import Block, Heading, Paragraph, SimpleTable, Verbatim, text
from benchmarks.report.sections.context import Context
from benchmarks.report.summary import significance_sentence, summary_rows


def at_a_glance(context: Context) -> list[Block]:
    run = context.run
    header, rows, found = summary_rows(run)
    if not rows:
        return []
    trained = run.results["vocab_size"].notna().any()
    where = f"at {run.at}" if trained else "(published tokenizers, each at its own vocabulary)"
    intro = (f"The best ranked tokenizer per language on each headline metric {where} (↓ lower is better, "
             f"↑ higher), with its {run.ci_name}; `≈ name`: the runner-up's interval overlaps the best's, so the "
             "lead is not clear-cut. Cells marked ‡ or § in the tables below are never ranked. "
             + "; ".join(f"{headline.question}: `{headline.metric}` on `{headline.eval_set}`"
                         + (" (the gold reference with the most words)" if headline.question == "gold morphemes"
                            else "") + (" (shared tokenizers: published, or trained on every language)"
                            if headline.question == "parity" else "")
                         for headline in found) + ".")  # fmt: skip
    blocks: list[Block] = [Heading(2, Verbatim("At a glance")), Paragraph(text(intro, escape=False)),
                           SimpleTable(header, rows, "l" * len(header),
                                       row_facts=[{"language": row[0]} for row in rows])]  # fmt: skip
    sentence = significance_sentence(run)
    if sentence:
        blocks.append(Paragraph(text(sentence, escape=False)))
    return blocks
