"""`tokbench bench`: tokbench's training, counting and encoding against HF tokenizers, sentencepiece
and tiktoken, side by side in one run, on diverse text it generates itself (``benchmarks.perf.corpus``).
Every measurement runs in a fresh child process (``benchmarks.perf.child``); the report is markdown,
optionally written to RESULTS.md with a plot of the growth with corpus size.

Suites:

``train``   byte-bpe and char-bpe at each vocabulary size on each training size (20 and 100 MB):
            tokbench, HF ``tokenizers`` BpeTrainer, sentencepiece BPE (wall s, peak RSS), and where
            tokbench's time goes (counting, words, merge kernel) on the largest text
``memory``  ``tokbench train`` (the CLI, streaming its input) on 1 GB: peak RSS against 4 GB
``encode``  ``tokbench encode`` (the CLI, byte-bpe 32k) against a plain script calling tiktoken
            cl100k and writing JSON lines, on the same file; plus in-process encoders (tokbench,
            tiktoken and HF loaded with tokbench's merges), one process and all cores
``count``   pre-token counting on each engine: local 1 thread, local threads, a local Dask cluster
            (``bpe.distributed``), the same counts required of each
``sweep``   byte-bpe at five vocabulary sizes: trained separately, and once with the rest derived
            (``bpe.train_sweep``)
``run``     end-to-end ``tokbench run`` of the quick and paper configs, cold caches
``growth``  byte-bpe 32k training from 1 to 100 MB against HF tokenizers
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
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from benchmarks.perf.corpus import describe, word_types, write_diverse

SUITES = ("train", "memory", "encode", "count", "sweep", "run", "growth")
FAMILIES = ("byte-bpe", "char-bpe")
PEERS = ("hf", "spm", "tiktoken")
RUN_CONFIGS = ("quick", "paper")
#: the vocabulary size of the encoding, memory, counting and growth suites and of the headline targets
HEADLINE_VOCAB = 32000
SWEEP_SIZES = (2000, 4000, 8000, 16000, 32000)
#: targets: tokbench / sentencepiece wall time, tokbench / sentencepiece peak RSS, MB of RSS on 1 GB,
#: CLI encode throughput / the tiktoken script's, paper run seconds
TIME_TARGET, MEMORY_TARGET, GIGABYTE_TARGET_MB, ENCODE_TARGET, PAPER_TARGET_S = 1.0, 1.5, 4096, 0.8, 300


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


@dataclass
class Bench:
    """Collects the markdown sections of one run and the figures the targets are judged on."""

    options: BenchOptions
    sections: list[str] = field(default_factory=list)
    growth: list[dict[str, Any]] = field(default_factory=list)
    targets: list[list[str]] = field(default_factory=list)
    distinct: dict[float, int] = field(default_factory=dict)

    def log(self, message: str) -> None:
        print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)

    def corpus(self, megabytes: float) -> Path:
        path = self.options.work_dir / f"diverse-{megabytes:g}MB.txt"
        if not path.exists():
            self.log(f"writing {megabytes:g} MB of diverse text to {path}")
        return write_diverse(self.options.data_root, int(megabytes * 1e6), path)

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

    def distinct_text(self, megabytes: float) -> str:
        """How diverse the text of this size is, once counted (the train-phases and count suites count it)."""
        distinct = self.distinct.get(megabytes)
        return f"{distinct:,} distinct gpt2 pre-tokens" if distinct is not None else "diverse text"

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


def _table(header: Sequence[str], rows: list[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_fmt(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


# -- suites --------------------------------------------------------------------------------------


def suite_train(bench: Bench) -> None:
    options = bench.options
    for megabytes in options.train_mb:
        corpus = str(bench.corpus(megabytes))
        spm = {}
        if "spm" in options.peers:
            for vocab in options.vocab_sizes:
                spm[vocab] = bench.measure({"task": "train-spm", "corpus": corpus, "vocab_size": vocab})
        rows = []
        for family in options.families:
            for vocab in options.vocab_sizes:
                ours = bench.measure(
                    {"task": "train-tokbench", "family": family, "corpus": corpus, "vocab_size": vocab}
                )
                hf = (
                    bench.measure({"task": "train-hf", "family": family, "corpus": corpus, "vocab_size": vocab})
                    if "hf" in options.peers
                    else NOT_RUN
                )
                theirs = spm.get(vocab, NOT_RUN)
                time_ratio, memory_ratio = _ratio(ours, theirs), _ratio(ours, theirs, "rss_peak_mb")
                rows.append(
                    [
                        family,
                        vocab,
                        _seconds(ours),
                        _seconds(hf),
                        _seconds(theirs),
                        _ratio(ours, hf),
                        time_ratio,
                        _peak(ours),
                        _peak(hf),
                        _peak(theirs),
                        memory_ratio,
                    ]
                )
                if vocab == HEADLINE_VOCAB and megabytes == max(options.train_mb):
                    bench.target(
                        f"{family} {vocab // 1000}k on {megabytes:g} MB: wall time <= {TIME_TARGET}x sentencepiece",
                        f"{_fmt(time_ratio)}x ({_seconds(ours)} s vs {_seconds(theirs)} s)",
                        None if time_ratio is None else time_ratio <= TIME_TARGET,
                    )
                    bench.target(
                        f"{family} {vocab // 1000}k on {megabytes:g} MB: peak RSS <= {MEMORY_TARGET}x sentencepiece",
                        f"{_fmt(memory_ratio)}x ({_peak(ours)} MB vs {_peak(theirs)} MB)",
                        None if memory_ratio is None else memory_ratio <= MEMORY_TARGET,
                    )
        bench.sections.append(
            f"### Training on {megabytes:g} MB of diverse text ({bench.distinct_text(megabytes)})\n\n"
            + _table(
                [
                    "family",
                    "vocab",
                    "tokbench s",
                    "HF s",
                    "spm s",
                    "tokbench / HF",
                    "tokbench / spm",
                    "tokbench peak MB",
                    "HF peak MB",
                    "spm peak MB",
                    "RSS tokbench / spm",
                ],
                rows,
            )
        )
    largest = str(bench.corpus(max(options.train_mb)))
    phases = bench.measure({"task": "train-phases", "corpus": largest, "vocab_size": HEADLINE_VOCAB})
    if _ok(phases):
        bench.distinct[max(options.train_mb)] = phases["pretoken_types"]
        bench.sections.append(
            f"### Where tokbench byte-bpe training time goes ({HEADLINE_VOCAB // 1000}k, "
            f"{max(options.train_mb):g} MB)\n\n"
            + _table(
                ["phase", "seconds"],
                [
                    ["count pre-tokens, 1 thread", phases["count_serial_s"]],
                    [
                        f"count pre-tokens, {options.processes} threads (one reads, the rest count)",
                        phases["count_parallel_s"],
                    ],
                    ["counted pre-tokens -> merge-kernel words", phases["to_words_s"]],
                    ["merge kernel (numba imported beforehand)", phases["kernel_s"]],
                ],
            )
            + f"\n\n{phases['pretokens']:,} pre-tokens, {phases['pretoken_types']:,} distinct, "
            f"{phases['symbols']:,} symbols in the kernel's words, {phases['merges']:,} merges; "
            f"threaded count equals the serial count: {phases['counts_equal']}."
        )


def suite_memory(bench: Bench) -> None:
    options = bench.options
    corpus = bench.corpus(options.memory_mb)
    rows = []
    for family in options.families:
        extra = ["--end-of-word", "attached"] if family == "char-bpe" else []
        argv = [
            sys.executable,
            "-m",
            "benchmarks.cli",
            "train",
            "--kind",
            family,
            "--vocab-size",
            str(HEADLINE_VOCAB),
            "--input",
            str(corpus),
            "--out",
            str(options.work_dir / f"{family}-1GB.json"),
            *extra,
        ]
        result = bench.measure({"task": "command", "argv": argv})
        peak = result.get("command_peak_mb")
        rows.append([family, _seconds(result), _fmt(peak, 0)])
        bench.target(
            f"{family} {HEADLINE_VOCAB // 1000}k on {options.memory_mb:g} MB trains within {GIGABYTE_TARGET_MB} MB",
            f"{_fmt(peak, 0)} MB peak, {_seconds(result)} s",
            None if peak is None else peak <= GIGABYTE_TARGET_MB,
        )
    bench.sections.append(
        f"### `tokbench train` on {options.memory_mb:g} MB of diverse text (the CLI streams its input)\n\n"
        + _table(["family", "wall s", "peak MB"], rows)
    )


ENCODERS = {
    "tokbench": "tokbench byte-bpe",
    "tiktoken-ours": "tiktoken, our merges",
    "hf-ours": "HF tokenizers, our merges",
    "cl100k": "tiktoken cl100k (100k vocab)",
}


def _headline_tokenizer(bench: Bench) -> Path:
    tokenizer = bench.options.work_dir / f"byte-bpe-{HEADLINE_VOCAB}.json"
    if not tokenizer.exists():
        corpus = bench.corpus(bench.options.encode_mb)
        bench.measure(
            {
                "task": "train-tokbench",
                "family": "byte-bpe",
                "corpus": str(corpus),
                "vocab_size": HEADLINE_VOCAB,
                "save": str(tokenizer),
            }
        )
    return tokenizer


def suite_encode(bench: Bench) -> None:
    options = bench.options
    corpus = bench.corpus(options.encode_mb)
    tokenizer = _headline_tokenizer(bench)
    megabytes = corpus.stat().st_size / 1e6
    cli = bench.measure(
        {
            "task": "command",
            "argv": [
                sys.executable,
                "-m",
                "benchmarks.cli",
                "encode",
                "--tokenizer",
                str(tokenizer),
                "--input",
                str(corpus),
                "--out",
                str(options.work_dir / "encoded-tokbench.jsonl"),
            ],
        }
    )
    script = (
        bench.measure(
            {
                "task": "command",
                "argv": [
                    sys.executable,
                    "-m",
                    "benchmarks.perf.encode_tiktoken",
                    str(corpus),
                    str(options.work_dir / "encoded-tiktoken.jsonl"),
                ],
            }
        )
        if "tiktoken" in options.peers
        else NOT_RUN
    )
    speedup = _ratio(script, cli)
    bench.sections.append(
        f"### Encoding {megabytes:.1f} MB from the command line (JSON lines out)\n\n"
        + _table(
            ["command", "wall s", "MB/s", "peak MB"],
            [
                [
                    f"tokbench encode (byte-bpe {HEADLINE_VOCAB // 1000}k)",
                    _seconds(cli),
                    megabytes / cli["seconds"] if _ok(cli) else None,
                    _fmt(cli.get("command_peak_mb"), 0),
                ],
                [
                    "python script: tiktoken cl100k + json.dumps per line",
                    _seconds(script),
                    megabytes / script["seconds"] if _ok(script) else None,
                    _fmt(script.get("command_peak_mb"), 0),
                ],
            ],
        )
        + "\n\nBoth are whole processes (interpreter start, imports and loading the tokenizer included)."
    )
    bench.target(
        f"`tokbench encode` throughput >= {ENCODE_TARGET}x the tiktoken-plus-json script",
        f"{_fmt(speedup)}x ({_seconds(cli)} s vs {_seconds(script)} s)",
        None if speedup is None else speedup >= ENCODE_TARGET,
    )
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
            rows.append(
                [
                    ENCODERS[impl],
                    processes,
                    result.get("first_pass_s"),
                    _seconds(result),
                    megabytes / result["seconds"] if _ok(result) else None,
                    result.get("tokens"),
                    _ratio(reference, result),
                ]
            )
    bench.sections.append(
        f"### Encoding {megabytes:.1f} MB in process, per-line calls (byte-bpe {HEADLINE_VOCAB // 1000}k)\n\n"
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


def suite_count(bench: Bench) -> None:
    options = bench.options
    megabytes = max(options.train_mb)
    corpus = str(bench.corpus(megabytes))
    engines = [("local", 1), ("local", options.processes), ("dask", options.processes)]
    results = [
        (engine, workers, bench.measure({"task": "count-engine", "file": corpus, "engine": engine, "workers": workers}))
        for engine, workers in engines
    ]
    serial = results[0][2]
    rows = []
    for engine, workers, result in results:
        label = (
            f"local, {workers} thread{'s' if workers > 1 else ''}"
            if engine == "local"
            else f"Dask LocalCluster, {workers} worker processes"
        )
        same = _ok(result, serial) and result["digest"] == serial["digest"]
        rows.append(
            [label, _seconds(result), result.get("shards"), result.get("distinct"), same if _ok(result) else "-"]
        )
    bench.sections.append(
        f"### Counting pre-tokens of {megabytes:g} MB (gpt2 pre-tokenizer) on each engine\n\n"
        + _table(["engine", "wall s", "shards", "distinct pre-tokens", "same counts as 1 thread"], rows)
        + "\n\nDask's time includes starting the local cluster and each worker importing numba; on a real "
        "cluster the workers are already running."
    )


def suite_sweep(bench: Bench) -> None:
    corpus = str(bench.corpus(min(bench.options.train_mb)))
    results = {
        mode: bench.measure({"task": "sweep", "mode": mode, "corpus": corpus, "vocab_sizes": list(SWEEP_SIZES)})
        for mode in ("separate", "once")
    }
    sizes = ", ".join(f"{size // 1000}k" for size in SWEEP_SIZES)
    bench.sections.append(
        f"### A vocabulary sweep ({sizes}) of byte-bpe on {min(bench.options.train_mb):g} MB\n\n"
        + _table(
            ["how", "wall s", "peak MB"],
            [
                ["each size trained separately", _seconds(results["separate"]), _peak(results["separate"])],
                [
                    "largest trained once, the rest derived (bpe.train_sweep)",
                    _seconds(results["once"]),
                    _peak(results["once"]),
                ],
            ],
        )
    )


def suite_run(bench: Bench) -> None:
    rows = []
    for config in RUN_CONFIGS:
        run_dir = bench.options.work_dir / f"run-{config}"
        cache = Path(tempfile.mkdtemp(prefix=f"cache-{config}-", dir=bench.options.work_dir))
        argv = ["run", config, "--out", str(run_dir), "--overwrite", "--quiet", "--jobs", str(bench.options.processes)]
        if bench.options.data_root is not None:
            argv += ["--data-dir", str(bench.options.data_root)]
        shutil.rmtree(run_dir, ignore_errors=True)
        result = bench.measure({"task": "cli", "argv": argv}, env={"TOKBENCH_CACHE": str(cache)})
        shutil.rmtree(cache, ignore_errors=True)
        rows.append([f"tokbench run {config}", _seconds(result), _peak(result)])
        if config == "paper":
            bench.target(
                f"`tokbench run paper` <= {PAPER_TARGET_S} s on 2 idle cores",
                f"{_seconds(result)} s",
                None if not _ok(result) else result["seconds"] <= PAPER_TARGET_S,
                "cold caches: corpus loading, silver analyses, training, evaluation and report",
            )
    bench.sections.append(
        "### End to end: `tokbench run` (cold caches, report included)\n\n"
        + _table(["command", "wall s", "peak MB"], rows)
    )


def suite_growth(bench: Bench) -> None:
    options = bench.options
    rows = []
    for megabytes in options.growth_mb:
        corpus = str(bench.corpus(megabytes))
        task = {"family": "byte-bpe", "corpus": corpus, "vocab_size": HEADLINE_VOCAB}
        ours = bench.measure({"task": "train-tokbench", **task})
        hf = bench.measure({"task": "train-hf", **task}) if "hf" in options.peers else NOT_RUN
        bench.growth.append({"mb": megabytes, "tokbench": ours, "hf": hf})
        rows.append([megabytes, _seconds(ours), _peak(ours), _seconds(hf), _peak(hf), _ratio(ours, hf)])
    bench.sections.append(
        f"### Growth: byte-bpe {HEADLINE_VOCAB // 1000}k from {options.growth_mb[0]:g} to "
        f"{options.growth_mb[-1]:g} MB of diverse text\n\n"
        + _table(["MB", "tokbench s", "tokbench peak MB", "HF s", "HF peak MB", "tokbench / HF"], rows)
    )


SUITE_FUNCTIONS: dict[str, Callable[[Bench], None]] = {
    "train": suite_train,
    "memory": suite_memory,
    "encode": suite_encode,
    "count": suite_count,
    "sweep": suite_sweep,
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
    packages = []
    for name in ("numba", "numpy", "regex", "tokenizers", "sentencepiece", "tiktoken", "distributed"):
        try:
            packages.append(f"{name} {version(name)}")
        except PackageNotFoundError:
            packages.append(f"{name} (not installed)")
    return (
        f"{os.cpu_count()} cores ({len(os.sched_getaffinity(0))} usable), {cpu}, {memory_kb / 2**20:.1f} GiB RAM; "
        f"Python {platform.python_version()}, {', '.join(packages)}"
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
    figure.suptitle(f"byte-bpe {HEADLINE_VOCAB // 1000}k training on diverse text: growth with corpus size")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def run_bench(options: BenchOptions) -> str:
    """Run the selected suites; return the markdown report (also written to ``options.results``)."""
    options.work_dir.mkdir(parents=True, exist_ok=True)
    bench = Bench(options)
    load_before = os.getloadavg()
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    inventory = word_types(options.data_root)
    for suite in options.suites:
        SUITE_FUNCTIONS[suite](bench)
    load_after = os.getloadavg()
    skipped = [suite for suite in SUITES if suite not in options.suites]
    header = [
        "# Performance figures (generated by `tokbench bench`)",
        "",
        f"Run {started}. Machine: {machine()}. Load average (1/5/15 min) before: "
        f"{' '.join(f'{x:.1f}' for x in load_before)}, after: {' '.join(f'{x:.1f}' for x in load_after)} "
        "(other processes running at the same time slow every implementation down: compare ratios within "
        "this run, not absolute times across runs).",
        "",
        "Text: diverse Turkish/Russian/Korean/English, a deterministic Zipf mix of "
        f"{sum(len(i.types) for i in inventory):,} word types ({describe(inventory)}), built from "
        + ("the data root's UD sentences and " if options.data_root is not None else "")
        + "the embedded package corpora; see benchmarks/perf/corpus.py and benchmarks/perf/README.md.",
        "",
        f"Suites run: {', '.join(options.suites)} (not run: {', '.join(skipped) or 'none'}).",
        "",
        "## Targets",
        "",
        _table(["target", "measured in this run", "status", "note"], bench.targets)
        if bench.targets
        else "(none measured)",
    ]
    report = "\n".join(header) + "\n\n" + "\n\n".join(bench.sections) + "\n"
    if options.results is not None:
        options.results.parent.mkdir(parents=True, exist_ok=True)
        if bench.growth:
            plot_growth(bench.growth, options.results.with_name("growth.png"))
            report += "\n![growth](growth.png)\n"
        options.results.write_text(report, encoding="utf-8")
    return report
