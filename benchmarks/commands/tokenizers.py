"""`tokbench count | train | encode | decode | export`: tokenizers from the command line.

Input text is read as UTF-8, one line per text, with only the line ending
(``\\n`` or ``\\r\\n``) removed.  Invalid UTF-8 is not refused: each invalid
byte sequence becomes U+FFFD and the number replaced per file is reported on
stderr.  A NUL byte is refused (a binary or UTF-16 file), as the corpus loader
refuses it.  Files are written atomically, so an error never leaves a
half-written output behind.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import stat
import sys
import textwrap
import time
from collections.abc import Iterable, Iterator
from contextlib import ExitStack, contextmanager
from itertools import islice
from pathlib import Path
from typing import Annotated, Any, BinaryIO, Literal, get_args, get_origin

from pydantic.fields import FieldInfo

import bpe
from benchmarks.errors import BenchmarkError
from bpe.base import Tokenizer, TokenizerError, atomic_writer
from bpe.counts import PretokenCounts, count_pretokens, read_counts
from bpe.distributed import ENGINES, LineReader
from bpe.formats import FORMATS, HF_FILE, format_descriptions
from bpe.hf_export import EXPORTABLE, to_hf_json
from bpe.options import options_by_name
from bpe.pretokenizers import PRETOKENIZERS
from bpe.render import render_pieces
from bpe.tiktoken_bpe import TIKTOKEN_PATTERNS
from bpe.trained import TrainedTokenizer
from corpora.sources import binary_file_message

INVALID_UTF8_POLICY = (
    "Input is read as UTF-8, one text per line (only the line ending is removed); invalid UTF-8 byte "
    "sequences are replaced with U+FFFD and their number is reported on stderr; a NUL byte (a binary or "
    "UTF-16 file) is an error."
)


def register(subparsers: argparse._SubParsersAction) -> None:
    _register_count(subparsers)
    _register_train(subparsers)
    _register_encode(subparsers)
    _register_decode(subparsers)
    _register_export(subparsers)


def _add_command(
    subparsers: argparse._SubParsersAction, name: str, summary: str, epilog: str, *, reads_text: bool = True
) -> argparse.ArgumentParser:
    description = f"{summary} {INVALID_UTF8_POLICY}" if reads_text else summary
    return subparsers.add_parser(
        name,
        help=summary,
        description=textwrap.fill(description, width=100),
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


# -- reading input ----------------------------------------------------------


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


def _stdin_or_file(path: str | None, stack: ExitStack) -> tuple[BinaryIO, str]:
    if path is None or path == "-":
        return sys.stdin.buffer, "<stdin>"
    return stack.enter_context(open_input(path)), path


def _check_output_path(out: Path) -> None:
    """Fail before any work when ``--out`` cannot be a file."""
    if out.is_dir():
        raise BenchmarkError(f"{out}: is a directory, expected a file path for --out")
    existing = next(parent for parent in out.absolute().parents if parent.exists())
    if not existing.is_dir():
        raise BenchmarkError(f"{out}: cannot write there, {existing} is not a directory")


@contextmanager
def _writing(out: Path) -> Iterator[None]:
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


# -- count ------------------------------------------------------------------


def refuse_idle_address(args: argparse.Namespace) -> None:
    """``--address`` names a dask scheduler: with the local engine it would be ignored, so it is an error."""
    if args.engine == "local" and args.address is not None:
        raise BenchmarkError(f"--address {args.address} applies to --engine dask only; the local engine "
                             "counts in this process (drop --address, or add --engine dask)")  # fmt: skip


def _add_engine_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--engine",
        choices=ENGINES,
        default="local",
        help="count on this machine (threads; default) or on a Dask cluster (pip install 'tokbench[cluster]')",
    )
    parser.add_argument(
        "--address", metavar="ADDR", help="dask: scheduler address, e.g. tcp://host:8786 (default: a local cluster)"
    )
    parser.add_argument("--workers", type=int, metavar="N", help="counting threads, or local dask worker processes")


def _register_count(subparsers: argparse._SubParsersAction) -> None:
    parser = _add_command(
        subparsers,
        "count",
        "Count the pre-tokens of text files into a Parquet file that `tokbench train --counts` trains on.",
        "The file holds one row per distinct pre-token (columns pretoken, count) and, as key-value\n"
        "metadata, the settings that made it (docs/formats.md: any engine can write the same format).\n"
        "Training on the counts gives the same tokenizer as training on the files (not sentencepiece).\n\n"
        "examples:\n"
        "  tokbench count --pretokenizer gpt2 --input a.txt b.txt --out counts.parquet\n"
        "  tokbench count --pretokenizer gpt2 --input shard-*.txt --out counts.parquet \\\n"
        "      --engine dask --address tcp://scheduler:8786",
    )
    parser.add_argument(
        "--pretokenizer", required=True, choices=list(PRETOKENIZERS), help="pre-tokenizer the family will use"
    )
    parser.add_argument("--input", required=True, nargs="+", metavar="FILE", help="text, one text per line")
    parser.add_argument("--out", required=True, metavar="PATH", help="Parquet file to write")
    _add_engine_arguments(parser)
    parser.set_defaults(handler=run_count)


def count_files(args: argparse.Namespace) -> PretokenCounts:
    """The pre-token counts of ``args.input`` with ``args.pretokenizer`` on ``args.engine``, with
    the settings that made them (docs/formats.md)."""
    from bpe.distributed import count_shards, file_shards

    if args.workers is not None and args.workers < 1:
        raise BenchmarkError(f"--workers must be at least 1, got {args.workers}")
    refuse_idle_address(args)
    with ExitStack() as stack:  # every input must be readable before counting starts
        for path in args.input:
            stack.enter_context(open_input(path))
    if args.engine == "local":
        with ExitStack() as stack:
            handles = [(stack.enter_context(open_input(path)), path) for path in args.input]
            lines = (line for handle, name in handles for line in read_lines(handle, name))
            counts = count_pretokens(_require_text(lines, args.input), args.pretokenizer, workers=args.workers)
    else:
        counts = count_shards(
            file_shards(args.input), args.pretokenizer, engine=args.engine, address=args.address, workers=args.workers
        )
        if not counts.has_text():
            raise BenchmarkError(f"{', '.join(args.input)}: no text to count (the input is empty or whitespace-only)")
    counts.settings = {
        "normalization": "none",
        "text_unit": "line",
        "tokbench_version": bpe.__version__,
        "inputs": json.dumps([_fingerprint(path) for path in args.input], ensure_ascii=False),
    }
    return counts


def _fingerprint(path: str) -> dict[str, Any]:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return {"path": path, "bytes": Path(path).stat().st_size, "sha256": digest.hexdigest()}


def run_count(args: argparse.Namespace) -> int:
    out = Path(args.out)
    _check_output_path(out)
    started = time.perf_counter()
    counts = count_files(args)
    with _writing(out):
        counts.save(out)
    print(
        f"counted {counts.total:,} pre-tokens ({len(counts):,} distinct, pre-tokenizer {args.pretokenizer}) in "
        f"{time.perf_counter() - started:.1f} s -> {out}"
    )
    return 0


# -- train ------------------------------------------------------------------


def _register_train(subparsers: argparse._SubParsersAction) -> None:
    parser = _add_command(
        subparsers,
        "train",
        "Train a tokenizer on text files, or on pre-token counts, and save it as one JSON file.",
        "Options that a family does not use are an error (e.g. --pretokenizer for spm-*).\n"
        "Families: word, char, char-bpe, byte-bpe (written from scratch); spm-bpe, spm-unigram (sentencepiece);\n"
        "morfessor (Morfessor Baseline); bpe-knockout (BPE pruned with gold morphemes: needs --references).\n"
        "--counts (from `tokbench count`) trains the from-scratch families exactly as the counted text would,\n"
        "with the counts' pre-tokenizer; sentencepiece needs the text.\n"
        f"Encode-time options ({_flags(options_by_name(encode_time_only=True))}) only change encoding: they are\n"
        "saved with the tokenizer, and `tokbench encode` takes them too.\n\n"
        "examples:\n"
        "  tokbench train --kind byte-bpe --vocab-size 8000 --input train.txt --out byte-bpe-8k.json\n"
        "  tokbench train --kind byte-bpe --vocab-size 32000 --counts counts.parquet --out byte-bpe-32k.json\n"
        "  tokbench train --kind char-bpe --vocab-size 8000 --normalizer jamo --pretokenizer morpheme \\\n"
        "      --input ko.txt --out ko-jamo-morpheme.json\n"
        "  tokbench train --kind bpe-knockout --vocab-size 8000 --references gold.tsv --input tr.txt --out tr-ko.json",
    )
    parser.add_argument("--kind", required=True, choices=list(bpe.FAMILIES), help="tokenizer family")
    parser.add_argument("--vocab-size", required=True, type=int, metavar="N", help="vocabulary size, specials included")
    for name, families in options_by_name().items():
        parser.add_argument(f"--{name.replace('_', '-')}", **_option_flag(families))
    parser.add_argument(
        "--references",
        metavar="FILE",
        help="bpe-knockout: gold morphemes, one 'word<TAB>morph morph ...' per line (the morphs spell the word)",
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--input", nargs="+", metavar="FILE", help="training text, one text per line")
    source.add_argument("--counts", metavar="FILE", help="pre-token counts (Parquet) made by `tokbench count`")
    parser.add_argument("--out", required=True, metavar="PATH", help="tokenizer JSON file to write")
    _add_engine_arguments(parser)
    parser.set_defaults(handler=run_train)


def _flags(names: Iterable[str]) -> str:
    return ", ".join(f"--{name.replace('_', '-')}" for name in names)


def _option_flag(families: dict[str, FieldInfo], *, as_saved: bool = False) -> dict[str, Any]:
    """argparse settings of one family option, from its declarations in ``bpe.options``: the value's
    type (or every family's choices), the description(s), and the families taking it with their
    defaults (``as_saved``: the default is the value a saved tokenizer holds, for ``tokbench encode``)."""
    kinds = [_value_type(field) for field in families.values()]
    descriptions = _grouped({family: str(field.description) for family, field in families.items()})
    if len(descriptions) == 1:
        description = next(iter(descriptions))
    else:
        description = "; ".join(f"{', '.join(names)}: {text}" for text, names in descriptions.items())
    if as_saved:
        takers = f"{', '.join(families)}; default: as saved"
    else:
        defaults = _grouped({family: "unset" if field.default is None else str(field.default)
                             for family, field in families.items()})  # fmt: skip
        takers = "; ".join(f"{', '.join(names)}: default {default}" for default, names in defaults.items())
    settings: dict[str, Any] = {"help": f"{description} [{takers}]", "default": None}
    if all(get_origin(kind) is Literal for kind in kinds):
        return {**settings, "choices": list(dict.fromkeys(choice for kind in kinds for choice in get_args(kind)))}
    return {**settings, "type": kinds[0], "metavar": "N" if kinds[0] is int else "X"}


def _value_type(declaration: FieldInfo) -> Any:
    """The type of a declared option's value: a Literal, int, float or str."""
    kind = declaration.annotation
    if type(None) in get_args(kind):  # X | None: the option may be left unset
        kind = next(arg for arg in get_args(kind) if arg is not type(None))
    if get_origin(kind) is Annotated:
        kind = get_args(kind)[0]
    return kind


def _grouped(values: dict[str, str]) -> dict[str, list[str]]:
    """family -> value, as value -> the families with it (in order)."""
    grouped: dict[str, list[str]] = {}
    for family, value in values.items():
        grouped.setdefault(value, []).append(family)
    return grouped


def run_train(args: argparse.Namespace) -> int:
    out = Path(args.out)
    _check_output_path(out)
    family = bpe.family_class(args.kind)
    # given values go to the family as they are: it validates them (zero is a value, not "unset")
    options: dict[str, Any] = {
        name: getattr(args, name) for name in options_by_name() if getattr(args, name) is not None
    }
    if args.references is not None:
        options["references"] = read_references(args.references)
    # a merge progress bar where someone watches (the families draw it on stderr)
    progress = sys.stderr.isatty()
    counted = args.counts is not None or args.engine != "local"
    if args.counts is None:
        refuse_idle_address(args)
    if counted and not issubclass(family, TrainedTokenizer):
        raise BenchmarkError(
            f"{args.kind} trains on the text itself (sentencepiece reads sentences): use --input with the local engine"
        )
    if args.counts is not None:
        if args.engine != "local" or args.address is not None:
            raise BenchmarkError("--engine and --address count text; --counts is already counted")
        started = time.perf_counter()
        counts = read_counts(args.counts)
        tokenizer = bpe.train_from_counts(args.kind, counts, args.vocab_size, progress=progress, **options)
    elif args.engine != "local":
        # refuse bad options before counting
        settings = bpe.family_class(args.kind).options_model.parse(args.kind, options)
        # char takes no pre-tokenizer: the characters of any (lossless) pre-tokens are the text's
        args.pretokenizer = getattr(settings, "pretokenizer", "unicode")
        started = time.perf_counter()
        counts = count_files(args)
        tokenizer = bpe.train_from_counts(args.kind, counts, args.vocab_size, progress=progress, **options)
    else:
        with ExitStack() as stack:
            # every input must be readable before training starts
            handles = [(stack.enter_context(open_input(path)), path) for path in args.input]
            texts = _require_text((line for handle, name in handles for line in read_lines(handle, name)), args.input)
            started = time.perf_counter()
            tokenizer = family.train(texts, args.vocab_size, progress=progress, workers=args.workers, **options)
    seconds = time.perf_counter() - started
    with _writing(out):
        tokenizer.save(out)
    print(_summary(tokenizer, args.vocab_size, seconds, out))
    return 0


def _require_text(texts: Iterable[str], paths: list[str]) -> Iterator[str]:
    """Pass ``texts`` through; at the end, raise if none had a non-whitespace character."""
    blank = True
    for text in texts:
        blank = blank and (not text or text.isspace())
        yield text
    if blank:
        raise BenchmarkError(f"{', '.join(paths)}: no training text (the input is empty or whitespace-only)")


def _summary(tokenizer: Tokenizer, requested: int, seconds: float, out: Path) -> str:
    merges = getattr(tokenizer, "merges", None)
    merges_text = f", {len(merges)} merges" if merges is not None else ""
    return (
        f"trained {tokenizer.family}: vocab {tokenizer.vocab_size} (requested {requested}){merges_text}, "
        f"{seconds:.1f} s -> {out}"
    )


# -- encode / decode ----------------------------------------------------------

def _file_kinds() -> str:
    """The accepted tokenizer files, from the format registry, with the options a format needs."""
    kinds = [
        description + "".join(f" (with --{option})" for option in FORMATS[name].OPTIONS)
        for name, description in format_descriptions().items()
    ]
    return f"{', '.join(kinds[:-1])} or {kinds[-1]}, or a directory holding a {HF_FILE}"


TOKENIZER_HELP = textwrap.fill(
    f"TOKENIZER is a tokenizer name ({', '.join(bpe.PRODUCTION)}) or a file: {_file_kinds()}; the format is "
    "detected from the file's content (docs/formats.md).",
    width=100,
)


def add_tokenizer_option(parser: argparse.ArgumentParser) -> None:
    """--tokenizer plus the options of files that need them (--format, --pattern)."""
    parser.add_argument("--tokenizer", required=True, metavar="TOKENIZER", help="tokenizer name or file")
    parser.add_argument(
        "--format", choices=list(FORMATS), help="refuse the file unless it is in this format (default: detect)"
    )
    add_pattern_option(parser)


def add_pattern_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--pattern",
        metavar="P",
        help=f"pre-tokenizer of a tiktoken rank file: {', '.join(TIKTOKEN_PATTERNS)} or a regular expression",
    )


def load_tokenizer(args: argparse.Namespace) -> Tokenizer:
    return bpe.load(args.tokenizer, format=args.format, pattern=args.pattern)


def _register_encode(subparsers: argparse._SubParsersAction) -> None:
    parser = _add_command(
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
    for name, families in options_by_name(encode_time_only=True).items():
        parser.add_argument(f"--{name.replace('_', '-')}", **_option_flag(families, as_saved=True))
    parser.set_defaults(handler=run_encode)


def read_references(path: str) -> dict[str, list[int]]:
    """Gold morphemes for bpe-knockout: ``word<TAB>morph morph ...`` per line -> word -> inner boundaries."""
    references: dict[str, list[int]] = {}
    with open_input(path) as handle:
        for number, line in enumerate(read_lines(handle, path), start=1):
            if not line.strip():
                continue
            word, _, segmentation = line.partition("\t")
            morphs = segmentation.split()
            if not morphs or "".join(morphs) != word:
                raise BenchmarkError(
                    f"{path} line {number}: expected 'word<TAB>morph morph ...' (the morphs spelling the word), "
                    f"got {line!r}"
                )
            ends = [sum(map(len, morphs[: i + 1])) for i in range(len(morphs) - 1)]
            references[word] = ends
    return references


#: lines encoded and written together by the compiled batch encoder
BATCH_LINES = 20_000


def run_encode(args: argparse.Namespace) -> int:
    encode_options = {name: getattr(args, name) for name in options_by_name(encode_time_only=True)}
    tokenizer = load_tokenizer(args).with_encode_options(**encode_options)
    out = Path(args.out) if args.out else None
    if out is not None:
        _check_output_path(out)
    with ExitStack() as stack:
        handle, name = _stdin_or_file(args.input, stack)
        lines = read_lines(handle, name)
        if out is None:
            sink: BinaryIO = sys.stdout.buffer
        else:  # written beside the target and renamed into place at the end: never half-written
            with _writing(out):
                sink = stack.enter_context(atomic_writer(out))
        with _writing(out or Path("<stdout>")):
            _encode_lines(tokenizer, lines, args.pieces, sink)
    return 0


def _encode_lines(tokenizer: Tokenizer, lines: Iterator[str], pieces: bool, sink: BinaryIO) -> None:
    """One JSON array per line: in compiled batches for BPE ids (``bpe.batch_encode``), else line by line."""
    from bpe.batch_encode import BatchEncoder

    if not pieces and BatchEncoder.supports(tokenizer):
        encoder = BatchEncoder(tokenizer)
        while batch := list(islice(lines, BATCH_LINES)):
            sink.write(encoder.json_lines(batch))
    else:
        for line in lines:
            if pieces:
                encoded: list[Any] = render_pieces(line, tokenizer.encode_with_spans(line), tokenizer.unk_id)
            else:
                encoded = tokenizer.encode(line)
            sink.write(json.dumps(encoded, ensure_ascii=False).encode("utf-8") + b"\n")
    sink.flush()


def _register_decode(subparsers: argparse._SubParsersAction) -> None:
    parser = _add_command(
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
        handle, name = _stdin_or_file(args.input, stack)
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
    parser = _add_command(
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
    _check_output_path(out)
    exported = to_hf_json(bpe.load(args.tokenizer))
    with _writing(out):
        atomic_write_text(out, exported)
    print(f"exported {args.tokenizer} -> {out} ({args.format})")
    return 0
