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

    compare = subparsers.add_parser(
        "compare",
        help="put several runs (or exported results folders) side by side: Markdown, HTML and CSV",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Write OUT/comparison.{md,html,csv} and OUT/tables/ (each table as LaTeX and CSV): rows\n"
            "run/tokenizer, columns languages, one table per metric and evaluation set, with CIs, the\n"
            "report's markers and its direction marks (lower/higher is better), in the report's order: one\n"
            "section per metric group, metrics in registry order. comparison.html is laid out as report.html\n"
            "(navigation, sortable columns, the language and family filter). Cells stand side by side only\n"
            "where the runs' manifests give the same evaluation-data fingerprint for the columns shown;\n"
            "otherwise the runs get separate tables saying why. A RUN is a `tokbench run` directory or an\n"
            "`export-results` folder."
        ),
        epilog="examples:\n  tokbench compare runs/paper runs/my-tokenizer --out comparisons/mine\n"
        "  tokbench compare runs/paper runs/mine --metric bytes_per_token fertility_running "
        "--language kor_Hang tur_Latn --out comparisons/korean-turkish",
    )
    compare.add_argument("run_dirs", type=Path, nargs="+", metavar="RUN")
    compare.add_argument("--out", type=Path, required=True, help="folder for comparison.{md,html,csv} and tables/")
    compare.add_argument(
        "--metric", dest="metrics", nargs="+", action="extend", metavar="NAME",
        help="only these metrics, by registry name (docs/metrics.md), e.g. bytes_per_token; repeatable; tables "
        "stay in registry order; an unknown name, or one the runs hold no comparable value of, is an error "
        "listing the names to choose from (default: every comparable metric of the runs)",
    )  # fmt: skip
    compare.add_argument(
        "--language", dest="languages", nargs="+", action="extend", metavar="CODE",
        help="only these languages (columns), by FLORES-200 code as in the results, e.g. kor_Hang; repeatable; "
        "a code no run holds is an error listing theirs (default: every language)",
    )  # fmt: skip
    compare.set_defaults(handler=handle_compare)


def handle_export(args: argparse.Namespace) -> int:
    from benchmarks.results.export import export_results

    print(f"dataset: {export_results(args.run_dir, args.out)}")
    return 0


def handle_compare(args: argparse.Namespace) -> int:
    from benchmarks.files import check_writable_dir
    from benchmarks.results.compare import write_comparison

    check_writable_dir(args.out, "comparison folder (--out)")
    out = write_comparison(args.run_dirs, args.out, args.metrics, args.languages)
    print(f"comparison: {out / 'comparison.md'}, {out / 'comparison.html'}, {out / 'comparison.csv'}, "
          f"{out / 'tables'}")
    return 0
