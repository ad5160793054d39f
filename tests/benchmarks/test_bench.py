"""Smoke test of the performance harness (`tokbench bench`) on ~100 KB of text from the sample data root,
and of the diverse text it generates; the real figures are not timed tests (benchmarks/perf/RESULTS.md)."""

from __future__ import annotations

import importlib.util
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from benchmarks.cli import main
from benchmarks.perf.corpus import TYPES_PER_REAL_TYPE, word_types, write_diverse, write_real


@pytest.mark.slow  # 20-45 s: a whole run (or bench suite) end to end; CI runs it with -m slow
def test_bench_train_suite_on_one_seed_and_the_real_text(
    sample_data_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The default-run check: training against sentencepiece on one seed and the real text, where
    the time goes, and a target row that spans both texts."""
    argv = [
        "bench",
        "--data-dir",
        sample_data_root,
        "--train-mb",
        "0.05",
        "--vocab-sizes",
        "32000",
        "--suites",
        "train",
        "--families",
        "byte-bpe",
        "--peers",
        "spm",
        "--seeds",
        "5",
        "--work-dir",
        tmp_path / "work",
    ]
    assert main([str(arg) for arg in argv]) == 0
    report = capsys.readouterr().out
    assert "error" not in report
    target = re.search(
        r"^\| byte-bpe 32k on 0.05 MB of each seed and the real text: wall time <= 0.7x "
        r"sentencepiece \| seed 5, 0.05 MB: (\d+\.\d\d)x [^;]+; real text [^|]+: (\d+\.\d\d)x [^|]+"
        r"\| (met|\*\*missed\*\*) \|",
        report,
        re.MULTILINE,
    )
    assert target, report
    assert (target[3] == "met") == all(float(ratio) <= 0.7 for ratio in target.groups()[:2])
    assert report.count("### Where training time goes") == 2
    assert re.search(r"^\| split at whitespace, count pieces \| \d+\.\d\d \|$", report, re.MULTILINE)


@pytest.mark.slow  # about two minutes on 2 shared cores: every text, encoding and long inputs
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
        "--seeds",
        "1,2",
        "--long-word-mb",
        "0.01",
        "--long-line-mb",
        "0.05",
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
    assert "### Training (sentencepiece BPE on 2 threads)" in report
    # one row per text: each seed and the real text
    for text in ("seed 1, 0.1 MB", "seed 2, 0.1 MB", "real text (UD + FLORES-200 + embedded)"):
        row = rf"^\| {re.escape(text)}[^|]* \| byte-bpe \| 2000 \| \d+\.\d\d \| \d+\.\d\d \| \d+\.\d\d \|"
        assert re.search(row, report, re.MULTILINE), text
    # where the time goes, on each largest text, with sentencepiece's phases from its log
    assert report.count("### Where training time goes") == 3
    assert re.search(r"^\| merge kernel \| \d+\.\d\d \|$", report, re.MULTILINE)
    assert re.search(r"^\| merge loop \| \d+\.\d\d \|$", report, re.MULTILINE)
    assert report.count("the 1-thread count equals the all-core count: True") == 3
    # long inputs: the three implementations give the same ids on one word and one line
    long_rows = re.findall(
        r"^\| one (word|line) of [\d.]+ MB \| [^|]+ \| [^|]+ \| [^|]+ \| \d+ \| (\w+) \|", report, re.M
    )
    assert len(long_rows) == 6 and {same for _, same in long_rows} == {"True"}, long_rows
    assert "`tokbench encode` throughput" in report  # a target row, met or missed
    # the same vocabulary gives the same tokens in tokbench, tiktoken and HF tokenizers
    tokens = {
        name: set(
            re.findall(rf"^\| {re.escape(name)} \| \d \| [^|]+ \| [^|]+ \| [^|]+ \| (\d+) \|", report, re.MULTILINE)
        )
        for name in ("tokbench byte-bpe", "tiktoken, our merges", "HF tokenizers, our merges")
    }
    assert all(len(found) == 2 for found in tokens.values()), tokens  # one token count per seed
    assert tokens["tokbench byte-bpe"] == tokens["tiktoken, our merges"] == tokens["HF tokenizers, our merges"]
    if "count" in suites:  # every engine counted the same pre-tokens, on each seed
        counted = re.findall(r"^\| (?:local|Dask)[^\n]*\| (True|False) \|$", report, re.MULTILINE)
        assert counted == ["True"] * 6


@pytest.mark.slow  # about 7 s: every text shape generated twice; CI runs it with -m slow
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
    other_seed = write_diverse(None, 300_000, tmp_path / "c.txt", seed=7)
    assert other_seed.read_bytes() != first.read_bytes()
    assert word_types(None, 7)[0].types[:100] == inventories[0].types[:100]  # the real types lead in both
    assert word_types(None, 7)[0].types != inventories[0].types  # other recombined types
    words_per_line = [len(line.split()) for line in first.read_text(encoding="utf-8").splitlines()]
    assert min(words_per_line) <= 2 and max(words_per_line) >= 40  # varied line lengths
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


def test_real_text_holds_the_flores_and_ud_lines(sample_data_root: Path, tmp_path: Path) -> None:
    real = write_real(sample_data_root, tmp_path / "real.txt").read_text(encoding="utf-8").splitlines()
    flores = (sample_data_root / "flores" / "kor_Hang.txt").read_text(encoding="utf-8").splitlines()
    ud = [
        line.removeprefix("# text = ")
        for path in sorted((sample_data_root / "ud" / "ru").glob("*.conllu"))
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.startswith("# text = ")
    ]
    lines = set(real)
    assert all(line in lines for line in flores if line.strip()) and all(line in lines for line in ud)
    assert "" not in lines


TINY_RUN = """name = "tiny"
corpora = ["embedded-eng"]
production = []

[[tokenizers]]
kind = "char"
vocab_sizes = [300]

[bootstrap]
resamples = 20

[report]
vocab_size = 300
"""


def test_the_floor_of_a_run_is_its_slowest_silver_analysis(tmp_path: Path) -> None:
    from benchmarks.perf.reference import slowest_analysis

    timings = {"total_seconds": 168.0, "silver_analysis_seconds": {"kiwi": 3.5, "zemberek": 29.04, "pymorphy": 2.0}}
    (tmp_path / "manifest.json").write_text(json.dumps({"timings": timings}), encoding="utf-8")
    assert slowest_analysis(tmp_path) == "zemberek 29.0 s"
    (tmp_path / "manifest.json").write_text(json.dumps({"timings": {"total_seconds": 9.0}}), encoding="utf-8")
    assert slowest_analysis(tmp_path) == "-"  # a manifest of an older commit
    assert slowest_analysis(tmp_path / "absent") == "-"


def test_bench_reference_names_an_unknown_commit(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--suites", "run", "--reference", "no-such-commit-0000"]) == 2
    assert "--reference 'no-such-commit-0000': no such commit" in capsys.readouterr().err


@pytest.mark.slow  # builds a virtualenv and compiles the reference's kernels: minutes on 2 shared cores
def test_bench_reference_mode_against_this_very_commit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """HEAD built in its own virtualenv against this checkout: a ratio near 1 and identical results."""
    config = tmp_path / "tiny.toml"
    config.write_text(TINY_RUN, encoding="utf-8")
    argv = ["bench", "--suites", "run", "--run-configs", str(config), "--reference", "HEAD",
            "--work-dir", str(tmp_path / "work")]  # fmt: skip
    assert main(argv) == 0
    report = capsys.readouterr().out
    row = re.search(
        r"^\| tokbench run tiny \| (\d+\.\d\d) \| \d+ \| [a-z]+ \d+\.\d s \| - "
        r"\| (\d+\.\d\d) \| (\d+\.\d\d) \| True \|$",
        report,
        re.M,
    )
    assert row, report
    assert float(row[3]) == pytest.approx(float(row[1]) / float(row[2]), abs=0.01)
    built = next((tmp_path / "work" / "reference").iterdir())
    assert (built / "venv" / "bin" / "python").exists() and (built / "src" / "pyproject.toml").exists()


def test_sentencepiece_phases_come_from_its_log(sample_data_root: Path, tmp_path: Path) -> None:
    """Each phase ends at its own log message (none is empty) and together they make up the call."""
    pytest.importorskip("sentencepiece")
    from benchmarks.perf.child import SPM_PHASES, train_spm_phases

    lines = write_real(sample_data_root, tmp_path / "real.txt").read_text(encoding="utf-8").splitlines()
    result = train_spm_phases(lines, {"vocab_size": 1000, "threads": 2})
    assert list(result["phases"]) == [name for name, _ in SPM_PHASES] + ["write the model"]
    assert all(seconds > 0 for seconds in result["phases"].values()), result
    assert sum(result["phases"].values()) == pytest.approx(result["seconds"], abs=1e-3)
