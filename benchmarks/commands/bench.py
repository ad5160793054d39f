"""`tokbench bench`: the performance harness (``benchmarks.perf``)."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from benchmarks.errors import BenchmarkError

#: the largest amount of text (MB) or time (s) an option of the harness takes: a day, or a terabyte
MAX_AMOUNT = 1e6


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
    from benchmarks.perf.common import FAMILIES, HEADLINE_VOCAB, PEERS, REFERENCE_COMMIT, RUN_CONFIGS, SUITES
    from benchmarks.perf.corpus import SEEDS

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
        epilog="examples:\n"
        "  tokbench bench --all --data-dir DIR    # every suite, both seeds, 3 alternating repeats, whole runs\n"
        f"                                         # against {REFERENCE_COMMIT}; writes benchmarks/perf/RESULTS.md\n"
        "  tokbench bench --suites train --train-mb 5 --peers spm                   # a quick look\n"
        "  tokbench bench --suites run --run-configs quick --reference HEAD~3       # whole runs, old vs new",
    )
    bench.add_argument(
        "--all",
        action="store_true",
        help="regenerate RESULTS.md: every suite, --repeats 3, --reference "
        f"{REFERENCE_COMMIT}, --results benchmarks/perf/RESULTS.md (each overridable); run it on an idle machine",
    )
    bench.add_argument(
        "--data-dir", type=Path, default=None, help="data root (default: $TOKBENCH_DATA; none: embedded)"
    )
    bench.add_argument("--suites", type=_csv(str, SUITES), default=SUITES, help=f"default: {','.join(SUITES)}")
    bench.add_argument(
        "--seeds",
        type=_csv(int),
        default=SEEDS,
        help=f"seeds of the generated text; every figure is measured on each (default {','.join(map(str, SEEDS))})",
    )
    bench.add_argument(
        "--no-real-text", action="store_true", help="train only on the generated text, not on the real text too"
    )
    bench.add_argument(
        "--repeats",
        type=int,
        default=None,
        help="alternating runs of tokbench and sentencepiece (and of old and new whole runs); the fastest "
        "counts (default 1, with --all 3)",
    )
    bench.add_argument("--spm-threads", type=int, default=2, help="sentencepiece's num_threads (default 2)")
    bench.add_argument(
        "--reference",
        default=None,
        metavar="COMMIT",
        help="build COMMIT in its own virtualenv and time whole runs (suite run) against it, alternating",
    )
    bench.add_argument(
        "--run-configs",
        type=_csv(str),
        default=RUN_CONFIGS,
        help=f"configs of the run suite (names or .toml paths; default {','.join(RUN_CONFIGS)})",
    )
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
    bench.add_argument(
        "--long-word-mb", type=_csv(float), default=(0.25, 1.0), help="long words encoded in one call (default 0.25,1)"
    )
    bench.add_argument("--long-line-mb", type=float, default=50.0, help="a long line encoded in one call (default 50)")
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
    import bpe
    from benchmarks.perf.common import REFERENCE_COMMIT, RESULTS_FILE, BenchOptions
    from benchmarks.perf.harness import run_bench
    from corpora.loader import cache_home
    from corpora.sources import data_root

    root = data_root(args.data_dir)
    if root is not None and not (root / "ud").is_dir():
        raise BenchmarkError(
            f"data root {root}: no ud/ folder (pass --data-dir DIR, or no data root for embedded text)"
        )
    sizes = {"--train-mb": args.train_mb, "--memory-mb": (args.memory_mb,), "--encode-mb": (args.encode_mb,),
             "--growth-mb": args.growth_mb, "--long-word-mb": args.long_word_mb, "--long-line-mb": (args.long_line_mb,),
             "--timeout": (args.timeout,)}  # fmt: skip
    for option, values in sizes.items():
        wrong = next((value for value in values if not (math.isfinite(value) and 0 < value <= MAX_AMOUNT)), None)
        if wrong is not None:
            raise BenchmarkError(f"{option} {wrong:g}: expected a number above 0 and at most {MAX_AMOUNT:g} "
                                 "(megabytes, or seconds for --timeout)")  # fmt: skip
    for family in args.families:
        floor = bpe.family_class(family).vocab_floor(None).minimum
        small = next((size for size in args.vocab_sizes if size < floor), None)
        if small is not None:
            raise BenchmarkError(f"--vocab-sizes {small}: below the minimum {floor} of {family}")
    repeats = args.repeats if args.repeats is not None else 3 if args.all else 1
    if repeats < 1 or args.spm_threads < 1:
        raise BenchmarkError(f"--repeats and --spm-threads must be at least 1, got {repeats} and {args.spm_threads}")
    reference = args.reference or (REFERENCE_COMMIT if args.all else None)
    if reference is not None:
        from benchmarks.perf.reference import resolve_commit

        resolve_commit(reference)  # an unknown commit stops here, before any measurement
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
        results=args.results or (RESULTS_FILE if args.all else None),
        seeds=args.seeds,
        real_text=not args.no_real_text,
        repeats=repeats,
        spm_threads=args.spm_threads,
        reference=reference,
        run_configs=args.run_configs,
        long_word_mb=args.long_word_mb,
        long_line_mb=args.long_line_mb,
    )
    print(run_bench(options, all_mode=args.all), end="")
    return 0
