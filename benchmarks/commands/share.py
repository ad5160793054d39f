"""`tokbench export-results`, `tokbench compare`: results to share and to put side by side."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    export = subparsers.add_parser(
        "export-results",
        help="write a run's results as a Hugging Face dataset folder (results.parquet, manifest.json, README.md)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Write OUT/results.parquet (tidy rows, schema in docs/formats.md, with schema_version),\n"
            "OUT/manifest.json (the run's) and OUT/README.md (a dataset card), loadable with\n"
            "datasets.load_dataset(OUT) and published unchanged with\n"
            "huggingface-cli upload USER/NAME OUT --repo-type dataset."
        ),
        epilog="example:\n  tokbench export-results runs/quick --out exports/quick",
    )
    export.add_argument("run_dir", type=Path, metavar="RUN_DIR")
    export.add_argument("--out", type=Path, required=True, help="the dataset folder (new, empty or an earlier export)")
    export.set_defaults(handler=handle_export)


def handle_export(args: argparse.Namespace) -> int:
    from benchmarks.export import export_results

    print(f"dataset: {export_results(args.run_dir, args.out)}")
    return 0
