"""The table renderer: Markdown, plain text and LaTeX booktabs from one header, rows and alignment."""

from __future__ import annotations

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


def test_latex_is_a_booktabs_float_with_caption_and_label():
    tex = render.latex(HEADER, [["kor\\_Hang", r"\textbf{1.50} [1.40, 1.60]", "--"]], "lrr", "A caption.", "tab:x")
    assert tex.splitlines() == [
        r"\begin{table}[t]",
        r"\centering",
        r"\caption{A caption.}",
        r"\label{tab:x}",
        r"\begin{tabular}{lrr}",
        r"\toprule",
        r"language & byte-bpe & cl100k \\",
        r"\midrule",
        r"kor\_Hang & \textbf{1.50} [1.40, 1.60] & -- \\",
        r"\bottomrule",
        r"\end{tabular}",
        r"\end{table}",
    ]


def test_escaping():
    assert render.md_escape("words with <unk> | x") == "words with \\<unk> \\| x"
    assert render.latex_escape("a_b & 50% <unk> α") == r"a\_b \& 50\% \textless{}unk\textgreater{} $\alpha$"


@pytest.mark.parametrize(
    ("header", "rows", "align"),
    [(["a", "b"], [["1"]], "lr"), (["a", "b"], [["1", "2"]], "l"), (["a"], [["1"]], "c")],
)
def test_a_misshapen_table_is_refused(header, rows, align):
    for renderer in (render.markdown, render.text):
        with pytest.raises(ValueError, match="table shape"):
            renderer(header, rows, align)
