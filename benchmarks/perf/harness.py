"""`tokbench bench`: every performance measurement in one run, on the same text, each in a fresh child
process (``benchmarks.perf.child``), printed as markdown tables and optionally written to RESULTS.md
with a plot of the growth from 1 MB to 100 MB.

Suites: ``train`` (tokbench byte-bpe / char-bpe against HF tokenizers' BpeTrainer and sentencepiece
BPE at each vocabulary size, plus where tokbench's time goes), ``encode`` (MB/s against tiktoken and
HF, one process and all cores), ``run`` (end-to-end ``tokbench run`` of the quick and paper configs,
cold caches), ``growth`` (byte-bpe at 32k from 1 MB to 100 MB against HF).
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any

from benchmarks.perf.corpus import describe, source_texts, write_mixed

SUITES = ("train", "encode", "run", "growth")
FAMILIES = ("byte-bpe", "char-bpe")
PEERS = ("hf", "spm", "tiktoken")
RUN_CONFIGS = ("quick", "paper")
#: the vocabulary size of the encoding and growth suites and of the headline training target
HEADLINE_VOCAB = 32000
TARGETS = (
    "training <= 1.0x HF at 32k on the mixed corpus; encoding >= 0.5x tiktoken; peak memory <= 2 GB training on 100 MB"
)


@dataclass
class BenchOptions:
    data_root: Path
    work_dir: Path
    size_mb: float = 20.0
    vocab_sizes: tuple[int, ...] = (8000, 32000, 64000)
    growth_mb: tuple[float, ...] = (1, 3, 10, 30, 100)
    suites: tuple[str, ...] = SUITES
    families: tuple[str, ...] = FAMILIES
    peers: tuple[str, ...] = PEERS
    processes: int = field(default_factory=lambda: len(os.sched_getaffinity(0)))
    timeout: float = 3600.0
    results: Path | None = None


@dataclass
class Bench:
    """Collects the markdown sections of one run; ``log`` prints progress to stderr."""

    options: BenchOptions
    sections: list[str] = field(default_factory=list)
    growth: list[dict[str, Any]] = field(default_factory=list)

    def log(self, message: str) -> None:
        print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)

    def corpus(self, megabytes: float) -> Path:
        path = self.options.work_dir / f"mixed-{megabytes:g}MB.txt"
        return write_mixed(self.options.data_root, int(megabytes * 1e6), path)

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


def _fmt(value: Any, digits: int = 2) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


NOT_RUN: dict[str, Any] = {"error": "not run"}


def _seconds(result: dict[str, Any]) -> str:
    if result is NOT_RUN:
        return "-"
    return f"error: {result['error']}" if "error" in result else _fmt(result["seconds"])


def _ratio(ours: dict[str, Any], theirs: dict[str, Any]) -> float | None:
    if "error" in ours or "error" in theirs:
        return None
    return ours["seconds"] / theirs["seconds"]


def _peak(result: dict[str, Any]) -> str:
    if "error" in result:
        return "-"
    workers = result.get("workers_peak_mb", 0)
    return f"{result['rss_peak_mb']:.0f}" + (f" (+{workers:.0f} per worker)" if workers > 20 else "")


def _table(header: Sequence[str], rows: list[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_fmt(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


# -- suites --------------------------------------------------------------------------------------


def suite_train(bench: Bench) -> None:
    options = bench.options
    corpus = str(bench.corpus(options.size_mb))
    spm = {}
    if "spm" in options.peers:
        for vocab in options.vocab_sizes:
            spm[vocab] = bench.measure({"task": "train-spm", "corpus": corpus, "vocab_size": vocab})
    for family in options.families:
        rows = []
        for vocab in options.vocab_sizes:
            save = str(options.work_dir / f"{family}-{vocab}.json")
            ours = bench.measure(
                {"task": "train-tokbench", "family": family, "corpus": corpus, "vocab_size": vocab, "save": save}
            )
            hf = (
                bench.measure({"task": "train-hf", "family": family, "corpus": corpus, "vocab_size": vocab})
                if "hf" in options.peers
                else NOT_RUN
            )
            theirs = spm.get(vocab, NOT_RUN)
            rows.append(
                [
                    vocab,
                    _seconds(ours),
                    _seconds(hf),
                    _ratio(ours, hf),
                    _seconds(theirs),
                    _ratio(ours, theirs),
                    _peak(ours),
                    _peak(hf),
                    _peak(theirs),
                ]
            )
        bench.sections.append(
            f"### Training {family} ({options.size_mb:g} MB mixed text)\n\n"
            + _table(
                [
                    "vocab",
                    "tokbench s",
                    "HF s",
                    "tokbench / HF",
                    "sentencepiece s",
                    "tokbench / spm",
                    "tokbench peak MB",
                    "HF peak MB",
                    "spm peak MB",
                ],
                rows,
            )
        )
    phases = bench.measure({"task": "train-phases", "corpus": corpus, "vocab_size": HEADLINE_VOCAB})
    if "error" not in phases:
        bench.sections.append(
            f"### Where tokbench byte-bpe training time goes ({HEADLINE_VOCAB // 1000}k)\n\n"
            + _table(
                ["phase", "seconds"],
                [
                    ["count pre-tokens, 1 process", phases["count_serial_s"]],
                    [f"count pre-tokens, {options.processes} processes", phases["count_parallel_s"]],
                    ["pre-tokens -> byte-id words (Python)", phases["to_words_s"]],
                    ["merge kernel: arrays + merges (numba import excluded)", phases["kernel_s"]],
                ],
            )
            + f"\n\n{phases['pretoken_types']:,} distinct pre-tokens, {phases['symbols']:,} symbols, "
            f"{phases['merges']:,} merges; parallel count equals serial count: {phases['counts_equal']}."
        )


ENCODERS = {
    "tokbench": "tokbench byte-bpe",
    "tiktoken-ours": "tiktoken, our merges",
    "hf-ours": "HF tokenizers, our merges",
    "cl100k": "tiktoken cl100k (100k vocab)",
}


def suite_encode(bench: Bench) -> None:
    options = bench.options
    corpus = bench.corpus(options.size_mb)
    tokenizer = options.work_dir / f"byte-bpe-{HEADLINE_VOCAB}.json"
    if not tokenizer.exists():
        bench.measure(
            {
                "task": "train-tokbench",
                "family": "byte-bpe",
                "corpus": str(corpus),
                "vocab_size": HEADLINE_VOCAB,
                "save": str(tokenizer),
            }
        )
    megabytes = corpus.stat().st_size / 1e6
    impls = ["tokbench"] + [
        i for i in ("tiktoken-ours", "hf-ours", "cl100k") if ("hf" if i == "hf-ours" else "tiktoken") in options.peers
    ]
    rows = []
    for processes in sorted({1, options.processes}):
        results = {
            impl: bench.measure(
                {
                    "task": "encode",
                    "impl": impl,
                    "corpus": str(corpus),
                    "tokenizer": str(tokenizer),
                    "processes": processes,
                }
            )
            for impl in impls
        }
        reference = results.get("tiktoken-ours", NOT_RUN)
        for impl, result in results.items():
            speed = None if "error" in result else megabytes / result["seconds"]
            ratio = None if "error" in result or "error" in reference else reference["seconds"] / result["seconds"]
            rows.append(
                [
                    ENCODERS[impl],
                    processes,
                    result.get("first_pass_s"),
                    _seconds(result),
                    speed,
                    result.get("tokens"),
                    ratio,
                ]
            )
    bench.sections.append(
        f"### Encoding {megabytes:.1f} MB with byte-bpe {HEADLINE_VOCAB // 1000}k\n\n"
        + _table(
            [
                "implementation",
                "processes",
                "first pass s",
                "warm s",
                "MB/s (warm)",
                "tokens",
                "throughput / tiktoken (our merges)",
            ],
            rows,
        )
    )


def suite_run(bench: Bench) -> None:
    rows = []
    for config in RUN_CONFIGS:
        run_dir = bench.options.work_dir / f"run-{config}"
        cache = Path(tempfile.mkdtemp(prefix=f"cache-{config}-", dir=bench.options.work_dir))
        argv = [
            "run",
            config,
            "--data-dir",
            str(bench.options.data_root),
            "--out",
            str(run_dir),
            "--overwrite",
            "--quiet",
            "--jobs",
            str(bench.options.processes),
        ]
        shutil.rmtree(run_dir, ignore_errors=True)
        result = bench.measure({"task": "cli", "argv": argv, "corpus": os.devnull}, env={"TOKBENCH_CACHE": str(cache)})
        shutil.rmtree(cache, ignore_errors=True)
        rows.append([f"tokbench run {config}", _seconds(result), _peak(result)])
    bench.sections.append(
        "### End to end: `tokbench run` (cold caches, report included)\n\n"
        + _table(["command", "wall s", "peak MB"], rows)
    )


def suite_growth(bench: Bench) -> None:
    options = bench.options
    rows = []
    for megabytes in options.growth_mb:
        corpus = str(bench.corpus(megabytes))
        ours = bench.measure(
            {"task": "train-tokbench", "family": "byte-bpe", "corpus": corpus, "vocab_size": HEADLINE_VOCAB}
        )
        hf = (
            bench.measure({"task": "train-hf", "family": "byte-bpe", "corpus": corpus, "vocab_size": HEADLINE_VOCAB})
            if "hf" in options.peers
            else NOT_RUN
        )
        bench.growth.append({"mb": megabytes, "tokbench": ours, "hf": hf})
        rows.append([megabytes, _seconds(ours), _peak(ours), _seconds(hf), _peak(hf), _ratio(ours, hf)])
    bench.sections.append(
        f"### Growth: byte-bpe {HEADLINE_VOCAB // 1000}k from {options.growth_mb[0]:g} to "
        f"{options.growth_mb[-1]:g} MB\n\n"
        + _table(["MB", "tokbench s", "tokbench peak MB", "HF s", "HF peak MB", "tokbench / HF"], rows)
    )


SUITE_FUNCTIONS: dict[str, Callable[[Bench], None]] = {
    "train": suite_train,
    "encode": suite_encode,
    "run": suite_run,
    "growth": suite_growth,
}


# -- the report ----------------------------------------------------------------------------------


def machine() -> str:
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor() or "unknown",
    )
    memory_kb = next(
        int(line.split()[1]) for line in Path("/proc/meminfo").read_text().splitlines() if line.startswith("MemTotal")
    )
    packages = ", ".join(
        f"{name} {version(name)}" for name in ("numba", "numpy", "regex", "tokenizers", "sentencepiece", "tiktoken")
    )
    return (
        f"{os.cpu_count()} cores ({len(os.sched_getaffinity(0))} usable), {cpu}, {memory_kb / 2**20:.1f} GiB RAM; "
        f"Python {platform.python_version()}, {packages}"
    )


def plot_growth(rows: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (time_axis, memory_axis) = plt.subplots(1, 2, figsize=(10, 4))
    for key, label in (("tokbench", "tokbench byte-bpe"), ("hf", "HF tokenizers")):
        points = [(row["mb"], row[key]) for row in rows if "error" not in row[key]]
        if points:
            sizes = [mb for mb, _ in points]
            time_axis.plot(sizes, [r["seconds"] for _, r in points], marker="o", label=label)
            memory_axis.plot(sizes, [r["rss_peak_mb"] for _, r in points], marker="o", label=label)
    for axis, ylabel in ((time_axis, "training wall time (s)"), (memory_axis, "peak RSS of the process (MB)")):
        axis.set_xscale("log")
        axis.set_yscale("log")
        axis.set_xlabel("training text (MB)")
        axis.set_ylabel(ylabel)
        axis.grid(True, which="both", alpha=0.3)
        axis.legend()
    figure.suptitle(f"byte-bpe {HEADLINE_VOCAB // 1000}k training: growth with corpus size")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def run_bench(options: BenchOptions) -> str:
    """Run the selected suites; return the markdown report (also written to ``options.results``)."""
    options.work_dir.mkdir(parents=True, exist_ok=True)
    bench = Bench(options)
    load_before = os.getloadavg()
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    sources = source_texts(options.data_root)
    for suite in options.suites:
        SUITE_FUNCTIONS[suite](bench)
    load_after = os.getloadavg()
    header = [
        "# Performance figures (generated by `tokbench bench`)",
        "",
        f"Run {started}. Machine: {machine()}. Load average (1/5/15 min) before: "
        f"{' '.join(f'{x:.1f}' for x in load_before)}, after: {' '.join(f'{x:.1f}' for x in load_after)} "
        "(other processes running at the same time slow every implementation down).",
        "",
        f"Text: {options.size_mb:g} MB of mixed Turkish/Russian/Korean/English, equal byte shares, built from every "
        "UD `# text =` sentence of the data root plus each language's embedded package corpus, cycled to its "
        f"share ({describe(sources, int(options.size_mb * 1e6))}). Repetition inflates pre-token counts, not "
        "types; see benchmarks/perf/README.md for the method.",
        "",
        f"Targets: {TARGETS}.",
    ]
    report = "\n".join(header) + "\n\n" + "\n\n".join(bench.sections) + "\n"
    if options.results is not None:
        options.results.parent.mkdir(parents=True, exist_ok=True)
        if bench.growth:
            plot_growth(bench.growth, options.results.with_name("growth.png"))
            report += "\n![growth](growth.png)\n"
        options.results.write_text(report, encoding="utf-8")
    return report
