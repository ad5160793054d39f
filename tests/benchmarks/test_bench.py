"""Smoke test of the performance harness (`tokbench bench`) on ~100 KB of text from the sample data root,
and of the diverse text it generates; the real figures are not timed tests (benchmarks/perf/RESULTS.md)."""

from __future__ import annotations

import importlib.util
import re
from collections import Counter
from pathlib import Path

import pytest

from benchmarks.cli import main
from benchmarks.perf.corpus import TYPES_PER_REAL_TYPE, word_types, write_diverse


def test_bench_runs_on_100_kb(sample_data_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = tmp_path / "RESULTS.md"
    suites = "train,encode,sweep" + (",count" if importlib.util.find_spec("distributed") else "")
    argv = [
        "bench",
        "--data-dir",
        sample_data_root,
        "--train-mb",
        "0.1",
        "--encode-mb",
        "0.1",
        "--vocab-sizes",
        "2000",
        "--suites",
        suites,
        "--families",
        "byte-bpe",
        "--peers",
        "hf,spm,tiktoken",
        "--work-dir",
        tmp_path / "work",
        "--results",
        results,
    ]
    assert main([str(arg) for arg in argv]) == 0
    report = results.read_text(encoding="utf-8")
    assert report == capsys.readouterr().out
    assert "error" not in report
    assert "### Training on 0.1 MB of diverse text" in report
    assert re.search(r"^\| byte-bpe \| 2000 \| \d+\.\d\d \| \d+\.\d\d \| \d+\.\d\d \|", report, re.MULTILINE)
    assert "`tokbench encode` throughput" in report  # a target row, met or missed
    # the same vocabulary gives the same tokens in tokbench, tiktoken and HF tokenizers
    tokens = {
        name: set(
            re.findall(rf"^\| {re.escape(name)} \| \d \| [^|]+ \| [^|]+ \| [^|]+ \| (\d+) \|", report, re.MULTILINE)
        )
        for name in ("tokbench byte-bpe", "tiktoken, our merges", "HF tokenizers, our merges")
    }
    assert len(set.union(*tokens.values())) == 1, tokens
    if "count" in suites:  # every engine counted the same pre-tokens
        assert re.findall(r"\| (True|False) \|$", report, re.MULTILINE) == ["True"] * 3


def test_diverse_text_is_a_deterministic_zipf_mix(tmp_path: Path) -> None:
    """Without a data root: the embedded corpora's word types, plus recombined ones, drawn by Zipf."""
    inventories = word_types(None)
    assert [i.language for i in inventories] == ["tur_Latn", "rus_Cyrl", "kor_Hang", "eng_Latn"]
    for inventory in inventories:
        assert len(inventory.types) == int(inventory.n_real * TYPES_PER_REAL_TYPE)
        assert len(set(inventory.types)) == len(inventory.types)
    first = write_diverse(None, 300_000, tmp_path / "a.txt")
    second = write_diverse(None, 300_000, tmp_path / "b.txt")
    assert first.read_bytes() == second.read_bytes()
    data = first.read_bytes()
    assert 300_000 <= len(data) < 301_000 and data.endswith(b"\n")
    words = Counter(first.read_text(encoding="utf-8").split())
    frequencies = sorted(words.values(), reverse=True)
    assert frequencies[0] > 20 * frequencies[100] and frequencies[-1] == 1  # a long tail of rare types
    assert re.search(r"[\uac00-\ud7a3]", first.read_text(encoding="utf-8"))  # Korean among the languages


def test_bench_rejects_bad_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["bench", "--suites", "train,nope"])
    assert exit_info.value.code == 2
    assert "choose from train, memory, encode, count, sweep, run, growth" in capsys.readouterr().err
    assert main(["bench", "--data-dir", str(tmp_path)]) == 2
    assert "no ud/ folder" in capsys.readouterr().err
    assert main(["bench", "--train-mb", "0"]) == 2
