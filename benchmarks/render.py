"""Tables as text, in one place: Markdown (report.md), LaTeX booktabs (tables/*.tex) and plain text (the terminal).

A table is a header row, data rows and one alignment letter per column (``"l"`` or ``"r"``, as in a
LaTeX column spec).  Cells arrive as finished text in the target format: the caller escapes them
(``md_escape``, ``latex_escape``) and writes its own emphasis, because only the caller knows which
part of a cell is markup (a bold value followed by its confidence interval, say).

* Markdown and plain text are laid out by tabulate (its ``pipe`` and ``simple`` formats).  Cells are
  never parsed as numbers (tabulate would print ``1.50`` as ``1.5``); column widths count display
  cells (tabulate's wcwidth support), so Korean text lines up in a terminal.
* LaTeX is a ``table*`` float (full text width in a two-column document, the text width in a
  one-column one) around booktabs ``tabular`` blocks (``\\toprule``, ``\\midrule``,
  ``\\bottomrule``; the document needs ``\\usepackage{booktabs,graphicx}``).  A cell may have a second
  line (a confidence interval) set in ``\\footnotesize`` below it.  The width of every column is
  estimated from Computer Modern metrics at ``\\small`` (``estimate_width``) and columns are split
  into several blocks, one under the other, so that each block fits ``max_width`` (345 pt: the text
  width of a one-column ``article``, the narrowest a ``table*`` gets).  Each block is set through
  ``\\tokbenchfit``, which the file defines unless the document already does: it shrinks a block to
  the line width only if the estimate was wrong (another font, say), so no block ever overflows.
  Notes follow the blocks inside the float, in ``\\footnotesize``.

Every renderer returns its text without a trailing newline.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from tabulate import tabulate

ALIGNMENTS = {"l": "left", "r": "right"}

LATEX_SPECIALS = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
    "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "<": r"\textless{}",
    ">": r"\textgreater{}", "α": r"$\alpha$", "†": r"\dag{}", "‡": r"\ddag{}", "§": r"\S{}", "Σ": r"$\Sigma$",
    "×": r"$\times$", "·": r"$\cdot$", "–": "--", "—": "---", "≥": r"$\geq$", "≤": r"$\leq$", "→": r"$\to$",
    "“": "``", "”": "''", "’": "'", "ρ": r"$\rho$", "τ": r"$\tau$", "∘": r"$\circ$", "−": "--",
}  # fmt: skip


def md_escape(text: str) -> str:
    """Text for Markdown: ``|`` would split a table cell, ``<unk>`` would be swallowed as an HTML tag."""
    return text.replace("|", "\\|").replace("<", "\\<")


def latex_escape(text: str) -> str:
    """Text for LaTeX: the characters LaTeX treats specially, and the Greek letters and symbols of the labels
    (Rényi's α, Spearman's ρ, Kendall's τ, the markers), spelled out."""
    return "".join(LATEX_SPECIALS.get(char, char) for char in text)


def markdown(header: Sequence[str], rows: Sequence[Sequence[str]], align: str) -> str:
    """A pipe table; the alignment row carries each column's alignment (``:--`` left, ``--:`` right)."""
    return _tabulate(header, rows, align, "pipe")


def text(header: Sequence[str], rows: Sequence[Sequence[str]], align: str) -> str:
    """Columns separated by two spaces, the header underlined with dashes."""
    return _tabulate(header, rows, align, "simple")


#: the text width of a one-column LaTeX ``article`` (10 pt), in points: the narrowest a ``table*`` gets
ONE_COLUMN_WIDTH = 345.0
#: the height of the text block of an ``article`` (10 pt), in points
TEXT_HEIGHT = 550.0
#: defined by the first table file a document inputs, unless the document defines it (as the tests do, to
#: the identity, to check that the width estimates hold): shrink a block that is wider than the line
FIT_MACRO = (r"\providecommand{\tokbenchfit}[1]{\sbox0{#1}"
             r"\ifdim\wd0>\linewidth\resizebox{\linewidth}{!}{\usebox0}\else\usebox0\fi}")  # fmt: skip
TABCOLSEP = 6.0  # LaTeX's default \tabcolsep, on each side of a column
ROW_HEIGHT = 11.0  # a \small table line (baselineskip), points
SUBLINE_HEIGHT = 9.5  # a \footnotesize second line
HEADER_WORDS_PER_LINE = 14  # header labels longer than this are stacked, one word group per line


def latex(
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    align: str,
    caption: str,
    label: str,
    *,
    sublines: Sequence[Sequence[str]] | None = None,
    rules_before: Sequence[int] = (),
    notes: Sequence[str] = (),
    max_width: float = ONE_COLUMN_WIDTH,
) -> str:
    """A booktabs ``table*`` float with caption, label and notes, split into column blocks that fit ``max_width``.

    ``caption``, ``notes`` and every cell are LaTeX as they are (escape them first); ``label`` is the
    ``\\label`` key.  ``sublines[i]`` (optional) is a second line under row ``i``, one cell per column
    (``""`` for none; the first column's is ignored).  ``rules_before`` lists the rows that start a new
    block of rows (a ``\\midrule`` above them).  The first column (the row labels) is repeated in
    every column block.
    """
    _check(header, rows, align)
    sublines = sublines or [[""] * len(header) for _ in rows]
    _check(header, sublines, align)
    widths = [
        max([_header_width(header[c]), *(estimate_width(row[c]) for row in rows),
             *(estimate_width(sub[c], FOOTNOTE) for sub in sublines if c)]) + 2 * TABCOLSEP
        for c in range(len(header))
    ]  # fmt: skip
    layout = _Layout(header, rows, sublines, align, caption, label, list(rules_before), list(notes), widths)
    natural = sum(widths)
    if natural <= max_width:
        return layout.floats([list(range(1, len(header)))], max_width)
    # narrower than the table: column blocks; a wider text block (a two-column page's table*): one block
    return "\n".join([rf"\ifdim\textwidth<{math.ceil(natural)}pt", layout.floats(_blocks(widths, max_width), max_width),
                      r"\else", layout.floats([list(range(1, len(header)))], natural), r"\fi"])  # fmt: skip


def _blocks(widths: list[float], max_width: float) -> list[list[int]]:
    """Columns 1.. in blocks that each fit ``max_width`` beside column 0 (at least one column per block)."""
    blocks: list[list[int]] = [[]]
    used = widths[0]
    for column in range(1, len(widths)):
        if blocks[-1] and used + widths[column] > max_width:
            blocks.append([])
            used = widths[0]
        blocks[-1].append(column)
        used += widths[column]
    return blocks


@dataclass(frozen=True)
class _Layout:
    header: Sequence[str]
    rows: Sequence[Sequence[str]]
    sublines: Sequence[Sequence[str]]
    align: str
    caption: str
    label: str
    rules_before: list[int]
    notes: list[str]
    widths: list[float]

    def floats(self, blocks: list[list[int]], width: float) -> str:
        """The table as floats of ``blocks`` of columns: every block repeats the rows, so a table taller
        than a page continues in another float (same number, caption "(continued)")."""
        heights = [ROW_HEIGHT + (SUBLINE_HEIGHT if any(sub[1:]) else 0.0) for sub in self.sublines]
        header_height = ROW_HEIGHT * max(len(_header_lines(label)) for label in self.header) + 10
        caption_height = ROW_HEIGHT * (1 + math.ceil(estimate_width(self.caption) / width))
        notes_width = estimate_width(" ".join(self.notes), FOOTNOTE)
        notes_height = SUBLINE_HEIGHT * (1 + math.ceil(notes_width / width)) if self.notes else 0.0
        fixed = len(blocks) * (header_height + 12) + caption_height + notes_height + 20
        parts: list[list[int]] = [[]]
        for index in range(len(heights)):
            if parts[-1] and fixed + len(blocks) * sum(heights[i] for i in [*parts[-1], index]) > TEXT_HEIGHT:
                parts.append([])
            parts[-1].append(index)
        floats = []
        for number, part in enumerate(parts):
            lines = [r"\begin{table*}[tp]", r"\centering", r"\small"]
            if number:  # the same table number, marked as continued
                lines += [r"\addtocounter{table}{-1}", r"\caption{(continued)}"]
            else:
                lines += [rf"\caption{{{self.caption}}}", rf"\label{{{self.label}}}"]
            for block_number, block in enumerate(blocks):
                if block_number:
                    lines.append(r"\medskip")
                lines += _tabular(self.header, [self.rows[i] for i in part], [self.sublines[i] for i in part],
                                  self.align, [0, *block],
                                  [position for position, i in enumerate(part) if i in self.rules_before and position])
            if self.notes and number == len(parts) - 1:
                lines += [r"\smallskip", r"{\footnotesize\raggedright " + " ".join(self.notes) + r"\par}"]
            lines.append(r"\end{table*}")
            floats.append("\n".join(lines))
        return "\n\n".join(floats)


def _tabular(header: Sequence[str], rows: Sequence[Sequence[str]], sublines: Sequence[Sequence[str]], align: str,
             columns: list[int], rules_before: list[int]) -> list[str]:  # fmt: skip
    lines = [r"\tokbenchfit{\begin{tabular}{" + "".join(align[c] for c in columns) + "}", r"\toprule",
             " & ".join(_header_cell(header[c], align[c]) for c in columns) + r" \\", r"\midrule"]  # fmt: skip
    for index, (row, sub) in enumerate(zip(rows, sublines, strict=True)):
        if index in rules_before:
            lines.append(r"\midrule")
        lines.append(" & ".join(row[c] for c in columns) + r" \\")
        if any(sub[c] for c in columns[1:]):
            second = [rf"{{\footnotesize {sub[c]}}}" if sub[c] else "" for c in columns[1:]]
            lines.append(" & ".join(["", *second]) + r" \\")
    return [*lines, r"\bottomrule", r"\end{tabular}}", ""]


# Computer Modern advance widths at \small (9 pt) in points, measured with pdflatex (digits 4.63, lower-case
# letters 4.54 on average); unknown characters count as capitals
_WIDTHS = {**dict.fromkeys(".,;:!|'`()[]ilj/ ", 2.6), **dict.fromkeys("tfr-", 3.6), **dict.fromkeys("mw", 7.7),
           **dict.fromkeys("MW@%", 9.5), **dict.fromkeys("0123456789", 4.63),
           **dict.fromkeys("abcdeghknopqsuvxyz*+=<>", 5.0)}  # fmt: skip
CAPITAL = 7.0
BOLD = 1.15  # bold extended Computer Modern is about 15% wider
FOOTNOTE = 0.91  # \footnotesize relative to \small (8 pt Computer Modern is a little wider than 8/9 of 9 pt)
MARGIN = 1.03  # estimates are rounded up by this factor
_COMMAND_WIDTHS = {"dag": 4.2, "ddag": 4.2, "S": 4.2, "_": 3.4, "&": 6.9, "%": 7.7, "$": 4.7, "#": 7.7,
                   "textless": 7.2, "textgreater": 7.2, "alpha": 5.4, "Sigma": 6.7, "times": 7.2, "cdot": 2.6,
                   "textasciitilde": 4.7, "textasciicircum": 4.7, "textbackslash": 4.7, ",": 1.5}  # fmt: skip
_TOKEN = re.compile(r"\\([A-Za-z]+|.)|([{}$])|(.)", re.DOTALL)
_SCALED = re.compile(r"\\textbf\{([^{}]*)\}|\{\\footnotesize ([^{}]*)\}")


def estimate_width(text: str, scale: float = 1.0) -> float:
    """The width in points of one line of LaTeX ``text`` at ``\\small`` (times ``scale``), slightly over.

    Knows the markup tokbench writes: ``\\textbf{...}``, ``{\\footnotesize ...}``, the symbols of
    ``LATEX_SPECIALS``; other commands count as nothing."""
    width = 0.0
    for match in _SCALED.finditer(text):
        bold, small = match.groups()
        width += estimate_width(bold, BOLD) if bold is not None else estimate_width(small, FOOTNOTE)
    for command, _brace, char in _TOKEN.findall(_SCALED.sub("", text)):
        if command:
            width += _COMMAND_WIDTHS.get(command, 0.0)
        elif char:
            width += _WIDTHS.get(char, CAPITAL)
    return width * scale * MARGIN


def _header_lines(text: str) -> list[str]:
    """A header label broken at spaces into lines of at most ``HEADER_WORDS_PER_LINE`` characters."""
    lines: list[str] = []
    for word in text.split(" "):
        if lines and len(lines[-1]) + 1 + len(word) <= HEADER_WORDS_PER_LINE:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines


def _header_width(text: str) -> float:
    return max(estimate_width(line) for line in _header_lines(text))


def _header_cell(text: str, align: str) -> str:
    lines = _header_lines(text)
    if len(lines) == 1:
        return text
    return rf"\begin{{tabular}}[b]{{@{{}}{align}@{{}}}}" + r" \\ ".join(lines) + r"\end{tabular}"


def _tabulate(header: Sequence[str], rows: Sequence[Sequence[str]], align: str, fmt: str) -> str:
    _check(header, rows, align)
    return tabulate(
        [list(row) for row in rows],
        headers=list(header),
        tablefmt=fmt,
        colalign=[ALIGNMENTS[letter] for letter in align],
        disable_numparse=True,
    )


def _check(header: Sequence[str], rows: Sequence[Sequence[str]], align: str) -> None:
    """A programming error, not a user error: every row and the alignment must match the header."""
    widths = {len(header), len(align), *(len(row) for row in rows)}
    if len(widths) != 1 or set(align) - set(ALIGNMENTS):
        raise ValueError(f"table shape: {len(header)} header cells, alignment {align!r}, row lengths {widths}")
