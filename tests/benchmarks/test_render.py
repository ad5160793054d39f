"""The table renderer: Markdown, plain text and LaTeX booktabs from one header, rows and alignment."""

from __future__ import annotations

import re

import pytest

from benchmarks import render

HEADER = ["language", "byte-bpe", "cl100k"]
ROWS = [["kor_Hang", "**1.50** [1.40, 1.60]", "3.87 [3.71, 4.04]"], ["tur_Latn", "2.31 [2.26, 2.35]", "–"]]


def test_markdown_is_a_pipe_table_with_alignment_and_untouched_cells():
    lines = render.markdown(HEADER, ROWS, "lrr").splitlines()
    assert len(lines) == 4
    assert [cell.strip() for cell in lines[0].strip("|").split("|")] == HEADER
    alignment = lines[1].strip("|").split("|")
    assert alignment[0].startswith(":-") and alignment[0].endswith("-")
    assert all(a.startswith("-") and a.endswith("-:") for a in alignment[1:])
    for line, row in zip(lines[2:], ROWS, strict=True):
        assert [cell.strip() for cell in line.strip("|").split("|")] == row  # "1.50" is not re-printed as "1.5"
    assert len({len(line) for line in lines}) == 1  # columns padded to one width


def test_text_aligns_columns_by_display_width():
    out = render.text(["word", "count"], [["서울", "12"], ["Ankara", "1,234"]], "lr")
    header, rule, seoul, ankara = out.splitlines()
    assert set(rule) == {"-", " "} and header.startswith("word")
    # a Hangul syllable takes two terminal cells: both rows end at the same display column
    assert len(seoul) + 2 == len(ankara) and seoul.endswith("   12") and ankara.endswith("1,234")


def test_latex_is_a_booktabs_float_with_caption_label_second_lines_and_notes():
    tex = render.latex(HEADER, [["kor\\_Hang", r"\textbf{1.50}", "--"], ["tur\\_Latn", "2.31", "2.40"]], "lrr",
                       "A caption.", "tab:x", sublines=[["", "[1.40, 1.60]", ""], ["", "", ""]], rules_before=[1],
                       notes=["A note."])  # fmt: skip
    assert tex.splitlines() == [
        r"\begin{table*}[tp]",
        r"\centering",
        r"\small",
        r"\caption{A caption.}",
        r"\label{tab:x}",
        r"\tokbenchfit{\begin{tabular}{lrr}",
        r"\toprule",
        r"language & byte-bpe & cl100k \\",
        r"\midrule",
        r"kor\_Hang & \textbf{1.50} & -- \\",
        r" & {\footnotesize [1.40, 1.60]} &  \\",  # the CI on a line of its own
        r"\midrule",  # a new block of rows
        r"tur\_Latn & 2.31 & 2.40 \\",  # no second line where no cell has one
        r"\bottomrule",
        r"\end{tabular}}",
        "",
        r"\smallskip",
        r"{\footnotesize\raggedright A note.\par}",
        r"\end{table*}",
    ]


def test_latex_splits_a_wide_table_into_column_blocks_unless_the_page_is_wide_enough():
    header = ["tokenizer", *(f"language {i}" for i in range(8))]
    rows = [[f"row {r}", *("0.123" for _ in range(8))] for r in range(3)]
    sublines = [["", *("[0.111, 0.135]" for _ in range(8))] for _ in range(3)]
    tex = render.latex(header, rows, "l" + "r" * 8, "Wide.", "tab:wide", sublines=sublines)
    _, narrow, otherwise, _ = re.split(r"^(?:\\ifdim.*|\\else|\\fi)$", tex + "\n", flags=re.M)
    natural = int(re.search(r"\\ifdim\\textwidth<(\d+)pt", tex).group(1))
    assert natural > render.ONE_COLUMN_WIDTH
    # narrower text: several blocks, each repeating the row labels and fitting the one-column width
    blocks = narrow.count(r"\tokbenchfit{")
    assert blocks >= 2 and narrow.count("row 0 &") == blocks
    # wider text (a two-column page's table*): the whole table in one block
    assert otherwise.count(r"\tokbenchfit{") == 1
    assert tex.count(r"\label{tab:wide}") == 2  # once per branch: LaTeX reads one of them


def test_a_table_taller_than_a_page_continues_in_a_second_float():
    rows = [[f"row {r}", "0.1"] for r in range(60)]
    tex = render.latex(["tokenizer", "value"], rows, "lr", "Tall.", "tab:tall",
                       sublines=[["", "[0.0, 0.2]"] for _ in rows])  # fmt: skip
    assert tex.count(r"\begin{table*}") == 3 and tex.count(r"\label{tab:tall}") == 1  # 60 two-line rows: 3 pages
    assert r"\addtocounter{table}{-1}" in tex and r"\caption{(continued)}" in tex


def test_width_estimates_are_computer_modern_widths_rounded_up():
    # measured with pdflatex at \small: ten digits 46.2 pt, "[0.248, 0.263]" 52.9 pt; \footnotesize 48.6 pt
    assert 46.2 <= render.estimate_width("0123456789") <= 46.2 * 1.1
    assert 52.9 <= render.estimate_width("[0.248, 0.263]") <= 52.9 * 1.1
    assert 48.6 <= render.estimate_width("[0.248, 0.263]", render.FOOTNOTE) <= 48.6 * 1.1
    assert 53.2 <= render.estimate_width(r"\textbf{0123456789}") <= 53.2 * 1.1


def test_escaping():
    assert render.md_escape("words with <unk> | x") == "words with \\<unk> \\| x"
    assert render.latex_escape("a_b & 50% <unk> α") == r"a\_b \& 50\% \textless{}unk\textgreater{} $\alpha$"
    assert render.latex_escape("†5,164 ‡ § Σ 12–41%") == r"\dag{}5,164 \ddag{} \S{} $\Sigma$ 12--41\%"


@pytest.mark.parametrize(
    ("header", "rows", "align"),
    [(["a", "b"], [["1"]], "lr"), (["a", "b"], [["1", "2"]], "l"), (["a"], [["1"]], "c")],
)
def test_a_misshapen_table_is_refused(header, rows, align):
    for renderer in (render.markdown, render.text):
        with pytest.raises(ValueError, match="table shape"):
            renderer(header, rows, align)
