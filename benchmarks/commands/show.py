"""`tokbench show`: how each tokenizer splits a text, one line per tokenizer, side by side."""

from __future__ import annotations

import argparse
import textwrap
from contextlib import ExitStack
from pathlib import Path

import bpe
from benchmarks.commands.text_io import INVALID_UTF8_POLICY, open_input, read_lines, write_lines
from benchmarks.commands.tokenizer_args import TOKENIZER_HELP, add_pattern_option, load_by_name, option_flag
from benchmarks.errors import BenchmarkError
from bpe.options import options_by_name
from bpe.pretrained.formats import detect_format
from bpe.render import EMPTY, SEPARATOR, render

#: shown when neither --tokenizer nor --run is given
DEFAULT_TOKENIZERS = ("cl100k", "mistral-v1", "tekken-240911", "bytes", "chars")


def register(subparsers: argparse._SubParsersAction) -> None:
    summary = "Show how tokenizers split a text: one line per tokenizer with its token count and pieces."
    parser = subparsers.add_parser(
        "show",
        help=summary,
        description=textwrap.fill(f"{summary} {INVALID_UTF8_POLICY}", width=100),
        epilog=(
            f"{TOKENIZER_HELP}\n\n"
            + textwrap.fill(
                "--run RUN adds every tokenizer a run saved (RUN/tokenizers/<corpus>/*.json), each with the "
                "inference method and sampling of its row. Without --tokenizer "
                f"and --run: {', '.join(DEFAULT_TOKENIZERS)}. --pattern applies to the tiktoken rank files given. "
                "The encode-time flags (--encode-mode, --dropout, --alpha, --nbest, --seed) re-encode every "
                "tokenizer shown with that inference method or sampling (tokbench tokenizer files only).",
                width=100,
            )
            + "\n\n"
            + textwrap.fill(
                f"Each token is shown as the text it covers, pieces separated by {SEPARATOR}: a space is ␣ "
                "(whatever marker the tokenizer uses: Ġ, ▁, a leading space), a newline ↵, a tab ⇥, bytes of a "
                f"partial UTF-8 character <0xNN>, a token covering no text (a separate </w>, a lone dummy-prefix "
                f"▁) {EMPTY}, an unknown token <unk:text>.",
                width=100,
            )
            + "\n\n"
            "examples:\n"
            '  tokbench show "Merhaba dünya"\n'
            '  tokbench show --tokenizer cl100k --tokenizer gpt2.tiktoken --pattern gpt2 "대한민국의 수도"\n'
            "  tokbench show --run runs/quick --input sentences.txt\n"
            '  tokbench show --tokenizer char-bpe.json --encode-mode fewest-tokens "evlerimizden"'
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("text", nargs="?", help="the text to show (or --input)")
    parser.add_argument("--input", metavar="FILE", help="show every line of this file instead")
    parser.add_argument("--tokenizer", action="append", default=[], metavar="TOKENIZER", help="repeatable")
    parser.add_argument("--run", type=Path, metavar="RUN", help="a run directory: show every tokenizer it saved")
    add_pattern_option(parser)
    for name, families in options_by_name(encode_time_only=True).items():
        parser.add_argument(f"--{name.replace('_', '-')}", **option_flag(families, as_saved=True))
    parser.set_defaults(handler=run_show)


def run_tokenizers(run: Path) -> list[tuple[str, Path]]:
    """``(corpus/name, path)`` of every tokenizer a run saved, sorted."""
    folder = run / "tokenizers"
    paths = sorted(folder.glob("*/*.json")) if folder.is_dir() else []
    if not paths:
        raise BenchmarkError(f"{run}: no saved tokenizers (expected {folder}/<corpus>/*.json, as tokbench run writes)")
    return [(f"{path.parent.name}/{path.stem}", path) for path in paths]


def _load(source: str | Path, pattern: str | None) -> bpe.Tokenizer:
    """A tokenizer by name or file; ``pattern`` goes to tiktoken rank files only."""
    is_rank_file = pattern is not None and Path(source).exists() and detect_format(source) == "tiktoken"
    return load_by_name(source, pattern=pattern if is_rank_file else None)


def run_show(args: argparse.Namespace) -> int:
    if (args.text is None) == (args.input is None):
        raise BenchmarkError("give the text to show, or --input FILE (not both)")
    sources: list[tuple[str, str | Path]] = [(source, source) for source in args.tokenizer]
    if args.run is not None:
        sources += run_tokenizers(args.run)
    if not sources:
        sources = [(name, name) for name in DEFAULT_TOKENIZERS]
    encode_options = {name: getattr(args, name) for name in options_by_name(encode_time_only=True)}
    # the encode-time flags apply to every tokenizer shown (one that does not take them is an error)
    tokenizers = [(label, _load(source, args.pattern).with_encode_options(**encode_options))
                  for label, source in sources]  # fmt: skip
    with ExitStack() as stack:
        if args.input is None:
            texts = [args.text]
        else:
            texts = [line for line in read_lines(stack.enter_context(open_input(args.input)), args.input) if line]
    blocks: list[str] = []
    for text in texts:
        rows = []
        for label, tokenizer in tokenizers:
            encoding = tokenizer.encode_with_spans(text)
            rows.append((label, str(len(encoding)), render(text, encoding, tokenizer.unk_id)))
        label_width = max(len(label) for label, _, _ in rows)
        count_width = max(len(count) for _, count, _ in rows)
        block = [text, *(f"  {label:<{label_width}}  {count:>{count_width}}  {shown}" for label, count, shown in rows)]
        blocks.append("\n".join(block))
    write_lines(["\n\n".join(blocks)])
    return 0
