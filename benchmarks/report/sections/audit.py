"""The vocabulary audit of audit.csv: per tokenizer row and corpus, how many entries its own text reaches, which
scripts the vocabulary serves and how much of it the corpus's test text never used (``benchmarks.measure.audit``)."""

from __future__ import annotations

import pandas as pd

from benchmarks.measure.audit import AUDIT_ENTRIES_FILE, AUDIT_FILE, SCRIPT_COLUMNS, SCRIPTS, STATUS_COLUMNS, STATUSES
from benchmarks.report.document import Block, Code, Heading, Inline, Link, Paragraph, SimpleTable, Verbatim, text
from benchmarks.report.sections.context import Context

DEFINITION = (
    "Every entry of each tokenizer's vocabulary, checked as Land & Bartolo (2024, \"Fishing for Magikarp\") check it: "
    "an entry is reachable when encoding its own text alone gives exactly that entry, unreachable otherwise "
    "(a sufficient test: an unreachable entry may still form inside longer text). Not checked: partial entries "
    "(bytes that are not UTF-8 text on their own), special and control tokens, no-text (a bare `</w>`) and "
    "unchecked word-inner pieces no text alone can place (how each family is checked: `docs/inspect.md`). "
    "Scripts: the share of entries whose letters are all of that script (`other`: other scripts, a mix, or no "
    "letter). Never used: entries no token of the tokenizer's encoding of the corpus's test text is, with "
    "their share of the vocabulary. Rows: the tokenizers the paired tests compare (trained rows at the report "
    "vocabulary size, every production row)."
)


def _count(value: object) -> str:
    return "" if pd.isna(value) else f"{int(value):,}"  # type: ignore[call-overload]


def audit_section(context: Context) -> list[Block]:
    run = context.run
    audit = run.audit
    if audit is None or audit.empty:
        return []
    ordered = list(audit.sort_values(["corpus", "tokenizer"], kind="stable").itertuples(index=False))
    header: list[Inline] = [Verbatim(name) for name in ["corpus", "tokenizer", "entries", *STATUSES, *SCRIPTS,
                                                        "never used on test"]]  # fmt: skip
    cells: list[list[Inline]] = []
    values: list[list[float | None]] = []
    facts = []
    for row in ordered:
        fields = row._asdict()
        statuses = [fields[column] for column in STATUS_COLUMNS.values()]
        shares = [fields[f"{column}_share"] for column in SCRIPT_COLUMNS.values()]
        unused, entries = fields["unused"], fields["entries"]
        unused_share = float(unused) / entries if not pd.isna(unused) and entries else None
        cells.append([str(row.corpus), str(row.tokenizer), _count(entries), *(_count(count) for count in statuses),
                      *(f"{share:.1%}" for share in shares),
                      "" if unused_share is None else f"{_count(unused)} ({unused_share:.1%})"])  # fmt: skip
        values.append([None, None, float(entries), *(float(count) for count in statuses),
                       *(float(share) for share in shares), None if pd.isna(unused) else float(unused)])  # fmt: skip
        facts.append({"language": str(row.language), "family": str(row.kind)})
    files: Inline = (Link(AUDIT_FILE, AUDIT_FILE),)
    if run.audit_entries is not None:
        files = (*files, Verbatim(f"; the {len(run.audit_entries):,} unreachable entries, one row each: "),
                 Link(AUDIT_ENTRIES_FILE, AUDIT_ENTRIES_FILE))  # fmt: skip
    return [Heading(2, Verbatim("Vocabulary audit")),
            Paragraph((*text(DEFINITION), Verbatim(" Counts: "), *files, Verbatim("; a single file: "),
                       Code("tokbench audit --tokenizer T"), Verbatim("."))),
            SimpleTable(header, cells, "ll" + "r" * (len(header) - 2), values, facts)]  # fmt: skip
