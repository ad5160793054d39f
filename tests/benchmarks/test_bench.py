"""Smoke test of the performance harness (`tokbench bench`) on ~100 KB of text from the sample data root
and the embedded corpora; the real figures are not timed tests (benchmarks/perf/RESULTS.md)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from benchmarks.cli import main
from benchmarks.perf.corpus import build_mixed, source_texts


def test_bench_runs_on_100_kb(sample_data_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = tmp_path / "RESULTS.md"
    argv = [
        "bench",
        "--data-dir",
        str(sample_data_root),
        "--size-mb",
        "0.1",
        "--vocab-sizes",
        "1000",
        "--suites",
        "train,encode",
        "--families",
        "byte-bpe",
        "--peers",
        "hf,tiktoken",
        "--work-dir",
        str(tmp_path / "work"),
        "--results",
        str(results),
    ]
    assert main(argv) == 0
    report = results.read_text(encoding="utf-8")
    assert report == capsys.readouterr().out
    assert "error" not in report
    assert "### Training byte-bpe (0.1 MB mixed text)" in report
    assert re.search(r"^\| 1000 \| \d+\.\d\d \| \d+\.\d\d \| \d+\.\d\d \|", report, re.MULTILINE)
    # the same vocabulary gives the same tokens in tokbench, tiktoken and HF tokenizers
    tokens = {
        name: set(
            re.findall(rf"^\| {re.escape(name)} \| \d \| [^|]+ \| [^|]+ \| [^|]+ \| (\d+) \|", report, re.MULTILINE)
        )
        for name in ("tokbench byte-bpe", "tiktoken, our merges", "HF tokenizers, our merges")
    }
    assert len(set.union(*tokens.values())) == 1, tokens
    assert all(len(found) == 1 for found in tokens.values()), tokens


def test_mixed_text_has_equal_shares_of_the_four_languages(sample_data_root: Path) -> None:
    sources = source_texts(sample_data_root)
    assert [s.language for s in sources] == ["tur_Latn", "rus_Cyrl", "kor_Hang", "eng_Latn"]
    lines = build_mixed(sources, 400_000)
    total = sum(len(line.encode("utf-8")) + 1 for line in lines)
    assert 400_000 <= total < 400_000 + 4 * max(len(line.encode("utf-8")) + 1 for line in lines)
    hangul = sum(len(line.encode("utf-8")) + 1 for line in lines if re.search(r"[\uac00-\ud7a3]", line))
    assert 0.2 < hangul / total < 0.3  # a quarter of the bytes are Korean lines
    assert lines[:4] == [s.lines[0] for s in sources]  # interleaved line by line


def test_bench_rejects_bad_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["bench", "--suites", "train,nope"])
    assert exit_info.value.code == 2
    assert "choose from train, encode, run, growth" in capsys.readouterr().err
    assert main(["bench", "--data-dir", str(tmp_path)]) == 2
    assert "no ud/ folder" in capsys.readouterr().err
