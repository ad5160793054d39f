"""Tables as text, in one place: Markdown (report.md), LaTeX booktabs (tables/*.tex) and plain text (the terminal).

A table is a header row, data rows and one alignment letter per column (``"l"`` or ``"r"``, as in a
LaTeX column spec).  Cells arrive as finished text in the target format: the caller escapes them
(``md_escape``, ``latex_escape``) and writes its own emphasis, because only the caller knows which
part of a cell is markup (a bold value followed by its confidence interval, say).

* Markdown and plain text are laid out by tabulate (its ``pipe`` and ``simple`` formats).  Cells are
  never parsed as numbers (tabulate would print ``1.50`` as ``1.5``); column widths count display
  cells (tabulate's wcwidth support), so Korean text lines up in a terminal.
* LaTeX is pandas' ``Styler.to_latex``: a ``table`` float with caption and label around a
  ``tabular`` with booktabs rules (``\\toprule``, ``\\midrule``, ``\\bottomrule``; the document
  needs ``\\usepackage{booktabs}``).

Every renderer returns its text without a trailing newline.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
from tabulate import tabulate

ALIGNMENTS = {"l": "left", "r": "right"}

LATEX_SPECIALS = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
    "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "<": r"\textless{}",
    ">": r"\textgreater{}", "α": r"$\alpha$",
}  # fmt: skip


def md_escape(text: str) -> str:
    """Text for Markdown: ``|`` would split a table cell, ``<unk>`` would be swallowed as an HTML tag."""
    return text.replace("|", "\\|").replace("<", "\\<")


def latex_escape(text: str) -> str:
    """Text for LaTeX: the characters LaTeX treats specially, and the α of Rényi efficiency, spelled out."""
    return "".join(LATEX_SPECIALS.get(char, char) for char in text)


def markdown(header: Sequence[str], rows: Sequence[Sequence[str]], align: str) -> str:
    """A pipe table; the alignment row carries each column's alignment (``:--`` left, ``--:`` right)."""
    return _tabulate(header, rows, align, "pipe")


def text(header: Sequence[str], rows: Sequence[Sequence[str]], align: str) -> str:
    """Columns separated by two spaces, the header underlined with dashes."""
    return _tabulate(header, rows, align, "simple")


def latex(header: Sequence[str], rows: Sequence[Sequence[str]], align: str, caption: str, label: str) -> str:
    """A booktabs ``tabular`` in a ``table`` float placed at the top of the page, centred.

    ``caption`` is LaTeX as it is (escape it first); ``label`` is the ``\\label`` key.
    """
    _check(header, rows, align)
    frame = pd.DataFrame([list(row) for row in rows], columns=list(header), dtype=object)
    styler = frame.style.hide(axis="index")
    tex = styler.to_latex(column_format=align, position="t", position_float="centering", hrules=True,
                          caption=caption, label=label)  # fmt: skip
    return tex.rstrip("\n")


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
