"""`tokbench reproduce petrov2023`: published token counts recomputed with the paper's definition."""

from __future__ import annotations

import argparse
import csv
import io
import textwrap
from pathlib import Path

from benchmarks.commands.data import add_fetch_option, data_root_or_fetch
from benchmarks.errors import BenchmarkError
from benchmarks.reproduce import DEV_LINES, DEVTEST_LINES, PETROV_TOKENIZERS, Reproduction, reproduce_petrov2023
from bpe.base import atomic_write_text
from corpora.sources import data_root as resolve_data_root

CSV_COLUMNS = ("tokenizer", "language", "published", "reproduced", "difference")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "reproduce",
        help="recompute a paper's published token counts exactly; exit 1 if any differs",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=textwrap.fill(
            'petrov2023: Petrov et al. 2023, "Language Model Tokenizers Introduce Unfairness Between Languages". '
            'Per language, their one string: " ".join(dev.split("\\n") + devtest.split("\\n")) over FLORES-200 '
            f"dev ({DEV_LINES} lines) and devtest ({DEVTEST_LINES}), read from DATA/flores/<lang>.txt (dev then "
            "devtest); count = len(encode(s)), no special tokens. Tokenizers: "
            + ", ".join(f"{spec.label} ({spec.source})" for spec in PETROV_TOKENIZERS)
            + "; relative paths are in the data root. Their figures ship with tokbench (benchmarks/published/).",
            width=100,
        )
        + "\n\nWrites OUT/reproduction.csv (tokenizer, language, published, reproduced, difference).\n"
        "Exit status: 0 = every count with a published figure is identical, 1 = one differs, 2 = bad input.",
        epilog="examples:\n  tokbench reproduce petrov2023 --data-dir DATA\n"
        "  tokbench reproduce petrov2023 --data-dir DATA --languages tur_Latn kor_Hang --out runs/petrov",
    )
    parser.add_argument("paper", choices=["petrov2023"], help="the published table to reproduce")
    parser.add_argument("--data-dir", type=Path, default=None, help="data root with flores/ and tokenizers/ "
                        "(default: $TOKBENCH_DATA)")  # fmt: skip
    parser.add_argument("--languages", nargs="+", metavar="L", help="FLORES codes, e.g. tur_Latn (default: every "
                        "flores/<lang>.txt of the data root)")  # fmt: skip
    parser.add_argument("--out", type=Path, default=Path("runs/reproduce-petrov2023"),
                        help="folder for reproduction.csv (default: runs/reproduce-petrov2023)")  # fmt: skip
    add_fetch_option(parser)
    parser.set_defaults(handler=handle_reproduce)


def handle_reproduce(args: argparse.Namespace) -> int:
    root = resolve_data_root(args.data_dir)
    if root is None:
        root = data_root_or_fetch(None, args.fetch, f"`tokbench reproduce {args.paper}`")
    if args.out.exists() and not args.out.is_dir():
        raise BenchmarkError(f"{args.out}: exists and is not a directory (--out is a folder)")
    result = reproduce_petrov2023(root, args.languages)
    out = args.out / "reproduction.csv"
    try:
        atomic_write_text(out, reproduction_csv(result))
    except OSError as exc:
        raise BenchmarkError(f"{out}: cannot write ({exc.strerror or exc})") from None
    print(terminal_table(result))
    compared, differing = len(result.compared), len(result.differing)
    print(f"\n{compared - differing} of {compared} published counts reproduced exactly -> {out}")
    return 1 if differing else 0


def reproduction_csv(result: Reproduction) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for row in result.rows:
        writer.writerow([row.tokenizer, row.language, _blank(row.published), row.reproduced, _blank(row.difference)])
    return buffer.getvalue()


def _blank(value: int | None) -> str:
    return "" if value is None else str(value)


def terminal_table(result: Reproduction) -> str:
    cells = [list(CSV_COLUMNS)] + [
        [
            row.tokenizer,
            row.language,
            "-" if row.published is None else f"{row.published:,}",
            f"{row.reproduced:,}",
            "-" if row.difference is None else f"{row.difference:+,}" if row.difference else "0",
        ]
        for row in result.rows
    ]
    widths = [max(len(line[column]) for line in cells) for column in range(len(CSV_COLUMNS))]
    lines = [
        "  ".join(cell.ljust(width) if column < 2 else cell.rjust(width)
                  for column, (cell, width) in enumerate(zip(line, widths, strict=True)))
        for line in cells
    ]  # fmt: skip
    lines += [f"note: {note}" for note in result.notes]
    return "\n".join(lines)
