"""`tokbench bench`: tokbench's training, counting and encoding against HF tokenizers, sentencepiece
and tiktoken, side by side in one run, on diverse text it generates itself from each of ``seeds``
(``benchmarks.perf.corpus``) and on the real text it is built from.  A target is met only when it is
met on every text.  Every measurement runs in a fresh child process (``benchmarks.perf.child``); the
report is markdown, optionally written to RESULTS.md with a plot of the growth with corpus size.

Suites:

``train``   byte-bpe and char-bpe at each vocabulary size on each training size (20 and 100 MB) of
            each seed and on the real text: tokbench, HF ``tokenizers`` BpeTrainer, sentencepiece BPE
            (wall s, peak RSS; tokbench and sentencepiece alternate ``repeats`` times, the fastest
            run counts), and where the time goes (tokbench's steps; sentencepiece's phases from its
            log) on the largest texts
``memory``  ``tokbench train`` (the CLI, streaming its input) on 1 GB of each seed: peak RSS
``encode``  ``tokbench encode`` (the CLI, byte-bpe 32k) against a plain script calling tiktoken
            cl100k and writing JSON lines, on the same file; plus in-process encoders (tokbench,
            tiktoken and HF loaded with tokbench's merges), one process and all cores; plus long
            inputs: one word of 0.25 and 1 MB, one line of 50 MB
``count``   pre-token counting on each engine: local 1 thread, local threads, a local Dask cluster
            (``bpe.distributed``), the same counts required of each
``sweep``   byte-bpe at five vocabulary sizes: trained separately, and once with the rest derived
            (``bpe.train_sweep``)
``run``     end-to-end ``tokbench run`` of the quick, paper and inference configs, cold caches;
            with ``reference`` (a commit), that commit is built in its own virtualenv
            (``benchmarks.perf.reference``) and old and new runs alternate, each cold
``growth``  byte-bpe 32k training from 1 to 100 MB against HF tokenizers (first seed)
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from benchmarks.perf.corpus import SEEDS, describe, word_types, write_diverse, write_real

SUITES = ("train", "memory", "encode", "count", "sweep", "run", "growth")
FAMILIES = ("byte-bpe", "char-bpe")
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


# -- suites --------------------------------------------------------------------------------------


TOKBENCH_PHASES = (
    ("import numba and the cached kernels", "import_s"),
    ("count pre-tokens (all cores, as `bpe.train`)", "count_s"),
    ("counted pre-tokens -> merge-kernel words", "to_words_s"),
    ("merge kernel", "kernel_s"),
    ("build the tokenizer, write its file (`tokbench train` writes; `bpe.train` does not)", "build_write_s"),
)


def suite_train(bench: Bench) -> None:
    options = bench.options
    real = bench.real()
    headline = [*bench.texts(max(options.train_mb)), *([real] if real else [])]
    smaller = [megabytes for megabytes in options.train_mb if megabytes != max(options.train_mb)]
    texts = [text for megabytes in smaller for text in bench.texts(megabytes)] + headline
    per_family: dict[str, dict[str, list[tuple[str, float | None, str]]]] = {
        family: {"time": [], "memory": []} for family in options.families
    }
    rows = []
    for text in texts:
        corpus = str(text.path)
        for vocab in options.vocab_sizes:
            # sentencepiece and tokbench alternate, so a change of load hits both alike
            runs: dict[str, list[dict[str, Any]]] = {"spm": [], **{family: [] for family in options.families}}
            for _ in range(options.repeats):
                if "spm" in options.peers:
                    runs["spm"].append(
                        bench.measure(
                            {"task": "train-spm", "corpus": corpus, "vocab_size": vocab, "threads": options.spm_threads}
                        )
                    )
                for family in options.families:
                    runs[family].append(
                        bench.measure(
                            {"task": "train-tokbench", "family": family, "corpus": corpus, "vocab_size": vocab}
                        )
                    )
            theirs = _fastest(runs["spm"]) if runs["spm"] else NOT_RUN
            for family in options.families:
                ours = _fastest(runs[family])
                hf = (
                    bench.measure({"task": "train-hf", "family": family, "corpus": corpus, "vocab_size": vocab})
                    if "hf" in options.peers
                    else NOT_RUN
                )
                time_ratio, memory_ratio = _ratio(ours, theirs), _ratio(ours, theirs, "rss_peak_mb")
                rows.append(
                    [
                        text.label,
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
                if vocab == HEADLINE_VOCAB and text in headline:
                    per_family[family]["time"].append(
                        (text.label, time_ratio, f"{_seconds(ours)} s vs {_seconds(theirs)} s")
                    )
                    per_family[family]["memory"].append(
                        (text.label, memory_ratio, f"{_peak(ours)} MB vs {_peak(theirs)} MB")
                    )
    for family, ratios in per_family.items():
        where = f"{family} {HEADLINE_VOCAB // 1000}k on {max(options.train_mb):g} MB of each seed and the real text"
        _all_met(f"{where}: wall time <= {TIME_TARGET}x sentencepiece", ratios["time"], TIME_TARGET, bench)
        _all_met(f"{where}: peak RSS <= {MEMORY_TARGET}x sentencepiece", ratios["memory"], MEMORY_TARGET, bench)
    repeats = f"; tokbench and sentencepiece alternated {options.repeats} times, the fastest run of each shown" * (
        options.repeats > 1
    )
    bench.sections.append(
        f"### Training (sentencepiece BPE on {options.spm_threads} threads{repeats})\n\n"
        + _table(
            [
                "text",
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
    for text in headline:
        suite_phases(bench, text)


def suite_phases(bench: Bench, text: Text) -> None:
    """Where the training time goes on one text: tokbench's steps per family beside sentencepiece's phases."""
    options = bench.options
    corpus = str(text.path)
    phases = {
        family: bench.measure(
            {"task": "train-phases", "family": family, "corpus": corpus, "vocab_size": HEADLINE_VOCAB}
        )
        for family in options.families
    }
    rows = [[label, *(_fmt(phases[family].get(key)) for family in options.families)] for label, key in TOKBENCH_PHASES]
    rows.append(
        ["sum", *(_fmt(sum(phases[family].get(key, 0.0) for _, key in TOKBENCH_PHASES)) for family in options.families)]
    )
    rows.append(
        [
            "(count pre-tokens in 1 thread, for comparison)",
            *(_fmt(phases[f].get("count_serial_s")) for f in options.families),
        ]
    )
    facts = []
    for family in options.families:
        result = phases[family]
        if not _ok(result):
            facts.append(f"{family}: error: {result['error']}")
            continue
        facts.append(
            f"{family}: {result['pretokens']:,} pre-tokens, {result['pretoken_types']:,} distinct, "
            f"{result['symbols']:,} symbols in the kernel's words, {result['merges']:,} merges, "
            f"the 1-thread count equals the all-core count: {result['counts_equal']}"
        )
    section = (
        f"### Where training time goes ({HEADLINE_VOCAB // 1000}k, {text.label})\n\n"
        + _table(["tokbench step", *(f"{family} s" for family in options.families)], rows)
        + "\n\n"
        + "; ".join(facts)
        + "."
    )
    if "spm" in options.peers:
        spm = bench.measure(
            {"task": "train-spm-phases", "corpus": corpus, "vocab_size": HEADLINE_VOCAB, "threads": options.spm_threads}
        )
        if _ok(spm):
            spm_rows = [[name, seconds] for name, seconds in spm["phases"].items()] + [["total", spm["seconds"]]]
            section += (
                f"\n\nsentencepiece BPE ({options.spm_threads} threads), from the timestamps of its log lines:\n\n"
                + _table(["sentencepiece phase", "s"], spm_rows)
            )
        else:
            section += f"\n\nsentencepiece phases: error: {spm['error']}"
    bench.sections.append(section)


def suite_memory(bench: Bench) -> None:
    options = bench.options
    rows = []
    per_family: dict[str, list[tuple[str, float | None, str]]] = {family: [] for family in options.families}
    for text in bench.texts(options.memory_mb):
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
                str(text.path),
                "--out",
                str(options.work_dir / f"{family}-memory.json"),
                *extra,
            ]
            result = bench.measure({"task": "command", "argv": argv})
            peak = result.get("command_peak_mb")
            rows.append([text.label, family, _seconds(result), _fmt(peak, 0)])
            per_family[family].append(
                (
                    text.label,
                    None if peak is None else peak / GIGABYTE_TARGET_MB,
                    f"{_fmt(peak, 0)} MB, {_seconds(result)} s",
                )
            )
    for family, per_text in per_family.items():
        _all_met(
            f"{family} {HEADLINE_VOCAB // 1000}k on {options.memory_mb:g} MB of each seed trains within "
            f"{GIGABYTE_TARGET_MB} MB",
            per_text,
            1.0,
            bench,
            "ratio: peak / the limit",
        )
    bench.sections.append(
        f"### `tokbench train` on {options.memory_mb:g} MB of diverse text (the CLI streams its input)\n\n"
        + _table(["text", "family", "wall s", "peak MB"], rows)
    )


ENCODERS = {
    "tokbench": "tokbench byte-bpe",
    "tiktoken-ours": "tiktoken, our merges",
    "hf-ours": "HF tokenizers, our merges",
    "cl100k": "tiktoken cl100k (100k vocab)",
}


def _headline_tokenizer(bench: Bench, text: Text) -> Path:
    """byte-bpe 32k trained on ``text`` (once; saved in the work folder)."""
    tokenizer = bench.options.work_dir / f"byte-bpe-{HEADLINE_VOCAB}-{text.path.stem}.json"
    if not tokenizer.exists():
        bench.measure(
            {
                "task": "train-tokbench",
                "family": "byte-bpe",
                "corpus": str(text.path),
                "vocab_size": HEADLINE_VOCAB,
                "save": str(tokenizer),
            }
        )
    return tokenizer


def suite_encode(bench: Bench) -> None:
    options = bench.options
    speedups: list[tuple[str, float | None, str]] = []
    for text in bench.texts(options.encode_mb):
        _encode_text(bench, text, speedups)
    bench.target(
        f"`tokbench encode` throughput >= {ENCODE_TARGET}x the tiktoken-plus-json script on each seed",
        "; ".join(f"{label}: {_fmt(ratio)}x ({detail})" for label, ratio, detail in speedups),
        None if any(ratio is None for _, ratio, _ in speedups) else all(r >= ENCODE_TARGET for _, r, _ in speedups),
    )
    _long_inputs(bench)


def _encode_text(bench: Bench, text: Text, speedups: list[tuple[str, float | None, str]]) -> None:
    options = bench.options
    corpus = text.path
    tokenizer = _headline_tokenizer(bench, text)
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
    speedups.append((text.label, _ratio(script, cli), f"{_seconds(cli)} s vs {_seconds(script)} s"))
    bench.sections.append(
        f"### Encoding {megabytes:.1f} MB from the command line (JSON lines out; {text.label})\n\n"
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
        f"### Encoding {megabytes:.1f} MB in process, per-line calls (byte-bpe {HEADLINE_VOCAB // 1000}k; "
        f"{text.label})\n\n"
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


def _long_inputs(bench: Bench) -> None:
    """One word of each ``LONG_WORD_MB`` (the letters of the diverse text, nothing between them) and
    one line of ``LONG_LINE_MB`` (the diverse text with its line ends made spaces), each encoded by one
    call of tokbench, tiktoken and HF with the same byte-bpe 32k vocabulary."""
    options = bench.options
    text = bench.texts(options.encode_mb)[0]
    tokenizer = _headline_tokenizer(bench, text)
    line_mb = options.long_line_mb
    source = str(bench.corpus(max(line_mb, 2 * max(options.long_word_mb))))  # letters are most of the text
    inputs = [(f"one word of {size:g} MB", "word", size, source) for size in options.long_word_mb]
    inputs.append((f"one line of {line_mb:g} MB", "line", line_mb, source))
    impls = ["tokbench"] + [
        i for i in ("tiktoken-ours", "hf-ours") if ("hf" if i == "hf-ours" else "tiktoken") in options.peers
    ]
    rows = []
    for label, shape, size, source in inputs:
        results = {
            impl: bench.measure(
                {
                    "task": "encode-long",
                    "impl": impl,
                    "shape": shape,
                    "megabytes": size,
                    "source": source,
                    "tokenizer": str(tokenizer),
                }
            )
            for impl in impls
        }
        digests = {result.get("digest") for result in results.values() if _ok(result)}
        for impl, result in results.items():
            rows.append(
                [
                    label,
                    ENCODERS[impl],
                    _seconds(result),
                    size / result["seconds"] if _ok(result) else None,
                    result.get("tokens"),
                    len(digests) == 1 if _ok(result) else "-",
                    _peak(result),
                ]
            )
    bench.sections.append(
        f"### Encoding long inputs in one call (byte-bpe {HEADLINE_VOCAB // 1000}k trained on {text.label}; "
        f"inputs cut from seed {options.seeds[0]})\n\n"
        + _table(["input", "implementation", "s", "MB/s", "tokens", "same ids as the others", "peak MB"], rows)
        + "\n\nThe word is the letters of the diverse text in order with nothing between them (one pre-token);"
        " a time that grows in proportion to the size (MB/s steady) is linear or n log n encoding."
    )


def suite_count(bench: Bench) -> None:
    options = bench.options
    for text in bench.texts(max(options.train_mb)):
        _count_text(bench, text)


def _count_text(bench: Bench, text: Text) -> None:
    options = bench.options
    corpus = str(text.path)
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
        f"### Counting pre-tokens (gpt2 pre-tokenizer) on each engine ({text.label})\n\n"
        + _table(["engine", "wall s", "shards", "distinct pre-tokens", "same counts as 1 thread"], rows)
        + "\n\nDask's time includes starting the local cluster and each worker importing numba; on a real "
        "cluster the workers are already running."
    )


def suite_sweep(bench: Bench) -> None:
    sizes = ", ".join(f"{size // 1000}k" for size in SWEEP_SIZES)
    rows = []
    for text in bench.texts(min(bench.options.train_mb)):
        results = {
            mode: bench.measure(
                {"task": "sweep", "mode": mode, "corpus": str(text.path), "vocab_sizes": list(SWEEP_SIZES)}
            )
            for mode in ("separate", "once")
        }
        rows += [
            [text.label, "each size trained separately", _seconds(results["separate"]), _peak(results["separate"])],
            [
                text.label,
                "largest trained once, the rest derived (bpe.train_sweep)",
                _seconds(results["once"]),
                _peak(results["once"]),
            ],
        ]
    bench.sections.append(
        f"### A vocabulary sweep ({sizes}) of byte-bpe\n\n" + _table(["text", "how", "wall s", "peak MB"], rows)
    )


def suite_run(bench: Bench) -> None:
    """Cold end-to-end runs; with a reference commit, old and new alternate (``benchmarks.perf.reference``)."""
    from benchmarks.perf.reference import compare_runs

    options = bench.options
    rows, targets = compare_runs(bench, options.run_configs, options.reference, options.repeats)
    header = ["config", "this code s", "peak MB", "`tokbench check` vs the baseline"]
    if options.reference is not None:
        header += [f"reference {options.reference} s", "this / reference", "same results.csv"]
        for config, ratio, detail in targets:
            limit = RUN_TARGETS.get(config)
            if limit is not None:
                _all_met(
                    f"cold `tokbench run {config}` <= {limit}x the reference commit's wall time",
                    [(config, ratio, detail)],
                    limit,
                    bench,
                    "same machine, old and new alternating",
                )
    bench.sections.append("### End to end: `tokbench run` (cold caches, report included)\n\n" + _table(header, rows))


def suite_growth(bench: Bench) -> None:
    options = bench.options
    rows = []
    for megabytes in options.growth_mb:
        corpus = str(bench.corpus(megabytes))  # the first seed only: growth is a curve, not a target
        task = {"family": "byte-bpe", "corpus": corpus, "vocab_size": HEADLINE_VOCAB}
        ours = bench.measure({"task": "train-tokbench", **task})
        hf = bench.measure({"task": "train-hf", **task}) if "hf" in options.peers else NOT_RUN
        bench.growth.append({"mb": megabytes, "tokbench": ours, "hf": hf})
        rows.append([megabytes, _seconds(ours), _peak(ours), _seconds(hf), _peak(hf), _ratio(ours, hf)])
    bench.sections.append(
        f"### Growth: byte-bpe {HEADLINE_VOCAB // 1000}k from {options.growth_mb[0]:g} to "
        f"{options.growth_mb[-1]:g} MB of diverse text (seed {options.seeds[0]})\n\n"
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


#: load average above which the report says the machine was shared (2 cores: one busy process each)
BUSY_LOAD = 0.5


def _load(values: tuple[float, float, float]) -> str:
    return " ".join(f"{x:.1f}" for x in values)


def _settings(options: BenchOptions, all_mode: bool) -> str:
    """The command that regenerates this report and the settings it ran with (no local paths)."""
    data = " --data-dir DATA_ROOT" if options.data_root is not None else ""
    command = f"tokbench bench --all{data}" if all_mode else f"tokbench bench{data} ..."
    return (
        f"`{command}`; seeds {', '.join(map(str, options.seeds))}; training on "
        f"{', '.join(f'{mb:g}' for mb in options.train_mb)} MB; {options.repeats} alternating repeat(s), the "
        f"fastest counted; sentencepiece on {options.spm_threads} threads; reference commit for whole runs: "
        f"{options.reference or 'none'}"
    )


def run_bench(options: BenchOptions, all_mode: bool = False) -> str:
    """Run the selected suites; return the markdown report (also written to ``options.results``)."""
    options.work_dir.mkdir(parents=True, exist_ok=True)
    bench = Bench(options)
    load_before = os.getloadavg()
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    inventories = {seed: word_types(options.data_root, seed) for seed in options.seeds}
    for suite in options.suites:
        SUITE_FUNCTIONS[suite](bench)
    load_after = os.getloadavg()
    skipped = [suite for suite in SUITES if suite not in options.suites]
    shared = load_before[0] > BUSY_LOAD or load_after[2] > BUSY_LOAD + len(os.sched_getaffinity(0))
    sources = "the data root's UD sentences and FLORES-200 lines and " if options.data_root is not None else ""
    texts = "; ".join(
        f"seed {seed}: {sum(len(i.types) for i in inventory):,} word types ({describe(inventory)})"
        for seed, inventory in inventories.items()
    )
    header = [
        "# Performance figures (generated by `tokbench bench`)",
        "",
        f"Command and settings: {_settings(options, all_mode)}.",
        "",
        f"Run {started}. Machine: {machine()}. Load average (1/5/15 min) before: {_load(load_before)}, after: "
        f"{_load(load_after)} (other processes running at the same time slow every implementation down: compare "
        "ratios within this run, not absolute times across runs).",
        "",
        *(
            [
                "**The machine was shared during this run** (load average above "
                f"{BUSY_LOAD} before it started, or above the cores during it): the figures are ratios under load, "
                "not idle-machine figures.",
                "",
            ]
            if shared
            else []
        ),
        "Texts: diverse Turkish/Russian/Korean/English, a deterministic Zipf mix of word types built from "
        + sources
        + f"the embedded package corpora, one text per seed ({texts}); and the real text itself"
        + (" (not measured in this run)" if not options.real_text else "")
        + ". A target is met only when it is met on every text. See benchmarks/perf/corpus.py and "
        "benchmarks/perf/README.md.",
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
        tmp = options.results.with_suffix(".tmp")
        tmp.write_text(report, encoding="utf-8")
        tmp.replace(options.results)
    return report
