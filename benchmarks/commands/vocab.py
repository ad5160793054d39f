"""`tokbench diff | audit`: two tokenizers compared word by word, and one tokenizer's vocabulary audited."""

from __future__ import annotations

import argparse
import textwrap
from contextlib import ExitStack

from benchmarks.commands.show import _load
from benchmarks.commands.tokenizers import (
    INVALID_UTF8_POLICY,
    TOKENIZER_HELP,
    add_pattern_option,
    open_input,
    read_lines,
    write_lines,
)
from benchmarks.errors import BenchmarkError
from bpe.render import SEPARATOR


def register(subparsers: argparse._SubParsersAction) -> None:
    _register_diff(subparsers)


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
    import sys

    from benchmarks.segdiff import segmentation_diff

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
        lines.append(_table([header, *rows]))
    write_lines(lines)
    return 0


def _table(rows: list[tuple[str, ...]]) -> str:
    """Columns aligned by terminal width (wcwidth: Hangul is two columns wide), the count right-aligned."""
    from tabulate import tabulate

    return tabulate(rows[1:], headers=rows[0], tablefmt="simple", colalign=("right", "left", "left", "left"),
                    disable_numparse=True)  # fmt: skip
