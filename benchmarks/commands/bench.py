"""`tokbench bench`: the performance harness (``benchmarks.perf``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from benchmarks.errors import BenchmarkError


def _csv(kind: type, choices: tuple[str, ...] | None = None):
    def parse(text: str) -> tuple:
        try:
            values = tuple(kind(item) for item in text.split(",") if item)
        except ValueError:
            message = f"expected a comma-separated list of {kind.__name__}, got {text!r}"
            raise argparse.ArgumentTypeError(message) from None
        unknown = [value for value in values if choices is not None and value not in choices]
        if unknown or not values:
            raise argparse.ArgumentTypeError(f"{text!r}: choose from {', '.join(choices or ())}")
        return values

    return parse


def register(subparsers: argparse._SubParsersAction) -> None:
    from benchmarks.perf.harness import FAMILIES, PEERS, SUITES

    bench = subparsers.add_parser(
        "bench",
        help="performance harness: training/encoding time and memory against HF tokenizers, sentencepiece, tiktoken",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Measure, in one run on the same text, tokbench's BPE training and encoding against HF tokenizers,\n"
            "sentencepiece and tiktoken (wall time, peak memory, ratio), the end-to-end `tokbench run`, and\n"
            "the growth of training time and memory with corpus size. Every measurement runs in its own\n"
            "child process. Prints markdown tables; --results writes them (and growth.png) to a file."
        ),
        epilog="examples:\n  tokbench bench --results benchmarks/perf/RESULTS.md\n"
        "  tokbench bench --suites train --size-mb 5 --vocab-sizes 8000 --peers hf",
    )
    bench.add_argument("--data-dir", type=Path, default=None, help="data root with ud/ (default: $TOKBENCH_DATA)")
    bench.add_argument("--suites", type=_csv(str, SUITES), default=SUITES, help=f"default: {','.join(SUITES)}")
    bench.add_argument("--size-mb", type=float, default=20.0, help="mixed text for training/encoding (default 20)")
    bench.add_argument("--vocab-sizes", type=_csv(int), default=(8000, 32000, 64000), help="default: 8000,32000,64000")
    bench.add_argument("--growth-mb", type=_csv(float), default=(1, 3, 10, 30, 100), help="default: 1,3,10,30,100")
    bench.add_argument("--families", type=_csv(str, FAMILIES), default=FAMILIES, help=f"default: {','.join(FAMILIES)}")
    bench.add_argument("--peers", type=_csv(str, PEERS), default=PEERS, help=f"default: {','.join(PEERS)}")
    bench.add_argument(
        "--work-dir",
        type=Path,
        default=None,
        help="corpus files, trained tokenizers, run directories (default: $TOKBENCH_CACHE/perf)",
    )
    bench.add_argument("--timeout", type=float, default=3600.0, help="seconds per measurement (default 3600)")
    bench.add_argument(
        "--results", type=Path, default=None, help="write the report here, e.g. benchmarks/perf/RESULTS.md"
    )
    bench.set_defaults(handler=handle_bench)


def handle_bench(args: argparse.Namespace) -> int:
    from benchmarks.perf.harness import BenchOptions, run_bench
    from corpora.loader import cache_home
    from corpora.sources import data_root

    root = data_root(args.data_dir)
    if root is None or not (root / "ud").is_dir():
        raise BenchmarkError(f"data root {root or '(none)'}: no ud/ folder; pass --data-dir DIR or set TOKBENCH_DATA")
    if args.size_mb <= 0 or any(size <= 0 for size in args.growth_mb):
        raise BenchmarkError("--size-mb and --growth-mb must be positive")
    options = BenchOptions(
        data_root=root,
        work_dir=args.work_dir or cache_home() / "perf",
        size_mb=args.size_mb,
        vocab_sizes=args.vocab_sizes,
        growth_mb=args.growth_mb,
        suites=args.suites,
        families=args.families,
        peers=args.peers,
        timeout=args.timeout,
        results=args.results,
    )
    print(run_bench(options), end="")
    return 0
