"""`tokbench run`, `tokbench report`, `tokbench check`."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from benchmarks.commands import check_jobs
from benchmarks.commands.data import add_fetch_option, config_needs_data_root, data_root_or_fetch
from benchmarks.errors import BenchmarkError


def register(subparsers: argparse._SubParsersAction) -> None:
    run = subparsers.add_parser(
        "run",
        help="train the tokenizer grid of a config, evaluate every metric, write results and the report",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Train every tokenizer of an experiment config on its corpora, evaluate all metrics with\n"
            "bootstrap confidence intervals, and write RUN_DIR/{results.parquet,results.csv,costs.csv,\n"
            "paired.csv,manifest.json,tokenizers/,report.md,tables/,plots/}.\n\n"
            "Trained tokenizers are cached by content hash ($TOKBENCH_CACHE, default ~/.cache/tokbench),\n"
            "so a second run retrains nothing; an interrupted run resumes when started again with the\n"
            "same config and --out."
        ),
        epilog=("examples:\n  tokbench run\n  tokbench run paper --data-dir DIR --jobs 2\n"
                "  tokbench run paper --data-dir DIR --engine dask --address tcp://scheduler:8786"),
    )
    run.add_argument("config", nargs="?", default="quick",
                     help="a config shipped in benchmarks/ (quick, paper) or a path to a TOML file (default: quick)")
    run.add_argument("--data-dir", type=Path, default=None,
                     help="data root with flores/, ud/, morph/ (default: $TOKBENCH_DATA); needed by data-root corpora")
    run.add_argument("--out", type=Path, default=None, help="run directory (default: runs/<config name>)")
    run.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                     help="worker processes (default: all cores); with --engine dask and no --address, the workers "
                          "of the local Dask cluster")  # fmt: skip
    run.add_argument("--engine", choices=("local", "dask"), default="local",
                     help="train and evaluate on worker processes of this machine (default) or on a Dask cluster "
                          "(pip install 'tokbench[cluster]'); the results are the same")  # fmt: skip
    run.add_argument("--address", metavar="ADDR",
                     help="dask: scheduler address, e.g. tcp://host:8786, whose workers see this machine's run "
                          "folder, cache and data root at the same paths (default: a local cluster of --jobs "
                          "processes)")  # fmt: skip
    run.add_argument("--tokenizer", action="append", default=[], metavar="NAME|PATH[,key=value...]",
                     help="one more published tokenizer row (repeatable): a name tokbench knows (cl100k, mistral-v3, "
                          "...) or a file, then optional ,label=/,format=/,pattern=/,normalizer= settings as in a "
                          "[[pretrained]] table, e.g. tokenizers/gpt2.tiktoken,pattern=gpt2")  # fmt: skip
    run.add_argument("--overwrite", action="store_true", help="delete an existing run directory of another config")
    run.add_argument("--no-report", action="store_true", help="skip writing report.md, tables and plots")
    run.add_argument("--quiet", action="store_true", help="no progress bars")
    run.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                     help="where the language models of a [downstream] table train: auto (cuda when PyTorch sees a "
                          "GPU, bf16 autocast there), cpu (deterministic, one thread per model) or cuda")
    add_fetch_option(run)
    run.set_defaults(handler=handle_run)

    report = subparsers.add_parser(
        "report", help="(re)write report.md, LaTeX/CSV tables and plots of a run directory",
        description="Write RUN_DIR/report.md, tables/*.tex|csv and plots/*.png from the run's own results only.",
    )
    report.add_argument("run_dir", type=Path, metavar="RUN_DIR")
    report.set_defaults(handler=handle_report)

    check = subparsers.add_parser(
        "check",
        help="compare a run with a committed baseline; exit 1 on a regression beyond tolerance",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Compare every metric of RUN_DIR/results.parquet with a baseline JSON and print what moved.\n"
            "Exit status: 0 = nothing regressed, 1 = a regression beyond tolerance (or a baseline row is\n"
            "missing), 2 = bad input. Tolerances are stored in the baseline file; see benchmarks/check.py."
        ),
        epilog=("examples:\n  tokbench check runs/quick --baseline results/baseline/quick.json\n"
                "  tokbench check runs/quick --baseline results/baseline/quick.json --format markdown"
                " >> \"$GITHUB_STEP_SUMMARY\""),
    )
    check.add_argument("run_dir", type=Path, metavar="RUN_DIR")
    check.add_argument("--baseline", type=Path, required=True, help="baseline JSON (results/baseline/<config>.json)")
    check.add_argument("--update", action="store_true", help="rewrite the baseline from this run (deliberately)")
    check.add_argument("--format", choices=("text", "markdown", "json"), default="text",
                       help="text (terminal), markdown (for $GITHUB_STEP_SUMMARY or a PR comment) or json "
                            "(schema in docs/formats.md); default text")  # fmt: skip
    check.set_defaults(handler=handle_check)


def handle_run(args: argparse.Namespace) -> int:
    from benchmarks.run.config import load_config
    from benchmarks.run.runner import run_experiment

    config = load_config(args.config, args.tokenizer)
    data_dir = args.data_dir or (Path(os.environ["TOKBENCH_DATA"]) if os.environ.get("TOKBENCH_DATA") else None)
    if data_dir is not None and not data_dir.is_dir():
        raise BenchmarkError(f"--data-dir {data_dir}: no such directory")
    if data_dir is None and config_needs_data_root(config):
        data_dir = data_root_or_fetch(None, args.fetch, f"`tokbench run {args.config}`")
    config = config.with_data_root_corpora(data_dir)  # flores-200:all: every FLORES-200 file of the data root
    check_jobs(args.jobs, "processes")
    if args.engine == "local" and args.address is not None:
        raise BenchmarkError(f"--address {args.address} applies to --engine dask only; the local engine runs on "
                             "worker processes of this machine (drop --address, or add --engine dask)")  # fmt: skip
    out_dir = args.out or Path("runs") / config.name
    on_report = None if args.no_report else _write_report
    run_dir = run_experiment(config, out_dir, data_dir=data_dir, jobs=args.jobs, overwrite=args.overwrite,
                             progress=not args.quiet, on_report=on_report, device=args.device, engine=args.engine,
                             address=args.address)  # fmt: skip
    if not args.quiet:
        print(terminal_summary(run_dir))
    print(f"results: {run_dir / 'results.csv'}")
    if not args.no_report:
        print(f"report:  {run_dir / 'report.md'}")
        print(f"page:    {run_dir / 'report.html'}")
    return 0


#: languages the terminal summary prints (the report has every one)
SUMMARY_ROWS = 25


def terminal_summary(run_dir: Path) -> str:
    """The report's "At a glance" table as plain text (``benchmarks.report.summary``), then the significance line."""
    from benchmarks import render
    from benchmarks.report import load_run
    from benchmarks.report.summary import significance_sentence, summary_rows

    run = load_run(run_dir)
    header, rows, _ = summary_rows(run)
    if not rows:
        return ""
    lines = ["", "At a glance (best ranked tokenizer per language; ≈ name: the runner-up's CI overlaps):",
             render.text(header, rows[:SUMMARY_ROWS], "l" * len(header))]  # fmt: skip
    if len(rows) > SUMMARY_ROWS:
        lines.append(f"... and {len(rows) - SUMMARY_ROWS} more languages: the report's \"At a glance\" has them all")
    sentence = significance_sentence(run)
    return "\n".join(lines + ([sentence, ""] if sentence else [""]))


def _write_report(run_dir: Path) -> Path:
    from benchmarks.report import write_report

    return write_report(run_dir)


def handle_report(args: argparse.Namespace) -> int:
    from benchmarks.run.runner import run_folder_lock

    if not args.run_dir.is_dir():
        raise BenchmarkError(f"{args.run_dir}: no such run directory")
    with run_folder_lock(args.run_dir):  # never beside a run still writing it
        report = _write_report(args.run_dir)
        print(f"report: {report}")
        print(f"page:   {report.with_name('report.html')}")
    return 0


def handle_check(args: argparse.Namespace) -> int:
    import json

    from benchmarks import check

    if args.update:
        previous = check.read_tolerances(args.baseline) if args.baseline.is_file() else None
        count = check.write_baseline(args.run_dir, args.baseline, previous)
        print(f"baseline {args.baseline} rewritten with {count} rows from {args.run_dir}")
        return 0
    changes = check.compare(args.run_dir, check.read_baseline(args.baseline))
    # the exit status is known before anything is printed: a reader that stops early (`| head`) keeps it
    args.outcome = 1 if check.is_failure(changes) else 0
    if args.format == "json":
        print(json.dumps(check.check_document(changes, args.run_dir, args.baseline), indent=1, ensure_ascii=False))
    elif args.format == "markdown":
        print(check.format_markdown(changes, args.run_dir, args.baseline))
    else:
        print(check.format_changes(changes))
    print(check.summary_line(changes), file=sys.stderr)
    return args.outcome
