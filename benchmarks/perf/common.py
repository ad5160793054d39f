"""What every suite of ``tokbench bench`` shares: the settings (``BenchOptions``), the run
(``Bench``: texts, child-process measurements, targets, report sections), the targets and the
markdown cells and tables."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.perf.corpus import SEEDS, write_diverse, write_real

SUITES = ("train", "memory", "encode", "count", "sweep", "run", "growth")
#: the families timed against their peers, with the options that make tokbench learn what the peers learn
#: (HF tokenizers and subword-nmt glue ``</w>`` to the last character: char-bpe's ``attached``)
MATCHING_OPTIONS: dict[str, dict[str, str]] = {"byte-bpe": {}, "char-bpe": {"end_of_word": "attached"}}
FAMILIES = tuple(MATCHING_OPTIONS)
PEERS = ("hf", "spm", "tiktoken")
RUN_CONFIGS = ("quick", "paper", "inference")
#: the vocabulary size of the encoding, memory, counting and growth suites and of the headline targets
HEADLINE_VOCAB = 32000
SWEEP_SIZES = (2000, 4000, 8000, 16000, 32000)
#: targets: tokbench / sentencepiece wall time, tokbench / sentencepiece peak RSS, MB of RSS on 1 GB,
#: CLI encode throughput / the tiktoken script's
TIME_TARGET, MEMORY_TARGET, GIGABYTE_TARGET_MB, ENCODE_TARGET = 0.7, 1.2, 2048, 0.8
#: the commit whole runs are compared with by ``--all`` (the code before the speed work on whole runs)
REFERENCE_COMMIT = "10c6ea8"
#: where ``--all`` writes its report
RESULTS_FILE = Path(__file__).with_name("RESULTS.md")
#: targets of whole runs: new cold wall time / the reference commit's, per config
RUN_TARGETS = {"quick": 0.7, "paper": 0.5, "inference": 0.5}
#: long inputs of the encode suite: one word of these sizes (MB), one line of this size (MB)
LONG_WORD_MB, LONG_LINE_MB = (0.25, 1.0), 50.0


@dataclass
class BenchOptions:
    data_root: Path | None
    work_dir: Path
    train_mb: tuple[float, ...] = (20.0, 100.0)
    vocab_sizes: tuple[int, ...] = (HEADLINE_VOCAB,)
    memory_mb: float = 1000.0
    encode_mb: float = 20.0
    growth_mb: tuple[float, ...] = (1, 3, 10, 30, 100)
    suites: tuple[str, ...] = SUITES
    families: tuple[str, ...] = FAMILIES
    peers: tuple[str, ...] = PEERS
    processes: int = field(default_factory=lambda: len(os.sched_getaffinity(0)))
    timeout: float = 3600.0
    results: Path | None = None
    #: seeds of the generated text; every figure is measured on each
    seeds: tuple[int, ...] = SEEDS
    #: also measure on the real text the generated text is built from (UD, FLORES, embedded)
    real_text: bool = True
    #: tokbench and sentencepiece training runs alternate this many times; the fastest counts
    repeats: int = 1
    #: sentencepiece's threads (it trains with threads; tokbench counts on all cores)
    spm_threads: int = 2
    #: a commit to compare whole runs with (built in its own virtualenv), or None
    reference: str | None = None
    run_configs: tuple[str, ...] = RUN_CONFIGS
    #: the long inputs of the encode suite: one word of each size, one line of this size (MB)
    long_word_mb: tuple[float, ...] = LONG_WORD_MB
    long_line_mb: float = LONG_LINE_MB


@dataclass(frozen=True)
class Text:
    """One benchmark text: what it is, where it is."""

    label: str
    path: Path


@dataclass
class Bench:
    """Collects the markdown sections of one run and the figures the targets are judged on."""

    options: BenchOptions
    sections: list[str] = field(default_factory=list)
    growth: list[dict[str, Any]] = field(default_factory=list)
    targets: list[list[str]] = field(default_factory=list)

    def log(self, message: str) -> None:
        print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)

    def corpus(self, megabytes: float, seed: int | None = None) -> Path:
        """The generated text of this size and seed (default: the first seed), written once."""
        seed = self.options.seeds[0] if seed is None else seed
        path = self.options.work_dir / f"diverse-s{seed}-{megabytes:g}MB.txt"
        if not path.exists():
            self.log(f"writing {megabytes:g} MB of diverse text (seed {seed}) to {path}")
        return write_diverse(self.options.data_root, int(megabytes * 1e6), path, seed)

    def texts(self, megabytes: float) -> list[Text]:
        """The generated text of this size for every seed."""
        return [Text(f"seed {seed}, {megabytes:g} MB", self.corpus(megabytes, seed)) for seed in self.options.seeds]

    def real(self) -> Text | None:
        """The real source text (UD, FLORES, embedded corpora), unless left out."""
        if not self.options.real_text:
            return None
        path = write_real(self.options.data_root, self.options.work_dir / "real.txt")
        sources = "UD + FLORES-200 + embedded" if self.options.data_root is not None else "embedded corpora"
        return Text(f"real text ({sources}), {path.stat().st_size / 1e6:.1f} MB", path)

    def measure(self, task: dict[str, Any], env: dict[str, str] | None = None) -> dict[str, Any]:
        """Run one task in a child process; a failure or timeout becomes ``{"error": ...}``."""
        self.log(f"measuring {json.dumps({k: v for k, v in task.items() if k != 'corpus'})}")
        command = [sys.executable, "-m", "benchmarks.perf.child", json.dumps(task)]
        try:
            done = subprocess.run(
                command, capture_output=True, text=True, timeout=self.options.timeout, env={**os.environ, **(env or {})}
            )
        except subprocess.TimeoutExpired:
            return {"error": f"timeout after {self.options.timeout:g} s"}
        if done.returncode != 0:
            lines = (done.stderr or done.stdout).strip().splitlines() or [f"exit status {done.returncode}"]
            result = {"error": lines[-1][:200]}
        else:
            result = json.loads(done.stdout.strip().splitlines()[-1])
        self.log(f"  -> {json.dumps(result)}")
        return result

    def target(self, name: str, measured: str, met: bool | None, note: str = "") -> None:
        status = "not measured" if met is None else "met" if met else "**missed**"
        self.targets.append([name, measured, status, note])


def _fmt(value: Any, digits: int = 2) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


NOT_RUN: dict[str, Any] = {"error": "not run"}


def _ok(*results: dict[str, Any]) -> bool:
    return all("error" not in result for result in results)


def _seconds(result: dict[str, Any]) -> str:
    if result is NOT_RUN:
        return "-"
    return f"error: {result['error']}" if "error" in result else _fmt(result["seconds"])


def _ratio(ours: dict[str, Any], theirs: dict[str, Any], key: str = "seconds") -> float | None:
    return ours[key] / theirs[key] if _ok(ours, theirs) else None


def _peak(result: dict[str, Any]) -> str:
    if "error" in result:
        return "-"
    workers = result.get("workers_peak_mb", 0)
    return f"{result['rss_peak_mb']:.0f}" + (f" (+{workers:.0f} per worker)" if workers > 20 else "")


def _fastest(results: list[dict[str, Any]]) -> dict[str, Any]:
    """The fastest successful run (the least disturbed by other processes), else the first error."""
    good = [result for result in results if _ok(result)]
    return min(good, key=lambda result: result["seconds"]) if good else results[0]


def _all_met(
    name: str, per_text: list[tuple[str, float | None, str]], limit: float, bench: Bench, note: str = ""
) -> None:
    """One target row over every text: met only when measured and met on all of them."""
    measured = "; ".join(f"{label}: {_fmt(ratio)}x ({detail})" for label, ratio, detail in per_text)
    ratios = [ratio for _, ratio, _ in per_text]
    met = None if not ratios or any(ratio is None for ratio in ratios) else all(r <= limit for r in ratios)
    bench.target(name, measured, met, note)


def _table(header: Sequence[str], rows: list[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_fmt(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)
