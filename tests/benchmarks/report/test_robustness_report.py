"""The report's "Robustness per language" section (``benchmarks.report.sections.robustness``) on a small real run:
the embedded Korean and Russian corpora, a character row, a byte-level BPE at 600 and cl100k, with every robustness
metric of the two languages.  Each table is checked against results.csv read on its own: its columns are the
language's perturbations, each cell prints the token inflation, its interval and the two word metrics of that
tokenizer, and the bold values are the lowest of each quantity, none where all rows print the same."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pandas as pd
import pytest

from benchmarks.measure import perturb as P
from benchmarks.report.document import Heading, SimpleTable, Strong, plain_text, to_markdown
from benchmarks.report.html import to_html
from benchmarks.report.load import load_run
from benchmarks.report.sections import Context, robustness
from benchmarks.run.config import parse_config
from benchmarks.run.runner import run_experiment

LANGUAGES = {"embedded-kor": "kor_Hang", "embedded-rus": "rus_Cyrl"}
QUANTITIES = ("token_inflation", "changed_word_share", "boundary_edit_distance")
EXTRA = sorted({f"{q}_{p}" for language in LANGUAGES.values() for p in P.perturbations_for(language)
                for q in QUANTITIES if q == "token_inflation" or P.PERTURBATIONS[p].keeps_words})  # fmt: skip
CONFIG = {
    "name": "robust-report",
    "corpora": list(LANGUAGES),
    "max_train_chars": 20000,
    "production": ["cl100k"],
    "metrics": ["tokens_per_kchar"],
    "extra_metrics": EXTRA,
    "tokenizers": [{"kind": "char", "vocab_sizes": [2000]}, {"kind": "byte-bpe", "vocab_sizes": [600]}],
    "bootstrap": {"resamples": 50},
    "report": {"vocab_size": 600},
}


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("robust")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TOKBENCH_CACHE", str(root / "cache"))
        return run_experiment(parse_config(CONFIG, source="robust.toml"), root / "run", progress=False)


def test_one_table_per_language_with_every_cell_from_the_results(run_dir: Path) -> None:
    blocks = robustness.robustness_section(Context(load_run(run_dir), [], {}))
    assert plain_text(blocks[0].content) == "Robustness per language"
    assert "Lower is better" in plain_text(blocks[1].content)
    headings = [plain_text(block.content) for block in blocks if isinstance(block, Heading) and block.level == 3]
    assert headings == sorted(LANGUAGES.values())
    tables = [block for block in blocks if isinstance(block, SimpleTable)]
    results = pd.read_csv(run_dir / "results.csv", keep_default_na=False, na_values=[""])
    results = results[results["metric"].isin(EXTRA)]
    bold_columns = 0
    for language, table in zip(headings, tables, strict=True):
        perturbations = list(P.perturbations_for(language))
        assert [plain_text(cell) for cell in table.header] == ["tokenizer", *perturbations]
        rows = results[results["language"] == language]
        expected_rows = ["byte-bpe", "char", "cl100k"]  # families by label, then published rows
        # char is shown at 2k, the size closest to 600 it has, with the alphabet it reached (†n)
        assert [plain_text(row[0]).split(" †")[0] for row in table.rows] == expected_rows
        assert " †" in plain_text(table.rows[1][0]) and " †" not in plain_text(table.rows[0][0])
        assert "‡" not in str(table.rows)  # no row is more than 10% <unk>: every row is ranked
        for column, perturbation in enumerate(perturbations, start=1):
            per_quantity = {}
            for quantity in QUANTITIES:
                found = rows[rows["metric"] == f"{quantity}_{perturbation}"].set_index("tokenizer")
                per_quantity[quantity] = found
            for row, tokenizer in zip(table.rows, expected_rows, strict=True):
                inflation = per_quantity["token_inflation"].loc[tokenizer]
                printed = [f"{inflation['value']:.3f} [{inflation['ci_low']:.3f}, {inflation['ci_high']:.3f}]"]
                printed += [f"{found.loc[tokenizer, 'value']:.3f}" for quantity, found in per_quantity.items()
                            if quantity != "token_inflation" and not found.empty]  # fmt: skip
                assert plain_text(row[column]) == " · ".join(printed)
            # bold: the lowest printed value of each quantity, unless every row prints the same
            for position, (quantity, found) in enumerate(per_quantity.items()):
                if found.empty:
                    assert quantity != "token_inflation" and perturbation == "spaces"
                    continue
                shown = {tokenizer: f"{found.loc[tokenizer, 'value']:.3f}" for tokenizer in expected_rows}
                lowest = min(shown.values(), key=float)
                expected_bold = set() if len(set(shown.values())) == 1 else {
                    tokenizer for tokenizer, value in shown.items() if value == lowest}  # fmt: skip
                bold = {tokenizer for row, tokenizer in zip(table.rows, expected_rows, strict=True)
                        if _bold_values(row[column])[position]}  # fmt: skip
                assert bold == expected_bold, (language, perturbation, quantity)
                bold_columns += bool(bold)
    assert bold_columns > 10  # the rows differ on most quantities
    korean = tables[headings.index("kor_Hang")]
    # the character row cuts each syllable into jamo under nfd: one boundary edit per syllable, so more than one
    # edit per word, and every word with a syllable moves
    nfd = 1 + P.perturbations_for("kor_Hang").index("nfd")
    char_cell = plain_text(korean.rows[1][nfd]).split(" · ")
    assert float(char_cell[1]) > 0.8 and float(char_cell[2]) > 2
    markdown = to_markdown(blocks)
    assert re.search(r"\| char †\d+ +\| +(\*\*)?\d\.\d{3}(\*\*)? \[", markdown)  # the row as report.md prints it
    assert "char was not run at 600: shown at 2k" in markdown
    html = to_html(blocks, run_dir)
    assert "<strong>" in html and "Robustness per language" in html


def test_nothing_is_best_where_every_row_prints_the_same(run_dir: Path) -> None:
    """Korean has no letter case: without cl100k (whose Korean text keeps a few Latin words), `upper` changes
    nothing for the byte-level BPE and the character row, so no value of that column is bold and a note says why."""
    run = load_run(run_dir)
    two_rows = dataclasses.replace(run, results=run.results[run.results["tokenizer"] != "cl100k"])
    blocks = robustness.robustness_section(Context(two_rows, [], {}))
    korean = next(block for block in blocks if isinstance(block, SimpleTable))
    upper = 1 + P.perturbations_for("kor_Hang").index("upper")
    assert [plain_text(row[upper]) for row in korean.rows] == ["1.000 [1.000, 1.000] · 0.000 · 0.000"] * 2
    assert not any(_bold_values(row[upper])[position] for row in korean.rows for position in range(3))
    nfd = 1 + P.perturbations_for("kor_Hang").index("nfd")
    assert any(_bold_values(row[nfd])[0] for row in korean.rows)  # a column whose rows differ still has a best
    notes = to_markdown(blocks).split("### rus_Cyrl")[0]
    assert ("Every ranked row prints the same value in `token_inflation_upper` (1.000); "
            "`changed_word_share_upper` (0.000); `boundary_edit_distance_upper` (0.000): none is best there.") in notes


def test_no_section_without_robustness_rows(run_dir: Path) -> None:
    run = load_run(run_dir)
    plain = dataclasses.replace(run, results=run.results[~run.results["metric"].isin(EXTRA)])
    assert robustness.robustness_section(Context(plain, [], {})) == []


def _bold_values(cell: object) -> list[bool]:
    """Per printed quantity of a cell (the parts between `` · ``), whether it is bold."""
    bold, current = [], False
    for part in cell if isinstance(cell, tuple) else (cell,):
        if plain_text(part) == " · ":
            bold.append(current)
            current = False
        elif isinstance(part, Strong):
            current = True
    return [*bold, current]

