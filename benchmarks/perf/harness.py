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
            (``bpe.training.distributed``), the same counts required of each
``sweep``   byte-bpe at five vocabulary sizes: trained separately, and once with the rest derived
            (``bpe.train_sweep``)
``run``     end-to-end ``tokbench run`` of the quick, paper and inference configs, cold caches;
            with ``reference`` (a commit), that commit is built in its own virtualenv
            (``benchmarks.perf.reference``) and old and new runs alternate, each cold
``growth``  byte-bpe 32k training from 1 to 100 MB against HF tokenizers (first seed)
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable

from benchmarks.errors import BenchmarkError
from benchmarks.perf.common import Bench, BenchOptions
from benchmarks.perf.corpus import word_types
from benchmarks.perf.report import plot_growth, report_text
from benchmarks.perf.suites_encode import suite_encode
from benchmarks.perf.suites_other import suite_count, suite_growth, suite_run, suite_sweep
from benchmarks.perf.suites_train import suite_memory, suite_train

SUITE_FUNCTIONS: dict[str, Callable[[Bench], None]] = {
    "train": suite_train,
    "memory": suite_memory,
    "encode": suite_encode,
    "count": suite_count,
    "sweep": suite_sweep,
    "run": suite_run,
    "growth": suite_growth,
}


def run_bench(options: BenchOptions, all_mode: bool = False) -> str:
    """Run the selected suites; return the markdown report (also written to ``options.results``)."""
    options.work_dir.mkdir(parents=True, exist_ok=True)
    bench = Bench(options)
    load_before = os.getloadavg()
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    inventories = {seed: word_types(options.data_root, seed) for seed in options.seeds}
    # this code's numba kernels compiled before anything is timed (as the reference's are when it is
    # built): a measurement is of a tokbench whose machine code exists, not of its first compilation
    from benchmarks.perf.reference import COMPILE_KERNELS

    compiled = subprocess.run([sys.executable, "-c", COMPILE_KERNELS], capture_output=True, text=True,
                              cwd=options.work_dir)  # fmt: skip
    if compiled.returncode != 0:
        last = (compiled.stderr or compiled.stdout).strip().splitlines() or [f"exit status {compiled.returncode}"]
        raise BenchmarkError(f"compiling this code's kernels failed: {last[-1]}")
    for suite in options.suites:
        SUITE_FUNCTIONS[suite](bench)
    load_after = os.getloadavg()
    report = report_text(bench, all_mode, started, load_before, load_after, inventories)
    if options.results is not None:
        options.results.parent.mkdir(parents=True, exist_ok=True)
        if bench.growth:
            plot_growth(bench.growth, options.results.with_name("growth.png"))
            report += "\n![growth](growth.png)\n"
        tmp = options.results.with_suffix(".tmp")
        tmp.write_text(report, encoding="utf-8")
        tmp.replace(options.results)
    return report
