"""`tokbench diff | audit`: two tokenizers compared word by word, and one tokenizer's vocabulary audited."""

from __future__ import annotations

import argparse
import sys
import textwrap
from contextlib import ExitStack

from benchmarks.commands.show import _load
from benchmarks.commands.text_io import (
    INVALID_UTF8_POLICY,
    check_output_path,
    open_input,
    read_lines,
    write_lines,
    writing,
)
from benchmarks.commands.tokenizer_args import TOKENIZER_HELP, add_pattern_option, add_tokenizer_option, load_tokenizer
from benchmarks.errors import BenchmarkError
from bpe.render import SEPARATOR


def register(subparsers: argparse._SubParsersAction) -> None:
    _register_diff(subparsers)
    _register_audit(subparsers)


def _positive_or_zero(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {value!r}") from None
    if number < 0:
        raise argparse.ArgumentTypeError(f"expected 0 (every word) or more, got {number}")
    return number


# -- diff -------------------------------------------------------------------


def _register_diff(subparsers: argparse._SubParsersAction) -> None:
    summary = "List the words two tokenizers segment differently, with both splits and the share of words that differ."
    parser = subparsers.add_parser(
        "diff",
        help=summary,
        description=textwrap.fill(f"{summary} {INVALID_UTF8_POLICY}", width=100),
        epilog=(
            f"{TOKENIZER_HELP}\n\n"
            + textwrap.fill(
                "Words are the whitespace words of each line, each encoded alone in its mid-sentence form (after "
                "a space, or with sentencepiece's dummy prefix), as the isolated-word metrics see them. Two "
                "tokenizers segment a word differently when their cuts (byte offsets inside the word where a token "
                "covering text starts or ends) differ; ids are not compared. Words are listed by frequency, most "
                "frequent first, ties by the word. The shares count word occurrences (tokens) and distinct words "
                f"(types). Pieces are shown as `tokbench show` shows them, separated by {SEPARATOR} "
                "(docs/inspect.md). --format tsv writes the columns count, word, "
                "pieces_a, pieces_b (every differing word with --top 0) and the summary to stderr.",
                width=100,
            )
            + "\n\nexamples:\n"
            "  tokbench diff --tokenizer cl100k --tokenizer mistral-v1 --input flores/kor_Hang.txt\n"
            "  tokbench diff --tokenizer gpt2.tiktoken --pattern gpt2 --tokenizer cl100k --input text.txt \\\n"
            "      --top 0 --format tsv > words.tsv"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--tokenizer", action="append", default=[], metavar="TOKENIZER",
                        help="give exactly two: A, then B")  # fmt: skip
    add_pattern_option(parser)
    parser.add_argument("--input", required=True, metavar="FILE", help="text, one text per line")
    parser.add_argument("--top", type=_positive_or_zero, default=20, metavar="N",
                        help="list the N most frequent differing words (0: all; default 20)")  # fmt: skip
    parser.add_argument("--format", choices=("text", "tsv"), default="text", help="output format (default text)")
    parser.set_defaults(handler=run_diff)


def run_diff(args: argparse.Namespace) -> int:
    from benchmarks.measure.segdiff import segmentation_diff

    if len(args.tokenizer) != 2:
        raise BenchmarkError(f"diff compares two tokenizers: give --tokenizer A --tokenizer B "
                             f"(got {len(args.tokenizer)})")  # fmt: skip
    (label_a, tokenizer_a), (label_b, tokenizer_b) = [(s, _load(s, args.pattern)) for s in args.tokenizer]
    with ExitStack() as stack:
        texts = list(read_lines(stack.enter_context(open_input(args.input)), args.input))
    try:
        diff = segmentation_diff(texts, tokenizer_a, tokenizer_b)
    except BenchmarkError as exc:
        raise BenchmarkError(f"{args.input}: {exc}") from None
    listed = diff.words if args.top == 0 else diff.words[: args.top]
    summary = (
        f"A = {label_a}, B = {label_b}: {diff.differing_tokens:,} of {diff.word_tokens:,} word tokens "
        f"({diff.token_share:.2%}) and {diff.differing_types:,} of {diff.word_types:,} word types "
        f"({diff.type_share:.2%}) segmented differently"
    )
    if args.format == "tsv":
        print(summary, file=sys.stderr)
        write_lines(["count\tword\tpieces_a\tpieces_b", *(
            f"{word.count}\t{word.word}\t{SEPARATOR.join(word.pieces_a)}\t{SEPARATOR.join(word.pieces_b)}"
            for word in listed)])  # fmt: skip
        return 0
    rows = [(f"{word.count:,}", word.word, SEPARATOR.join(word.pieces_a), SEPARATOR.join(word.pieces_b))
            for word in listed]  # fmt: skip
    header = ("count", "word", "A", "B")
    lines = [summary]
    if rows:
        shown = "every differing word" if len(listed) == len(diff.words) else f"the {len(listed)} most frequent"
        lines.append(f"{shown}, by frequency:")
        lines.append(_aligned([header, *rows], "rlll"))
    write_lines(lines)
    return 0


# -- audit ------------------------------------------------------------------

STATUS_NOTES = {
    "reachable": "its text alone encodes to exactly it",
    "unreachable": "its text alone encodes to other tokens",
    "partial": "not UTF-8 text on its own (part of a character): not checked",
    "special": "special and control tokens, <unk>: never produced from text as such",
    "no-text": "a bare end-of-word marker </w>, standing for no text: not checked",
    "unchecked": "word-inner pieces no text alone can place (WordPiece ##, Metaspace, bpe-knockout)",
}


def _register_audit(subparsers: argparse._SubParsersAction) -> None:
    summary = (
        "Audit a tokenizer's vocabulary: the entries that encoding their own text alone does not give back "
        "(unreachable), and each script's share."
    )
    parser = subparsers.add_parser(
        "audit",
        help=summary,
        description=summary,
        epilog=(
            f"{TOKENIZER_HELP}\n\n"
            + textwrap.fill(
                "An entry is reachable iff encoding its own text alone yields exactly that entry (Land & Bartolo "
                '2024, "Fishing for Magikarp"); "alone" places the text where the entry\'s markers say it '
                "stands (a word start, inside a word, a word end), per family. Entries that are not UTF-8 text on "
                "their own, special tokens and entries standing for no text are counted apart. The script of an "
                "entry is the one script of all its letters (Latin, Cyrillic, Hangul, CJK), else other. Definitions "
                "per family: docs/inspect.md. --csv writes every entry: id, piece, hex, text, status, script, and "
                "the ids its text encoded to.",
                width=100,
            )
            + "\n\nexamples:\n"
            "  tokbench audit --tokenizer llama2-tokenizer.model\n"
            "  tokbench audit --tokenizer gpt2.tiktoken --pattern gpt2 --csv gpt2-audit.csv"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_tokenizer_option(parser)
    parser.add_argument("--csv", metavar="FILE", help="write every entry and its status to this CSV file")
    parser.set_defaults(handler=run_audit)


def run_audit(args: argparse.Namespace) -> int:
    from pathlib import Path

    from benchmarks.measure.audit import SCRIPTS, STATUSES, audit_vocabulary
    from bpe.atomic import atomic_write_text

    out = Path(args.csv) if args.csv else None
    if out is not None:
        check_output_path(out)
    tokenizer = load_tokenizer(args)
    audit = audit_vocabulary(tokenizer)
    total = len(audit.entries)
    statuses, scripts, unreachable = audit.status_counts(), audit.script_counts(), audit.unreachable_by_script()
    lines = [f"{args.tokenizer} ({tokenizer.family}): {total:,} vocabulary entries", ""]
    status_rows = [(status, f"{statuses[status]:,}", f"{statuses[status] / total:.2%}", STATUS_NOTES[status])
                   for status in STATUSES]  # fmt: skip
    lines.append(_aligned([("status", "entries", "share", ""), *status_rows], "lrrl"))
    lines.append("")
    script_rows = [(script, f"{scripts[script]:,}", f"{scripts[script] / total:.2%}", f"{unreachable[script]:,}")
                   for script in SCRIPTS]  # fmt: skip
    lines.append(_aligned([("script", "entries", "share", "unreachable"), *script_rows], "lrrr"))
    if out is not None:
        with writing(out):
            atomic_write_text(out, audit.csv_text())
        lines += ["", f"every entry -> {out}"]
    write_lines(lines)
    return 0


def _aligned(rows: list[tuple[str, ...]], align: str) -> str:
    """A header row and rows as aligned columns (``l``/``r`` per column); wide characters such as Hangul count
    two columns (tabulate with wcwidth)."""
    from tabulate import tabulate

    sides = tuple({"l": "left", "r": "right"}[side] for side in align)
    return tabulate(rows[1:], headers=rows[0], tablefmt="simple", colalign=sides, disable_numparse=True)
