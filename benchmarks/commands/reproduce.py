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
from benchmarks.reproductions import (
    REPRODUCTIONS,
    Reproduction,
    Row,
    UnreproducibleLanguages,
    compact_codes,
    get_reproduction,
)
from benchmarks.reproductions.engine import needs, published_label, reproduce
from bpe.atomic import atomic_write_text
from corpora.sources import data_root as resolve_data_root

CSV_COLUMNS = ("tokenizer", "language", "metric", "published", "reproduced", "difference")
#: ``--languages all``: every flores/<lang>.txt of the data root, as when --languages is left out
ALL = "all"
#: a table of more rows than this is shown as a summary per tokenizer plus its differing rows (at most
#: SHOWN_DIFFERING): 4 languages x 11 columns still fit, 200 languages would scroll the result away
FULL_TABLE_ROWS = 50
SHOWN_DIFFERING = 50


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "reproduce",
        help="recompute a paper's published token counts exactly; exit 1 if any differs",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="\n\n".join(textwrap.fill(_described(name), width=100) for name in REPRODUCTIONS)
        + "\n\nTheir figures ship with tokbench (benchmarks/published/); relative paths are in the data root."
        "\nWrites OUT/reproduction.csv (tokenizer, language, metric, published, reproduced, difference).\n"
        "Exit status: 0 = every value with a published figure is identical, 1 = one differs, 2 = bad input "
        "(including a requested language that cannot be reproduced).",
        epilog="examples:\n  tokbench reproduce --list --data-dir DATA\n"
        "  tokbench reproduce petrov2023 --data-dir DATA\n  tokbench reproduce toksuite2025 --data-dir DATA\n"
        "  tokbench reproduce petrov2023 --data-dir DATA --languages tur_Latn kor_Hang --out runs/petrov\n"
        "  tokbench reproduce petrov2023 --data-dir DATA --languages all\n\n"
        f"Over {FULL_TABLE_ROWS} rows the terminal shows a summary per tokenizer and only the differing rows "
        "(every row is in reproduction.csv).",
    )
    parser.add_argument("paper", nargs="?", metavar="TABLE", help=f"the published table: {', '.join(REPRODUCTIONS)}")
    parser.add_argument("--list", action="store_true", help="list every table, its citation, what it needs "
                        "and what the data root holds")  # fmt: skip
    parser.add_argument("--data-dir", type=Path, default=None, help="data root with flores/ and tokenizers/ "
                        "(default: $TOKBENCH_DATA)")  # fmt: skip
    parser.add_argument("--languages", nargs="+", metavar="L", help=f"FLORES codes, e.g. tur_Latn, or {ALL!r}: "
                        "every flores/<lang>.txt of the data root (the default)")  # fmt: skip
    parser.add_argument("--out", type=Path, default=None,
                        help="folder for reproduction.csv (default: runs/reproduce-TABLE)")  # fmt: skip
    parser.add_argument("--quiet", action="store_true", help="no progress bar (there is none when stderr is not "
                        "a terminal)")  # fmt: skip
    add_fetch_option(parser)
    parser.set_defaults(handler=handle_reproduce)


def _described(name: str) -> str:
    """A table's citation and definition for ``--help``; an invalid reproduction file says so here (the help of
    every command is built with it) and is a one-line error when the table is run."""
    try:
        table = get_reproduction(name)
    except BenchmarkError as exc:
        return f"{name}: unusable: {exc}"
    return f"{name}: {table.citation}. {table.definition}"


def requested_languages(values: list[str] | None) -> list[str] | None:
    """``--languages`` as a reproduction takes it: None (every FLORES file of the data root) for ``all``
    or no option, else the codes; ``all`` beside codes is a BenchmarkError."""
    if values is None or ALL not in values:
        return values
    if any(value != ALL for value in values):
        codes = " ".join(value for value in values if value != ALL)
        raise BenchmarkError(f"--languages {ALL} means every flores/<lang>.txt of the data root: give it alone, "
                             f"not with codes ({codes})")  # fmt: skip
    return None


def handle_reproduce(args: argparse.Namespace) -> int:
    languages = requested_languages(args.languages)
    root = resolve_data_root(args.data_dir)
    if args.list:
        print(listing(root))
        return 0
    if args.paper is None:
        raise BenchmarkError(f"name a table ({', '.join(REPRODUCTIONS)}) or give --list")
    table = get_reproduction(args.paper)
    root = data_root_or_fetch(args.data_dir, args.fetch, f"`tokbench reproduce {args.paper}`")
    out_dir = args.out if args.out is not None else Path(f"runs/reproduce-{args.paper}")
    if out_dir.exists() and not out_dir.is_dir():
        raise BenchmarkError(f"{out_dir}: exists and is not a directory (--out is a folder)")
    try:
        progress = not args.quiet and sys.stderr.isatty()  # a bar in a log file is noise
        result = reproduce(table, root, languages, progress=progress)
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
    print(f"\n{unpublished_summary(result)}")
    compared, differing = len(result.compared), len(result.differing)
    how = "exactly" if result.tolerance == 0 else f"within {result.tolerance:g}"
    print(f"{compared - differing} of {compared} published values reproduced {how} -> {out}")
    return 1 if differing else 0


def listing(root: Path | None) -> str:
    """Every registered table: citation, published file, what it needs and what ``root`` holds."""
    lines = [f"data root: {root if root is not None else 'none given (--data-dir or $TOKBENCH_DATA)'}"]
    for name in REPRODUCTIONS:
        table = get_reproduction(name)
        lines += ["", f"{name}: {table.citation}", f"  published: benchmarks/published/{published_label(table)}"]
        lines += [f"  {line}" for line in needs(table, root)]
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
    """Every row, or over FULL_TABLE_ROWS rows a summary per (tokenizer, metric) and the differing rows; then
    the notes."""
    if len(result.rows) <= FULL_TABLE_ROWS:
        lines = _aligned([list(CSV_COLUMNS)] + [_cells(row) for row in result.rows], left=3)
    else:
        header = ["tokenizer", "metric", "languages", "compared", "identical", "differing"]
        lines = _aligned([header, *_summary(result)], left=2)
        differing = result.differing
        if differing:
            shown = differing[:SHOWN_DIFFERING]
            lines += ["", f"differing values ({len(shown)} of {len(differing)} shown; every row in reproduction.csv):"]
            lines += _aligned([list(CSV_COLUMNS)] + [_cells(row) for row in shown], left=3)
        else:
            lines += ["", f"no value differs ({len(result.rows):,} rows, every one in reproduction.csv)"]
    lines += [f"note: {note}" for note in result.notes]
    return "\n".join(lines)


def unpublished_summary(result: Reproduction) -> str:
    """How many values were computed without a published figure, and the languages the paper lacks."""
    languages = result.unpublished_languages
    line = f"{len(result.unpublished):,} counted values have no published figure"
    if languages:
        noun = "language" if len(languages) == 1 else "languages"
        line += f" ({len(languages)} {noun} the paper lacks: {compact_codes(languages)})"
    return line + (": not compared" if result.unpublished else "")


def _summary(result: Reproduction) -> list[list[str]]:
    groups: dict[tuple[str, str], list[Row]] = {}
    for row in result.rows:
        groups.setdefault((row.tokenizer, row.metric), []).append(row)
    cells = []
    for (tokenizer, metric), rows in groups.items():
        compared = [row for row in rows if row.published is not None]
        identical = sum(not result.differs(row) for row in compared)
        cells.append([tokenizer, metric, f"{len({row.language for row in rows}):,}", f"{len(compared):,}",
                      f"{identical:,}", f"{len(compared) - identical:,}"])  # fmt: skip
    return cells


def _cells(row: Row) -> list[str]:
    return [
        row.tokenizer,
        row.language,
        row.metric,
        "-" if row.published is None else _shown(row.published),
        _shown(row.reproduced),
        "-" if row.difference is None else f"{row.difference:+,}" if row.difference else "0",
    ]


def _aligned(cells: list[list[str]], left: int) -> list[str]:
    """Columns padded to one width: the first ``left`` to the left, numbers to the right."""
    widths = [max(len(line[column]) for line in cells) for column in range(len(cells[0]))]
    return [
        "  ".join(cell.ljust(width) if column < left else cell.rjust(width)
                  for column, (cell, width) in enumerate(zip(line, widths, strict=True)))
        for line in cells
    ]  # fmt: skip


def _shown(value: int | float) -> str:
    return f"{value:.3f}" if isinstance(value, float) else f"{value:,}"
