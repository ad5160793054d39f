"""Reading text input and writing output files for the commands that take text.

Input text is read as UTF-8, one line per text, with only the line ending
(``\\n`` or ``\\r\\n``) removed.  Invalid UTF-8 is not refused: each invalid
byte sequence becomes U+FFFD and the number replaced per file is reported on
stderr.  A NUL byte is refused (a binary or UTF-16 file), as the corpus loader
refuses it.  Files are written atomically, so an error never leaves a
half-written output behind.
"""

from __future__ import annotations

import argparse
import os
import stat
import sys
import textwrap
from collections.abc import Iterable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import BinaryIO

from benchmarks.errors import BenchmarkError
from bpe.training.distributed import LineReader
from corpora.sources import binary_file_message

INVALID_UTF8_POLICY = (
    "Input is read as UTF-8, one text per line (only the line ending is removed); invalid UTF-8 byte "
    "sequences are replaced with U+FFFD and their number is reported on stderr; a NUL byte (a binary or "
    "UTF-16 file) is an error."
)


def add_command(
    subparsers: argparse._SubParsersAction, name: str, summary: str, epilog: str, *, reads_text: bool = True
) -> argparse.ArgumentParser:
    """A subcommand whose description is ``summary`` (plus the input policy when it ``reads_text``)."""
    description = f"{summary} {INVALID_UTF8_POLICY}" if reads_text else summary
    return subparsers.add_parser(
        name,
        help=summary,
        description=textwrap.fill(description, width=100),
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def open_input(path: str) -> BinaryIO:
    """Open a text input file for binary reading, or a BenchmarkError saying why not."""
    try:
        handle = open(path, "rb")  # noqa: SIM115 (the caller closes it: ExitStack)
    except FileNotFoundError:
        raise BenchmarkError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise BenchmarkError(f"{path}: is a directory, expected a text file") from None
    except OSError as exc:
        raise BenchmarkError(f"{path}: cannot read ({exc.strerror})") from None
    if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):  # a device or FIFO may never end
        handle.close()
        raise BenchmarkError(f"{path}: not a regular file (a device, pipe or socket); give a text file, or - for stdin")
    return handle


def read_lines(handle: BinaryIO, name: str) -> Iterator[str]:
    """Stream the lines of ``handle`` without their line ending; report replaced invalid UTF-8 on stderr;
    refuse a NUL byte."""

    def refuse(offset: int) -> None:
        raise BenchmarkError(binary_file_message(name, offset))

    lines = LineReader(handle, on_nul=refuse)
    yield from lines
    if lines.replaced:
        print(
            f"tokbench: warning: {name}: {lines.replaced} invalid UTF-8 sequence(s) replaced with U+FFFD",
            file=sys.stderr,
        )


def stdin_or_file(path: str | None, stack: ExitStack) -> tuple[BinaryIO, str]:
    """The input ``path`` names (``None`` or ``-``: stdin), opened within ``stack``, and its name for messages."""
    if path is None or path == "-":
        return sys.stdin.buffer, "<stdin>"
    return stack.enter_context(open_input(path)), path


def require_text(texts: Iterable[str], paths: list[str]) -> Iterator[str]:
    """Pass ``texts`` through; at the end, raise if none had a non-whitespace character."""
    blank = True
    for text in texts:
        blank = blank and (not text or text.isspace())
        yield text
    if blank:
        raise BenchmarkError(f"{', '.join(paths)}: no training text (the input is empty or whitespace-only)")


def check_output_path(out: Path) -> None:
    """Fail before any work when ``--out`` cannot be a file."""
    if out.is_dir():
        raise BenchmarkError(f"{out}: is a directory, expected a file path for --out")
    existing = next(parent for parent in out.absolute().parents if parent.exists())
    if not existing.is_dir():
        raise BenchmarkError(f"{out}: cannot write there, {existing} is not a directory")


@contextmanager
def writing(out: Path) -> Iterator[None]:
    """Turn an OS error while writing ``out`` (atomically: never half-written) into a user error."""
    try:
        yield
    except OSError as exc:
        raise BenchmarkError(f"{out}: cannot write ({exc.strerror or exc})") from None


def write_lines(lines: Iterable[str]) -> None:
    """Write to stdout as UTF-8 whatever the locale."""
    out = sys.stdout.buffer
    for line in lines:
        out.write(line.encode("utf-8") + b"\n")
    out.flush()
