"""Whole ``tokbench run``\\ s of this code against a reference commit, on the same machine, alternating.

Absolute times do not travel between machines (the same cold paper run has taken twice as long on one
2-core machine as on another), so a speed target for whole runs is a ratio against an older commit
measured in the same benchmark run.  ``build_reference`` builds the commit once per work folder:

1. ``git archive COMMIT`` of the repository this code runs from, unpacked into
   ``reference/<sha>/src``;
2. a virtualenv ``reference/<sha>/venv`` made with this interpreter, whose dependencies are this
   environment's (a ``.pth`` file naming this environment's site-packages: the ratio then measures
   the code, not different package versions);
3. ``pip install --no-deps src`` (its build backend from the package index) installs the commit's packages into it;
4. its numba kernels are compiled once (``bpe/*kernel*.py`` imported): a cold *run* starts from empty
   tokbench caches, not from an install whose machine code was never compiled.

``compare_runs`` then runs every config ``repeats`` times, the reference and this code in turn, each
with a fresh ``TOKBENCH_CACHE`` (cold corpus, analysis, tokenizer and evaluation caches), from a
neutral working folder and without ``PYTHONPATH`` for the reference, so neither imports the other's
code; the fastest run of each counts, and the ratio is this code's time over the reference's.  The
``results.csv`` of the two are compared byte for byte, and this code's run is checked against the
committed baseline of its config (``tokbench check``; ``results/baseline/<config>.json``), when there
is one.
"""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks.errors import BenchmarkError

if TYPE_CHECKING:
    from benchmarks.perf.common import Bench

#: compiles every kernel module of the bpe package it runs in, at any depth (names and folders differ
#: between commits: ``bpe/merge_kernel.py`` once, ``bpe/kernels/merge_kernel.py`` now)
COMPILE_KERNELS = (
    "import importlib, pathlib, bpe; root = pathlib.Path(bpe.__file__).parent; "
    "[importlib.import_module('.'.join(('bpe', *p.relative_to(root).with_suffix('').parts))) "
    "for p in sorted(root.rglob('*kernel*.py'))]"
)


def repository_root() -> Path:
    """The git checkout this code runs from (a BenchmarkError when it is not one)."""
    here = Path(__file__).resolve().parent
    try:
        done = subprocess.run(
            ["git", "-C", str(here), "rev-parse", "--show-toplevel"], capture_output=True, text=True, check=False
        )
    except FileNotFoundError:
        raise BenchmarkError("--reference needs git, which is not installed") from None
    if done.returncode != 0:
        raise BenchmarkError(f"--reference needs a git checkout of tokbench; {here} is not in one")
    return Path(done.stdout.strip())


def resolve_commit(commit: str) -> str:
    """The full hash of ``commit`` in this repository (a BenchmarkError naming it when unknown)."""
    root = repository_root()
    done = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}"],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise BenchmarkError(f"--reference {commit!r}: no such commit in {root}")
    return done.stdout.strip()


def build_reference(commit: str, work_dir: Path, log: Any = print) -> Path:
    """The interpreter of a virtualenv with ``commit`` installed (built once; see the module docstring)."""
    sha = resolve_commit(commit)
    home = work_dir / "reference" / sha
    python = home / "venv" / "bin" / "python"
    if (home / "built").exists():
        return python
    shutil.rmtree(home, ignore_errors=True)
    source = home / "src"
    source.mkdir(parents=True)
    log(f"building reference {commit} ({sha[:12]}) in {home}")
    archive = subprocess.run(
        ["git", "-C", str(repository_root()), "archive", "--format=tar", sha], capture_output=True, check=False
    )
    if archive.returncode != 0:
        raise BenchmarkError(f"git archive {sha}: {archive.stderr.decode('utf-8', 'replace').strip()}")
    with tempfile.TemporaryFile() as tar_file:
        tar_file.write(archive.stdout)
        tar_file.seek(0)
        with tarfile.open(fileobj=tar_file) as tar:
            tar.extractall(source, filter="data")
    _run([sys.executable, "-m", "venv", "--without-pip", str(home / "venv")], "making the reference virtualenv")
    purelib = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    ours = [sysconfig.get_paths()["purelib"], *site.getsitepackages()]
    (purelib / "_tokbench_reference_dependencies.pth").write_text(
        "".join(f"{path}\n" for path in dict.fromkeys(ours)), encoding="utf-8"
    )
    _run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps",
         str(source)],
        f"pip install of reference {commit}",
    )  # fmt: skip
    _run([str(python), "-c", COMPILE_KERNELS], f"compiling the kernels of reference {commit}", cwd=home)
    (home / "built").write_text(sha + "\n", encoding="utf-8")
    return python


def _run(argv: list[str], what: str, cwd: Path | None = None) -> None:
    done = subprocess.run(argv, capture_output=True, text=True, check=False, cwd=cwd, env=_clean_env())
    if done.returncode != 0:
        last = (done.stderr or done.stdout).strip().splitlines() or [f"exit status {done.returncode}"]
        raise BenchmarkError(f"{what} failed: {last[-1]}")


def _clean_env() -> dict[str, str]:
    """This environment without PYTHONPATH (which would put this checkout before the reference)."""
    return {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}


def compare_runs(
    bench: Bench, configs: tuple[str, ...], reference: str | None, repeats: int
) -> tuple[list[list[Any]], list[tuple[str, float | None, str]]]:
    """Table rows (config, this code s, peak, [reference s, ratio, same results.csv]) and, with a
    reference, ``(config, ratio, detail)`` per config."""
    from benchmarks.perf.common import _fastest, _fmt, _ok, _ratio, _seconds

    options = bench.options
    work = options.work_dir.resolve()
    old_python = build_reference(reference, work, bench.log) if reference is not None else None
    rows: list[list[Any]] = []
    ratios: list[tuple[str, float | None, str]] = []
    for config in configs:
        runs: dict[str, list[dict[str, Any]]] = {"old": [], "new": []}
        for attempt in range(repeats):
            for side in ("old", "new") if old_python is not None else ("new",):
                runs[side].append(_cold_run(bench, config, side, attempt, old_python if side == "old" else None))
        new = _fastest(runs["new"])
        peak = _fmt(new.get("command_peak_mb"), 0)
        checked = _check_baseline(work / f"run-{_slug(config)}-new-0", config)
        floor = slowest_analysis(work / f"run-{_slug(config)}-new-0")
        if old_python is None:
            rows.append([f"tokbench run {_slug(config)}", _seconds(new), peak, floor, checked])
            continue
        old = _fastest(runs["old"])
        same = _same_results(work / f"run-{_slug(config)}-old-0", work / f"run-{_slug(config)}-new-0")
        ratio = _ratio(new, old)
        rows.append([f"tokbench run {_slug(config)}", _seconds(new), peak, floor, checked, _seconds(old), ratio, same])
        ratios.append((config, ratio if _ok(new, old) else None, f"{_seconds(new)} s vs {_seconds(old)} s"))
    return rows, ratios


def _cold_run(bench: Bench, config: str, side: str, attempt: int, python: Path | None) -> dict[str, Any]:
    """One ``tokbench run CONFIG`` from empty caches, timed as a whole process."""
    options = bench.options
    work = options.work_dir.resolve()
    out = work / f"run-{_slug(config)}-{side}-{attempt}"
    shutil.rmtree(out, ignore_errors=True)
    named = config if not (config.endswith(".toml") or "/" in config) else str(Path(config).resolve())
    argv = [str(python or sys.executable), "-m", "benchmarks.cli", "run", named, "--out", str(out), "--overwrite",
            "--quiet", "--jobs", str(options.processes)]  # fmt: skip
    if options.data_root is not None:
        argv += ["--data-dir", str(Path(options.data_root).resolve())]
    cache = Path(tempfile.mkdtemp(prefix=f"cache-{_slug(config)}-{side}-", dir=work))
    task = {"task": "command", "argv": argv, "cwd": str(work), "env": {"TOKBENCH_CACHE": str(cache)}}
    if python is not None:
        task["drop_env"] = ["PYTHONPATH"]
    try:
        return bench.measure(task)
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def slowest_analysis(run_dir: Path) -> str:
    """The run's slowest silver analysis, from its manifest's ``timings`` (``"zemberek 29.0 s"``; ``"-"``
    without one).  A stateful analyzer runs on one process and cannot be split, and the units that need
    its answers wait for it: it is the floor of a cold run (a later run reads its answers from the cache)."""
    import json

    try:
        timings = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))["timings"]
        seconds = timings["silver_analysis_seconds"]
    except (OSError, ValueError, KeyError, TypeError):
        return "-"
    if not seconds:
        return "-"
    name = max(seconds, key=lambda analyzer: (seconds[analyzer], analyzer))
    return f"{name} {seconds[name]:.1f} s"


def _check_baseline(run_dir: Path, config: str) -> str:
    """``tokbench check`` of this code's run against the committed baseline of its config, if any."""
    baseline = Path(__file__).resolve().parents[2] / "results" / "baseline" / f"{_slug(config)}.json"
    if not baseline.is_file() or not run_dir.is_dir():
        return "-"
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.cli", "check", str(run_dir), "--baseline", str(baseline)],
        capture_output=True,
        text=True,
        check=False,
    )
    return "passed" if done.returncode == 0 else "**failed**"


def _slug(config: str) -> str:
    """A config name, or a config file's stem, for folder names."""
    return Path(config).stem if config.endswith(".toml") or "/" in config else config


def _same_results(old: Path, new: Path) -> bool | str:
    """Whether the two runs wrote the same results.csv (``-`` when one has none)."""
    old_csv, new_csv = old / "results.csv", new / "results.csv"
    if not old_csv.is_file() or not new_csv.is_file():
        return "-"
    return old_csv.read_bytes() == new_csv.read_bytes()
