"""`tokbench encode | decode | export`: a tokenizer applied to text or ids, and exported to another
library's format (input and output as ``benchmarks.commands.text_io`` describes)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import textwrap
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack
from itertools import islice
from pathlib import Path
from typing import Any, BinaryIO

import bpe
from benchmarks.commands import check_jobs
from benchmarks.commands.text_io import add_command, check_output_path, read_lines, stdin_or_file, write_lines, writing
from benchmarks.commands.tokenizer_args import TOKENIZER_HELP, add_tokenizer_option, load_tokenizer, option_flag
from benchmarks.errors import BenchmarkError
from bpe.atomic import atomic_writer
from bpe.base import Tokenizer, TokenizerError
from bpe.export.hf_export import EXPORTABLE, to_hf_json
from bpe.options import options_by_name
from bpe.render import render_pieces


def register(subparsers: argparse._SubParsersAction) -> None:
    _register_encode(subparsers)
    _register_decode(subparsers)
    _register_export(subparsers)
    _register_names(subparsers)


# -- names --------------------------------------------------------------------


def _register_names(subparsers: argparse._SubParsersAction) -> None:
    parser = add_command(
        subparsers, "tokenizers", "List the tokenizers every --tokenizer option and config takes by name: those that "
        "ship with a package, and the published files of the data root (with their pattern and normalizer, and "
        "whether the data root in use holds them).", "examples:\n  tokbench tokenizers\n"
        "  tokbench encode --tokenizer o200k --input text.txt", reads_text=False)  # fmt: skip
    parser.set_defaults(handler=run_names)


def run_names(args: argparse.Namespace) -> int:
    from benchmarks import render
    from bpe.pretrained.published import PUBLISHED_FILES
    from corpora.sources import data_root

    root = data_root(None)
    rows = [[name, "built in", named.description] for name, named in bpe.PRODUCTION.items()]
    for name, spec in PUBLISHED_FILES.items():
        settings = ", ".join(f"{key} {value}" for key, value in (("pattern", spec.pattern),
                                                                ("normalizer", spec.normalizer)) if value)  # fmt: skip
        held = "no data root" if root is None else ("present" if (root / spec.source).is_file() else "missing")
        rows.append([name, f"data root: {spec.source} ({held})", settings or "sentencepiece model"])
    print(render.text(["name", "where", "what"], rows, "lll"))
    where = root if root is not None else "none (set TOKBENCH_DATA, or run tokbench data fetch --only tokenizers)"
    print(f"\ndata root: {where}")
    return 0


# -- encode / decode ----------------------------------------------------------


def _register_encode(subparsers: argparse._SubParsersAction) -> None:
    parser = add_command(
        subparsers,
        "encode",
        "Encode text, one input line to one JSON array of ids (or pieces) per output line.",
        f"{TOKENIZER_HELP}\n\n"
        "--pieces prints each token as the text it covers, the way `tokbench show` does: a space as ␣,\n"
        "bytes of a partial UTF-8 character as <0xNN>, a token covering no text as ∅ (bpe/render.py).\n\n"
        "examples:\n"
        "  echo 'Hello world' | tokbench encode --tokenizer cl100k        # [9906, 1917]\n"
        "  tokbench encode --tokenizer byte-bpe-8k.json --input text.txt --pieces\n"
        "  tokbench encode --tokenizer gpt2.tiktoken --pattern gpt2 --input text.txt",
    )
    add_tokenizer_option(parser)
    parser.add_argument("--input", metavar="FILE", help="text to encode (default: stdin)")
    parser.add_argument("--out", metavar="PATH", help="file to write (default: stdout)")
    parser.add_argument("--pieces", action="store_true", help="print the text each token covers instead of ids")
    parser.add_argument(
        "--jobs",
        type=int,
        default=len(os.sched_getaffinity(0)),
        help="threads encoding batches of lines with a char-bpe or byte-bpe tokenizer (default: all cores; "
        "the output does not depend on it)",
    )
    for name, families in options_by_name(encode_time_only=True).items():
        parser.add_argument(f"--{name.replace('_', '-')}", **option_flag(families, as_saved=True))
    parser.set_defaults(handler=run_encode)


#: lines encoded and written together by the compiled batch encoder
BATCH_LINES = 20_000


def run_encode(args: argparse.Namespace) -> int:
    check_jobs(args.jobs, "threads")
    encode_options = {name: getattr(args, name) for name in options_by_name(encode_time_only=True)}
    tokenizer = load_tokenizer(args).with_encode_options(**encode_options)
    out = Path(args.out) if args.out else None
    if out is not None:
        check_output_path(out)
    with ExitStack() as stack:
        handle, name = stdin_or_file(args.input, stack)
        lines = read_lines(handle, name)
        if out is None:
            sink: BinaryIO = sys.stdout.buffer
        else:  # written beside the target and renamed into place at the end: never half-written
            with writing(out):
                sink = stack.enter_context(atomic_writer(out))
        with writing(out or Path("<stdout>")):
            _encode_lines(tokenizer, lines, args.pieces, sink, args.jobs)
    return 0


def _encode_lines(tokenizer: Tokenizer, lines: Iterator[str], pieces: bool, sink: BinaryIO, jobs: int = 1) -> None:
    """One JSON array per line: in compiled batches for BPE ids (``bpe.models.batch_encode``), else line by line."""
    from bpe.models.batch_encode import BatchEncoder

    if not pieces and BatchEncoder.supports(tokenizer):
        _encode_batches([BatchEncoder(tokenizer) for _ in range(jobs)], lines, sink)
    else:
        for line in lines:
            if pieces:
                encoded: list[Any] = render_pieces(line, tokenizer.encode_with_spans(line), tokenizer.unk_id)
            else:
                encoded = tokenizer.encode(line)
            sink.write(json.dumps(encoded, ensure_ascii=False).encode("utf-8") + b"\n")
    sink.flush()


def _encode_batches(encoders: list[Any], lines: Iterator[str], sink: BinaryIO) -> None:
    """Batch ``k`` of ``lines`` on ``encoders[k % len(encoders)]``, each encoder on its own thread (the
    kernel releases the GIL; every encoder keeps its own cache of merged pre-tokens, so no state is
    shared), written in input order.  Reading the next batch overlaps the encoding of the previous ones."""
    if len(encoders) == 1:
        while batch := list(islice(lines, BATCH_LINES)):
            sink.write(encoders[0].json_lines(batch))
        return
    threads = [ThreadPoolExecutor(max_workers=1) for _ in encoders]  # one thread per encoder: its cache is its own
    pending: deque[Future[bytes]] = deque()
    try:
        k = 0
        while batch := list(islice(lines, BATCH_LINES)):
            if len(pending) == len(encoders):
                sink.write(pending.popleft().result())
            pending.append(threads[k % len(encoders)].submit(encoders[k % len(encoders)].json_lines, batch))
            k += 1
        while pending:
            sink.write(pending.popleft().result())
    finally:
        for thread in threads:
            thread.shutdown(cancel_futures=True)


def _register_decode(subparsers: argparse._SubParsersAction) -> None:
    parser = add_command(
        subparsers,
        "decode",
        "Decode ids, one JSON array of integer ids per input line to one text line.",
        "All lines are checked before anything is written: a line that is not a JSON array of\n"
        "integers, or holds an id outside the vocabulary, is an error naming the line.\n"
        f"{TOKENIZER_HELP}\n\n"
        "example:\n"
        "  echo '[9906, 1917]' | tokbench decode --tokenizer cl100k        # Hello world",
    )
    add_tokenizer_option(parser)
    parser.add_argument("--input", metavar="FILE", help="JSON arrays of ids, one per line (default: stdin)")
    parser.set_defaults(handler=run_decode)


def run_decode(args: argparse.Namespace) -> int:
    tokenizer = load_tokenizer(args)
    with ExitStack() as stack:
        handle, name = stdin_or_file(args.input, stack)
        texts = [
            _decode_line(tokenizer, line, f"{name} line {number}")
            for number, line in enumerate(read_lines(handle, name), start=1)
        ]
    write_lines(texts)
    return 0


def _decode_line(tokenizer: Tokenizer, line: str, where: str) -> str:
    try:
        ids = json.loads(line)
    except json.JSONDecodeError:
        ids = None
    if not isinstance(ids, list) or any(isinstance(i, bool) or not isinstance(i, int) for i in ids):
        raise BenchmarkError(f"{where}: expected a JSON array of integer ids, got {line[:60]!r}")
    try:
        return tokenizer.decode(ids)
    except TokenizerError as exc:  # an id outside the vocabulary
        raise TokenizerError(f"{where}: {exc}") from None


# -- export -----------------------------------------------------------------


def _register_export(subparsers: argparse._SubParsersAction) -> None:
    parser = add_command(
        subparsers,
        "export",
        "Export a trained tokenizer to another library's format.",
        textwrap.fill(
            "Format hf: a Hugging Face `tokenizers` tokenizer.json that encodes text to the same ids; load it "
            f"with tokenizers.Tokenizer.from_file. Exportable: {EXPORTABLE}.",
            width=100,
        )
        + "\n\nexample:\n  tokbench export --tokenizer byte-bpe-8k.json --format hf --out tokenizer.json",
        reads_text=False,
    )
    parser.add_argument("--tokenizer", required=True, metavar="PATH", help="saved tokenizer JSON file")
    parser.add_argument("--format", required=True, choices=["hf"], help="target format")
    parser.add_argument("--out", required=True, metavar="PATH", help="file to write")
    parser.set_defaults(handler=run_export)


def run_export(args: argparse.Namespace) -> int:
    from benchmarks.files import atomic_write_text  # imports pandas: only when exporting

    out = Path(args.out)
    check_output_path(out)
    exported = to_hf_json(bpe.load(args.tokenizer))
    with writing(out):
        atomic_write_text(out, exported)
    print(f"exported {args.tokenizer} -> {out} ({args.format})")
    return 0
