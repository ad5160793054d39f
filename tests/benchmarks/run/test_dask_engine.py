"""`tokbench run --engine dask`: the grid's tasks on a Dask cluster give the local engine's files byte for byte,
on a local cluster of two workers and on a running scheduler whose worker dies in the middle of a unit; the
errors of a scheduler that cannot be reached, of an address without the dask engine and of a missing extra
are one line each.

One small real grid (embedded English text, a derived sweep, a word vocabulary, a production row: trainings,
units and side tables, silver references) runs once on the local engine; each dask run starts from an
empty cache, so its workers train too.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import sys
from pathlib import Path

import pandas as pd
import pytest

from benchmarks.cli import main
from benchmarks.measure.metrics import METRICS
from benchmarks.run import executors, runner
from benchmarks.run.units import read_unit_result
from corpora import silver

CONFIG = """name = "dask"
corpora = ["embedded-eng"]
production = ["cl100k"]

[[tokenizers]]
kind = "char-bpe"
vocab_sizes = [300, 600]
options = { end_of_word = "separate" }

[[tokenizers]]
kind = "word"
vocab_sizes = [400]

[bootstrap]
resamples = 50

[report]
vocab_size = 300
"""
#: the files of a run that hold no wall-clock figure: equal byte for byte on every engine
SAME_BYTES = ("results.csv", "results.parquet", "paired.csv", "audit.csv", "audit-entries.csv", "examples.json")


@pytest.fixture
def needs_distributed() -> None:
    if importlib.util.find_spec("distributed") is not None:
        return
    reason = "distributed not installed: the dask engine needs the cluster extra (pip install 'tokbench[cluster]')"
    if os.environ.get("CI"):
        pytest.fail(f"on CI: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("dask")
    (folder / "dask.toml").write_text(CONFIG, encoding="utf-8")
    return folder


def tokbench(folder: Path, out: str, *options: str) -> int:
    """``tokbench run`` of the grid into ``folder/out`` on two workers, with an empty cache of its own."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TOKBENCH_CACHE", str(folder / f"{out}-cache"))
        return main(["run", str(folder / "dask.toml"), "--out", str(folder / out), "--jobs", "2", "--no-report",
                     "--quiet", *options])  # fmt: skip


@pytest.fixture(scope="module")
def local_run(folder: Path) -> Path:
    assert tokbench(folder, "local") == 0
    return folder / "local"


def manifest_without_timings(run: Path) -> dict[str, object]:
    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    return {key: value for key, value in manifest.items() if key != "timings"}


def assert_same_run(run: Path, local: Path) -> None:
    """``run`` holds what ``local`` holds, wall-clock figures (costs, timings) aside."""
    for name in SAME_BYTES:
        assert (run / name).read_bytes() == (local / name).read_bytes(), name
    tokenizers = sorted(path.relative_to(local) for path in (local / "tokenizers").rglob("*.json"))
    assert tokenizers == sorted(path.relative_to(run) for path in (run / "tokenizers").rglob("*.json"))
    assert all((run / path).read_bytes() == (local / path).read_bytes() for path in tokenizers)
    units = sorted(path.name for path in (local / "units").iterdir())
    assert units == sorted(path.name for path in (run / "units").iterdir())  # no stray file of a task run twice
    for name in units:
        ours, theirs = read_unit_result(run / "units" / name), read_unit_result(local / "units" / name)
        assert repr(ours.rows) == repr(theirs.rows) and ours.counts == theirs.counts, name  # repr: NaN == NaN
    assert manifest_without_timings(run) == manifest_without_timings(local)
    measured = [metric.name for metric in METRICS.values() if not metric.deterministic]
    ours, theirs = (pd.read_csv(path / "costs.csv").drop(columns=measured, errors="ignore") for path in (run, local))
    assert ours.equals(theirs) and len(ours) == len(units)  # the same rows: the timings alone differ
    assert not (run / executors.SNAPSHOTS).exists()  # the workers' snapshots go with the cluster


@pytest.mark.slow  # about 6 s: a local Dask cluster; CI runs it with -m slow
def test_a_local_cluster_gives_the_local_engines_files(needs_distributed: None, folder: Path, local_run: Path) -> None:
    assert tokbench(folder, "cluster", "--engine", "dask") == 0
    assert_same_run(folder / "cluster", local_run)


@pytest.mark.slow  # about 7 s: a local Dask cluster, a worker killed; CI runs it with -m slow
def test_a_worker_killed_in_the_middle_of_a_unit_is_replaced_and_the_unit_runs_again(
    needs_distributed: None, folder: Path, local_run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A running scheduler's worker dies (SIGKILL) after evaluating a unit, before writing its file: Dask
    reschedules the unit on a worker that lives, the run ends with status 0 and its files are the local ones."""
    from distributed import Client, LocalCluster

    class Ready(silver.Prefetch):
        def ready(self, analyzers=None) -> bool:
            return True  # every unit goes to the workers: none is evaluated here while the analyses run

    monkeypatch.setattr(runner.silver, "Prefetch", Ready)
    marker = folder / "a worker died"

    def die_before_the_first_unit_file(marker: str) -> None:  # on each worker (pickled by value: a closure)
        import signal

        write = runner.write_unit_result

        def write_or_die(*args: object) -> None:
            try:
                os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))  # one death, on the whole cluster
            except FileExistsError:
                return write(*args)
            os.kill(os.getpid(), signal.SIGKILL)

        runner.write_unit_result = write_or_die

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:  # fmt: skip
        client.run(die_before_the_first_unit_file, str(marker))
        assert tokbench(folder, "killed", "--engine", "dask", "--address", cluster.scheduler_address) == 0
    assert marker.is_file()
    assert_same_run(folder / "killed", local_run)


def test_a_sweep_still_training_when_the_analyses_end_is_handed_over(
    needs_distributed: None, folder: Path, local_run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The analyses end while the first sweep trains on the cluster (with the references built so far): the
    run's pool takes its result over and queues its units, which the workers evaluate with every reference."""

    class EndingAnalyses(silver.Prefetch):
        asked = 0

        def ready(self, analyzers=None) -> bool:
            EndingAnalyses.asked += 1
            return EndingAnalyses.asked > 2  # busy for the run's first look and the first sweep's start

    handed = []
    original = runner._run_units

    def run_units(*args, **kwargs):
        handed.append(args[-1])  # the sweep still training
        return original(*args, **kwargs)

    monkeypatch.setattr(runner.silver, "Prefetch", EndingAnalyses)
    monkeypatch.setattr(runner, "_POLL_SECONDS", 0.0)  # the training cannot have ended at the first look
    monkeypatch.setattr(runner, "_run_units", run_units)
    assert tokbench(folder, "handed", "--engine", "dask") == 0
    assert len(handed) == 1 and handed[0] is not None
    assert_same_run(folder / "handed", local_run)


def error_line(capfd: pytest.CaptureFixture[str]) -> str:
    out, err = capfd.readouterr()
    assert "Traceback" not in out + err
    errors = [line for line in err.splitlines() if re.match(r"tokbench( \w+)*: error: ", line)]
    assert len(errors) == 1 and err.rstrip().endswith(errors[0]), err
    return errors[0]


def test_an_unreachable_scheduler_is_one_line_naming_its_address(
    needs_distributed: None, folder: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(executors, "CONNECT_TIMEOUT", "1s")
    address = "tcp://127.0.0.1:1"
    assert tokbench(folder, "unreachable", "--engine", "dask", "--address", address) == 2
    assert f"cannot reach the Dask scheduler at {address}" in error_line(capfd)
    assert not (folder / "unreachable").exists()  # refused before the run folder is made
    assert tokbench(folder, "nonsense", "--engine", "dask", "--address", "nonsense") == 2
    assert "cannot reach the Dask scheduler at nonsense" in error_line(capfd)


def test_an_address_without_the_dask_engine_is_bad_input(folder: Path, capfd: pytest.CaptureFixture[str]) -> None:
    assert tokbench(folder, "idle", "--address", "tcp://127.0.0.1:8786") == 2
    assert "--address tcp://127.0.0.1:8786 applies to --engine dask only" in error_line(capfd)
    assert not (folder / "idle").exists()


def test_without_distributed_the_dask_engine_says_what_to_install(
    folder: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # an import of it fails, as when it is not installed
    assert tokbench(folder, "missing", "--engine", "dask") == 2
    assert "pip install 'tokbench[cluster]'" in error_line(capfd)
    assert not (folder / "missing").exists()
