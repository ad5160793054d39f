"""The report as a document: the blocks sections return, and their Markdown.

A section (``benchmarks.report.sections``) returns a list of blocks; ``to_markdown`` prints them as
report.md and ``benchmarks.report.html`` as report.html, so both files come from the same blocks and
no section knows a format.

Text inside a block is *inline*: a ``str`` (plain text, escaped by each renderer), ``Verbatim``
(plain text that Markdown needs no escape for, such as ``p < 0.05``), ``Code``, ``Emph``, ``Strong``,
``Link``, ``LineBreak`` or a tuple of these.  ``text(...)`` reads plain text with `names` in
backticks (the convention of captions and notes) into inline.

Markdown: every block is followed by one blank line; a paragraph is one line (``LineBreak``: a hard
break, two spaces and a newline).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Union

from benchmarks import render
from benchmarks.render import md_escape
from benchmarks.report import plots
from benchmarks.report.formats import code_span, markdown_table
from benchmarks.report.tables import Table

TABLES_DIR = "tables"
PLOTS_DIR = "plots"


@dataclass(frozen=True)
class Verbatim:
    """Plain text printed as it is in Markdown (it holds nothing Markdown would misread)."""

    text: str


@dataclass(frozen=True)
class Code:
    text: str


@dataclass(frozen=True)
class Emph:
    content: Inline
    mark: str = "*"  # the Markdown delimiter: "*" or "_"


@dataclass(frozen=True)
class Strong:
    content: Inline


@dataclass(frozen=True)
class Link:
    content: Inline
    href: str


@dataclass(frozen=True)
class LineBreak:
    pass


Inline = Union[str, Verbatim, Code, Emph, Strong, Link, LineBreak, tuple["Inline", ...]]  # noqa: UP007


def text(value: str, escape: bool = True) -> Inline:
    """Plain text with `names` in backticks as inline (``escape=False``: the plain parts as ``Verbatim``)."""
    parts: list[Inline] = []
    for index, part in enumerate(value.split("`")):
        if index % 2:
            parts.append(Code(part))
        elif part:
            parts.append(part if escape else Verbatim(part))
    return tuple(parts)


def plain_text(inline: Inline) -> str:
    """The text of inline, without any markup (for a title attribute or a test)."""
    if isinstance(inline, str):
        return inline
    if isinstance(inline, Verbatim | Code):
        return inline.text
    if isinstance(inline, Emph | Strong | Link):
        return plain_text(inline.content)
    if isinstance(inline, LineBreak):
        return "\n"
    return "".join(plain_text(part) for part in inline)


# --------------------------------------------------------------------------- blocks


@dataclass(frozen=True)
class Heading:
    level: int  # 1: the title, 2: a section, 3: a subsection
    content: Inline


@dataclass(frozen=True)
class Paragraph:
    content: Inline


@dataclass(frozen=True)
class Quote:
    """A warning set apart (a Markdown blockquote)."""

    content: Inline


@dataclass(frozen=True)
class BulletList:
    items: list[Inline]


@dataclass(frozen=True)
class Notes:
    """Notes under a table or a section, one line each ("Note: ..."), and an optional last line."""

    notes: list[Inline]
    trailer: Inline | None = None


@dataclass(frozen=True)
class TableBlock:
    """A metric table: caption, cells, notes, and links to its LaTeX and CSV files."""

    table: Table


@dataclass(frozen=True)
class SimpleTable:
    """A table of finished cells.  ``values``: per cell the number it sorts by (None: sort by its text);
    ``row_facts``: per row the language and tokenizer family it is about (for filters; "" when none)."""

    header: list[Inline]
    rows: list[list[Inline]]
    align: str  # one letter per column: "l" or "r"
    values: list[list[float | None]] | None = None
    row_facts: list[dict[str, str]] | None = None


@dataclass(frozen=True)
class Figure:
    """A plot of ``plots/<stem>``: its caption, links to its files (``formats``), the findings under it."""

    stem: str
    caption: str
    sentences: list[str] = field(default_factory=list)
    formats: Sequence[str] = plots.FORMATS


@dataclass(frozen=True)
class SkippedFigure:
    caption: str
    reason: str


@dataclass(frozen=True)
class Details:
    """Blocks folded away under a summary line."""

    summary: str
    blocks: list[Any]


@dataclass(frozen=True)
class SplitRow:
    label: str  # the tokenizer as the section names it (with its size when it is not the report size)
    family: str
    count: int  # tokens
    pieces: str  # ``bpe.render.render`` of the encoding


@dataclass(frozen=True)
class SplitExample:
    where: str  # its language (a parallel sentence) or document id
    language: str
    text: str
    cut: bool  # the text is the beginning of a longer document
    rows: list[SplitRow]


@dataclass(frozen=True)
class Splits:
    """The example sentences of a run with every tokenizer's pieces ("How the tokenizers split"), in
    groups under a heading each; the notes on rows that could not be shown; ``explorer``: the plain-data
    payload of the HTML explorer widget (None: HTML shows the tables Markdown shows)."""

    groups: list[tuple[Inline, list[SplitExample]]]
    notes: list[str]
    explorer: Any = None


Block = Union[Heading, Paragraph, Quote, BulletList, Notes, TableBlock, SimpleTable, Figure, SkippedFigure,  # noqa: UP007
              Details, Splits]  # fmt: skip


# --------------------------------------------------------------------------- Markdown


def md(inline: Inline) -> str:
    """Inline as Markdown."""
    if isinstance(inline, str):
        return md_escape(inline)
    if isinstance(inline, Verbatim):
        return inline.text
    if isinstance(inline, Code):
        return code_span(inline.text)
    if isinstance(inline, Emph):
        return f"{inline.mark}{md(inline.content)}{inline.mark}"
    if isinstance(inline, Strong):
        return f"**{md(inline.content)}**"
    if isinstance(inline, Link):
        return f"[{md(inline.content)}]({inline.href})"
    if isinstance(inline, LineBreak):
        return "  \n"
    return "".join(md(part) for part in inline)


def note_line(note: Inline) -> str:
    return f"_Note: {md(note)}_  "


def markdown_lines(block: Block) -> list[str]:
    """One block as Markdown lines, with the blank line after it."""
    if isinstance(block, Heading):
        return ["#" * block.level + " " + md(block.content), ""]
    if isinstance(block, Paragraph):
        return [md(block.content), ""]
    if isinstance(block, Quote):
        return ["> " + md(block.content), ""]
    if isinstance(block, BulletList):
        return [*(f"- {md(item)}" for item in block.items), ""]
    if isinstance(block, Notes):
        trailer = [md(block.trailer)] if block.trailer is not None else []
        return [*(note_line(note) for note in block.notes), *trailer, ""]
    if isinstance(block, TableBlock):
        table = block.table
        links = (Link("LaTeX", f"{TABLES_DIR}/{table.slug}.tex"), " · ", Link("CSV", f"{TABLES_DIR}/{table.slug}.csv"))
        return [md(Emph(text(table.caption))), "", markdown_table(table), "",
                *markdown_lines(Notes([text(note) for note in table.notes], links))]  # fmt: skip
    if isinstance(block, SimpleTable):
        rows = [[md(cell) for cell in row] for row in block.rows]
        return [render.markdown([md(cell) for cell in block.header], rows, block.align), ""]
    if isinstance(block, Figure):
        caption = md_escape(block.caption)
        links = " · ".join(f"[{kind.upper()}]({PLOTS_DIR}/{block.stem}.{kind})" for kind in block.formats)
        lines = [f"![{caption}]({PLOTS_DIR}/{block.stem}.png)", "", f"*{caption}.*" + (f" {links}" if links else ""),
                 ""]  # fmt: skip
        return lines + ([md_escape(" ".join(block.sentences)), ""] if block.sentences else [])
    if isinstance(block, SkippedFigure):
        return [md(Emph((f"Plot skipped ({block.caption}): ", *text(block.reason, escape=False), "."), "_")), ""]
    if isinstance(block, Details):
        inner = [line for child in block.blocks for line in markdown_lines(child)]
        return [f"<details><summary>{block.summary}</summary>", "", *inner, "</details>", ""]
    if isinstance(block, Splits):
        return splits_markdown(block)
    raise TypeError(f"internal error: not a report block: {block!r}")


def splits_markdown(block: Splits) -> list[str]:
    """Per sentence: the sentence in bold-labelled text, then a table of every tokenizer's token count and pieces."""
    lines: list[str] = []
    for heading, examples in block.groups:
        lines += markdown_lines(Heading(3, heading))
        for example in examples:
            lines += [f"**{md_escape(example.where)}**: {md_escape(example.text)}{' …' if example.cut else ''}", ""]
            cells = [[md_escape(row.label), str(row.count), code_span(row.pieces)] for row in example.rows]
            lines += [render.markdown(["tokenizer", "tokens", "pieces"], cells, "lrl"), ""]
    if block.notes:
        lines += markdown_lines(Notes(list(block.notes)))
    return lines


def to_markdown(blocks: Sequence[Block]) -> str:
    """report.md: the blocks one after another, ending in one newline."""
    lines = [line for block in blocks for line in markdown_lines(block)]
    return "\n".join(lines).rstrip("\n") + "\n"
