"""`tokbench reproduce TABLE`: a published table recomputed with the paper's own definition."""

from __future__ import annotations

import argparse
import csv
import io
import sys
import textwrap
from pathlib import Path

from benchmarks.commands.data import add_fetch_option, data_root_or_fetch
from benchmarks.errors import BenchmarkError
from benchmarks.reproductions import REPRODUCTIONS, Reproduction, UnreproducibleLanguages, get_reproduction
from bpe.base import atomic_write_text
from corpora.sources import data_root as resolve_data_root

CSV_COLUMNS = ("tokenizer", "language", "metric", "published", "reproduced", "difference")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "reproduce",
        help="recompute a paper's published token counts exactly; exit 1 if any differs",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="\n\n".join(
            textwrap.fill(f"{name}: {module.CITATION}. {module.DEFINITION}", width=100)
            for name, module in ((name, get_reproduction(name)) for name in REPRODUCTIONS)
        )
        + "\n\nTheir figures ship with tokbench (benchmarks/published/); relative paths are in the data root."
        "\nWrites OUT/reproduction.csv (tokenizer, language, metric, published, reproduced, difference).\n"
        "Exit status: 0 = every value with a published figure is identical, 1 = one differs, 2 = bad input "
        "(including a requested language that cannot be reproduced).",
        epilog="examples:\n  tokbench reproduce --list --data-dir DATA\n"
        "  tokbench reproduce petrov2023 --data-dir DATA\n  tokbench reproduce toksuite2025 --data-dir DATA\n"
        "  tokbench reproduce petrov2023 --data-dir DATA --languages tur_Latn kor_Hang --out runs/petrov",
    )
    parser.add_argument("paper", nargs="?", metavar="TABLE", help=f"the published table: {', '.join(REPRODUCTIONS)}")
    parser.add_argument("--list", action="store_true", help="list every table, its citation, what it needs "
                        "and what the data root holds")  # fmt: skip
    parser.add_argument("--data-dir", type=Path, default=None, help="data root with flores/ and tokenizers/ "
                        "(default: $TOKBENCH_DATA)")  # fmt: skip
    parser.add_argument("--languages", nargs="+", metavar="L", help="FLORES codes, e.g. tur_Latn (default: every "
                        "flores/<lang>.txt of the data root)")  # fmt: skip
    parser.add_argument("--out", type=Path, default=None,
                        help="folder for reproduction.csv (default: runs/reproduce-TABLE)")  # fmt: skip
    add_fetch_option(parser)
    parser.set_defaults(handler=handle_reproduce)


def handle_reproduce(args: argparse.Namespace) -> int:
    root = resolve_data_root(args.data_dir)
    if args.list:
        print(listing(root))
        return 0
    if args.paper is None:
        raise BenchmarkError(f"name a table ({', '.join(REPRODUCTIONS)}) or give --list")
    module = get_reproduction(args.paper)
    if root is None:
        root = data_root_or_fetch(None, args.fetch, f"`tokbench reproduce {args.paper}`")
    out_dir = args.out if args.out is not None else Path(f"runs/reproduce-{args.paper}")
    if out_dir.exists() and not out_dir.is_dir():
        raise BenchmarkError(f"{out_dir}: exists and is not a directory (--out is a folder)")
    try:
        result = module.reproduce(root, args.languages)
    except UnreproducibleLanguages as exc:  # one line per language, so each reason is readable
        for reason in exc.reasons:
            print(f"tokbench: error: {reason}", file=sys.stderr)
        return 2
    out = out_dir / "reproduction.csv"
    try:
        atomic_write_text(out, reproduction_csv(result))
    except OSError as exc:
        raise BenchmarkError(f"{out}: cannot write ({exc.strerror or exc})") from None
    print(terminal_table(result))
    compared, differing = len(result.compared), len(result.differing)
    print(f"\n{compared - differing} of {compared} published values reproduced exactly -> {out}")
    return 1 if differing else 0


def listing(root: Path | None) -> str:
    """Every registered table: citation, published file, what it needs and what ``root`` holds."""
    lines = [f"data root: {root if root is not None else 'none given (--data-dir or $TOKBENCH_DATA)'}"]
    for name in REPRODUCTIONS:
        module = get_reproduction(name)
        lines += ["", f"{name}: {module.CITATION}", f"  published: benchmarks/published/{module.PUBLISHED}"]
        lines += [f"  {line}" for line in module.needs(root)]
    return "\n".join(lines)


def reproduction_csv(result: Reproduction) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for row in result.rows:
        writer.writerow([row.tokenizer, row.language, row.metric, _blank(row.published), _value(row.reproduced),
                         _blank(row.difference)])  # fmt: skip
    return buffer.getvalue()


def _value(value: int | float) -> str:
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def _blank(value: int | float | None) -> str:
    return "" if value is None else _value(value)


def terminal_table(result: Reproduction) -> str:
    cells = [list(CSV_COLUMNS)] + [
        [
            row.tokenizer,
            row.language,
            row.metric,
            "-" if row.published is None else _shown(row.published),
            _shown(row.reproduced),
            "-" if row.difference is None else f"{row.difference:+,}" if row.difference else "0",
        ]
        for row in result.rows
    ]
    widths = [max(len(line[column]) for line in cells) for column in range(len(CSV_COLUMNS))]
    lines = [
        "  ".join(cell.ljust(width) if column < 3 else cell.rjust(width)
                  for column, (cell, width) in enumerate(zip(line, widths, strict=True)))
        for line in cells
    ]  # fmt: skip
    lines += [f"note: {note}" for note in result.notes]
    return "\n".join(lines)


def _shown(value: int | float) -> str:
    return f"{value:.3f}" if isinstance(value, float) else f"{value:,}"
