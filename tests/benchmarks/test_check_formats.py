"""`tokbench check --format text|markdown|json` and the composite GitHub Action (action.yml) that
runs a config and appends the check's Markdown to the job summary."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from benchmarks.check import write_baseline
from benchmarks.cli import main
from benchmarks.errors import BenchmarkError
from tests.errors import raises_code

REPO = Path(__file__).resolve().parents[2]
QUICK = REPO / "reports" / "quick"


@pytest.fixture
def quick_run(tmp_path: Path) -> Path:
    """The committed quick run (its results and manifest are a finished run directory)."""
    run = tmp_path / "quick"
    shutil.copytree(QUICK, run)
    return run


def _regressed_baseline(run: Path, path: Path) -> tuple[dict, dict]:
    """A baseline of ``run`` in which one bytes_per_token row was 10% better: the run regressed on it."""
    write_baseline(run, path)
    document = json.loads(path.read_text(encoding="utf-8"))
    row = next(r for r in document["rows"] if r["metric"] == "bytes_per_token")
    row["value"] *= 1.1
    path.write_text(json.dumps(document), encoding="utf-8")
    return document, row


def test_markdown_and_json_name_the_regression_and_keep_the_exit_status(
    quick_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    baseline = tmp_path / "baseline.json"
    write_baseline(quick_run, baseline)
    assert main(["check", str(quick_run), "--baseline", str(baseline), "--format", "json"]) == 0
    passed = json.loads(capsys.readouterr().out)
    assert passed["format"] == "tokbench-check" and passed["passed"] is True and passed["changes"] == []
    assert set(passed["counts"]) == {"regression", "moved", "missing", "improved", "new"}

    _, row = _regressed_baseline(quick_run, baseline)
    assert main(["check", str(quick_run), "--baseline", str(baseline), "--format", "json"]) == 1
    failed = json.loads(capsys.readouterr().out)
    assert failed["passed"] is False and failed["counts"]["regression"] == 1
    (change,) = failed["changes"]
    assert {k: change[k] for k in ("corpus", "tokenizer", "vocab_size", "metric", "eval_set")} == {
        k: row[k] for k in ("corpus", "tokenizer", "vocab_size", "metric", "eval_set")
    }
    assert change["baseline"] == pytest.approx(row["value"])
    assert change["delta"] == pytest.approx(change["value"] - change["baseline"]) and change["delta"] < 0

    assert main(["check", str(quick_run), "--baseline", str(baseline), "--format", "markdown"]) == 1
    markdown = capsys.readouterr().out
    table = [line for line in markdown.splitlines() if line.startswith("| regression")]
    assert "FAILED" in markdown.splitlines()[0] and len(table) == 1
    cells = [cell.strip() for cell in table[0].strip("|").split("|")]
    assert cells[1:5] == [row["corpus"], row["tokenizer"], str(row["vocab_size"]), "bytes_per_token"]
    assert float(cells[6]) == pytest.approx(row["value"], rel=1e-4)
    delta, relative = cells[8].split()  # "-0.0123 (-1.2%)": the change, then relative to the baseline
    assert float(delta) == pytest.approx(change["delta"], rel=1e-3)
    assert float(relative.strip("()%")) == pytest.approx(100 * change["delta"] / change["baseline"], abs=0.051)


def _action_step(action: dict, step_id: str) -> dict:
    return next(step for step in action["runs"]["steps"] if step.get("id") == step_id)


def _substitute(text: str, inputs: dict[str, str]) -> str:
    """What GitHub does to ``${{ inputs.NAME }}`` before a step runs (the only expressions the steps use)."""

    def value(match: re.Match[str]) -> str:
        return inputs[match.group(1)]

    text = re.sub(r"\$\{\{\s*inputs\.([\w-]+)\s*\}\}", value, text)
    assert "${{" not in text, f"unsubstituted expression in {text!r}"
    return text


def _run_step(step: dict, inputs: dict[str, str], env: dict[str, str], cwd: Path) -> int:
    assert step["shell"] == "bash"
    step_env = dict(env, **{name: _substitute(str(v), inputs) for name, v in step.get("env", {}).items()})
    script = cwd / f"{step['id']}.sh"
    script.write_text(_substitute(step["run"], inputs), encoding="utf-8")
    # plain bash, not GitHub's `bash -eo pipefail`: the step itself must keep tokbench's exit status
    return subprocess.run(["bash", "--noprofile", "--norc", str(script)], cwd=cwd, env=step_env).returncode


TINY = """name = "tiny"
corpora = ["embedded-eng"]
production = []
[[tokenizers]]
kind = "char"
vocab_sizes = [500]
[bootstrap]
resamples = 50
[report]
vocab_size = 500
"""


@pytest.mark.slow  # about 9 s: the CI steps run end to end; CI runs it with -m slow
def test_action_steps_write_the_summary_and_fail_on_a_regression(tmp_path: Path) -> None:
    action = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
    assert action["runs"]["using"] == "composite"
    assert set(action["inputs"]) >= {"config", "baseline", "python-version", "data-dir"}
    steps = action["runs"]["steps"]
    assert steps[0]["uses"].startswith("actions/setup-python@")
    assert steps[0]["with"]["python-version"] == "${{ inputs.python-version }}"
    install = _action_step(action, "install")
    assert "pip install" in install["run"] and install["env"]["TOKBENCH_SOURCE"] == "${{ github.action_path }}"

    # the installed `tokbench` entry point, standing for `pip install` of this repository (no network here)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    launcher = bin_dir / "tokbench"
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m benchmarks.cli "$@"\n', encoding="utf-8")
    launcher.chmod(launcher.stat().st_mode | stat.S_IXUSR)
    work = tmp_path / "work"
    work.mkdir()
    (work / "tiny.toml").write_text(TINY, encoding="utf-8")
    summary = tmp_path / "summary.md"
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}", PYTHONPATH=str(REPO),
               GITHUB_STEP_SUMMARY=str(summary), TOKBENCH_CACHE=str(tmp_path / "cache"))  # fmt: skip
    inputs = {"config": "tiny.toml", "baseline": "baseline.json", "python-version": "3.11", "data-dir": "",
              "run-dir": "runs/tiny"}  # fmt: skip

    assert _run_step(_action_step(action, "run"), inputs, env, work) == 0
    run = work / "runs" / "tiny"
    assert (run / "results.parquet").is_file() and (run / "report.md").is_file()

    write_baseline(run, work / "baseline.json")
    assert _run_step(_action_step(action, "check"), inputs, env, work) == 0
    assert summary.read_text(encoding="utf-8").startswith("### tokbench check passed")

    _, row = _regressed_baseline(run, work / "baseline.json")
    assert _run_step(_action_step(action, "check"), inputs, env, work) == 1
    appended = summary.read_text(encoding="utf-8")
    assert appended.count("### tokbench check") == 2  # appended, not overwritten
    failed = appended.split("### tokbench check FAILED", 1)[1]
    assert f"| {row['corpus']}" in failed and "| bytes_per_token" in failed and "| regression" in failed


@pytest.mark.parametrize(("manifest", "code"), [("{not json", "not_json"), ('{"config": {}, "run": 3}', "wrong_type")])
def test_a_baseline_is_not_written_from_a_damaged_manifest(quick_run: Path, tmp_path: Path, manifest: str,
                                                           code: str) -> None:  # fmt: skip
    (quick_run / "manifest.json").write_text(manifest, encoding="utf-8")
    baseline = tmp_path / "baseline.json"
    with raises_code(BenchmarkError, code):
        write_baseline(quick_run, baseline)
    assert not baseline.exists()


def test_check_names_a_tokenizer_by_its_report_label(quick_run: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture) -> None:  # fmt: skip
    """A row whose config entry sets options is named by its label alone, as in the report's tables."""
    baseline = tmp_path / "baseline.json"
    write_baseline(quick_run, baseline)
    document = json.loads(baseline.read_text(encoding="utf-8"))
    row = next(r for r in document["rows"] if r["options"] and r["metric"] == "bytes_per_token")
    row["value"] *= 1.1
    baseline.write_text(json.dumps(document), encoding="utf-8")
    assert main(["check", str(quick_run), "--baseline", str(baseline)]) == 1
    lines = [line for line in capsys.readouterr().out.splitlines() if "bytes_per_token" in line]
    assert len(lines) == 1 and f" {row['tokenizer']} " in f" {lines[0]} "
    assert not any(f"{name}=" in lines[0] for name in row["options"])
    assert row["tokenizer"] in (quick_run / "report.md").read_text(encoding="utf-8")
