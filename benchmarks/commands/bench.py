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
    from benchmarks.perf.harness import FAMILIES, HEADLINE_VOCAB, PEERS, SUITES

    bench = subparsers.add_parser(
        "bench",
        help="performance harness: training, counting and encoding against HF tokenizers, sentencepiece, tiktoken",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Measure, in one run, on diverse text it generates (a Zipf mix of word types of the four\n"
            "languages), tokbench's BPE training against HF tokenizers and sentencepiece (wall time, peak\n"
            "memory, ratios), training on 1 GB, `tokbench encode` against a tiktoken script, counting on each\n"
            "engine, a vocabulary sweep, the end-to-end `tokbench run` and the growth with corpus size. Every\n"
            "measurement runs in its own child process. Prints markdown; --results writes it (and growth.png)."
        ),
        epilog="examples:\n  tokbench bench --data-dir DIR --results benchmarks/perf/RESULTS.md      # everything\n"
        "  tokbench bench --suites train --train-mb 5 --peers spm                   # a quick look",
    )
    bench.add_argument(
        "--data-dir", type=Path, default=None, help="data root (default: $TOKBENCH_DATA; none: embedded)"
    )
    bench.add_argument("--suites", type=_csv(str, SUITES), default=SUITES, help=f"default: {','.join(SUITES)}")
    bench.add_argument(
        "--train-mb", type=_csv(float), default=(20.0, 100.0), help="training text sizes (default 20,100)"
    )
    bench.add_argument(
        "--vocab-sizes",
        type=_csv(int),
        default=(HEADLINE_VOCAB,),
        help=f"training vocabularies (default {HEADLINE_VOCAB})",
    )
    bench.add_argument("--memory-mb", type=float, default=1000.0, help="text for the memory check (default 1000)")
    bench.add_argument("--encode-mb", type=float, default=20.0, help="text for the encoding suite (default 20)")
    bench.add_argument("--growth-mb", type=_csv(float), default=(1, 3, 10, 30, 100), help="default: 1,3,10,30,100")
    bench.add_argument("--families", type=_csv(str, FAMILIES), default=FAMILIES, help=f"default: {','.join(FAMILIES)}")
    bench.add_argument("--peers", type=_csv(str, PEERS), default=PEERS, help=f"default: {','.join(PEERS)}")
    bench.add_argument(
        "--work-dir",
        type=Path,
        default=None,
        help="generated text, trained tokenizers, run directories (default: $TOKBENCH_CACHE/perf)",
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
    if root is not None and not (root / "ud").is_dir():
        raise BenchmarkError(
            f"data root {root}: no ud/ folder (pass --data-dir DIR, or no data root for embedded text)"
        )
    sizes = (*args.train_mb, args.memory_mb, args.encode_mb, *args.growth_mb)
    if any(size <= 0 for size in sizes):
        raise BenchmarkError("--train-mb, --memory-mb, --encode-mb and --growth-mb must be positive")
    options = BenchOptions(
        data_root=root,
        work_dir=args.work_dir or cache_home() / "perf",
        train_mb=args.train_mb,
        vocab_sizes=args.vocab_sizes,
        memory_mb=args.memory_mb,
        encode_mb=args.encode_mb,
        growth_mb=args.growth_mb,
        suites=args.suites,
        families=args.families,
        peers=args.peers,
        timeout=args.timeout,
        results=args.results,
    )
    print(run_bench(options), end="")
    return 0
