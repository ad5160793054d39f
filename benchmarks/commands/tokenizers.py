"""`tokbench train | encode | decode | export`: tokenizers from the command line.

Input text is read as UTF-8, one line per text, with only the line ending
(``\\n`` or ``\\r\\n``) removed.  Invalid UTF-8 is not refused: each invalid
byte sequence becomes U+FFFD and the number replaced per file is reported on
stderr.  Files are written atomically, so an error never leaves a
half-written output behind.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
import time
from collections.abc import Iterable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, BinaryIO

import bpe
from benchmarks.errors import BenchmarkError
from bpe.base import Tokenizer, TokenizerError, atomic_write_text
from bpe.hf_export import EXPORTABLE, to_hf_json
from bpe.normalizers import NORMALIZERS
from bpe.pretokenizers import PRETOKENIZERS

INVALID_UTF8_POLICY = (
    "Input is read as UTF-8, one text per line (only the line ending is removed); invalid UTF-8 byte "
    "sequences are replaced with U+FFFD and their number is reported on stderr."
)


def register(subparsers: argparse._SubParsersAction) -> None:
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
        return open(path, "rb")  # the caller closes it (ExitStack)
    except FileNotFoundError:
        raise BenchmarkError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise BenchmarkError(f"{path}: is a directory, expected a text file") from None
    except OSError as exc:
        raise BenchmarkError(f"{path}: cannot read ({exc.strerror})") from None


def read_lines(handle: BinaryIO, name: str) -> Iterator[str]:
    """Stream the lines of ``handle`` without their line ending; report replaced invalid UTF-8 on stderr."""
    replaced = 0
    for raw in handle:
        raw = raw.removesuffix(b"\n").removesuffix(b"\r")
        try:
            yield raw.decode("utf-8")
        except UnicodeDecodeError:
            text = raw.decode("utf-8", errors="replace")
            # every U+FFFD beyond the ones genuinely encoded in the line is a replaced sequence
            replaced += text.count("\ufffd") - raw.count("\ufffd".encode())
            yield text
    if replaced:
        print(f"tokbench: warning: {name}: {replaced} invalid UTF-8 sequence(s) replaced with U+FFFD", file=sys.stderr)


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


def _write_lines(lines: Iterable[str]) -> None:
    """Write to stdout as UTF-8 whatever the locale."""
    out = sys.stdout.buffer
    for line in lines:
        out.write(line.encode("utf-8") + b"\n")
    out.flush()


# -- train ------------------------------------------------------------------


def _register_train(subparsers: argparse._SubParsersAction) -> None:
    parser = _add_command(
        subparsers,
        "train",
        "Train a tokenizer on text files and save it as one JSON file.",
        "Options that a family does not use are an error (e.g. --pretokenizer for spm-*).\n"
        "Families: word, char, char-bpe, byte-bpe (written from scratch); spm-bpe, spm-unigram (sentencepiece);\n"
        "morfessor (Morfessor Baseline); bpe-knockout (BPE pruned with gold morphemes: needs --references).\n"
        "Encode options (--encode-mode, --dropout, --alpha, --nbest, --seed) are saved with the tokenizer.\n\n"
        "examples:\n"
        "  tokbench train --kind byte-bpe --vocab-size 8000 --input train.txt --out byte-bpe-8k.json\n"
        "  tokbench train --kind char-bpe --vocab-size 8000 --normalizer jamo --pretokenizer morpheme \\\n"
        "      --input ko.txt --out ko-jamo-morpheme.json\n"
        "  tokbench train --kind bpe-knockout --vocab-size 8000 --references gold.tsv --input tr.txt --out tr-ko.json",
    )
    parser.add_argument("--kind", required=True, choices=list(bpe.FAMILIES), help="tokenizer family")
    parser.add_argument("--vocab-size", required=True, type=int, metavar="N", help="vocabulary size, specials included")
    parser.add_argument(
        "--min-frequency", type=int, metavar="F", help="stop merging below this pair count (morfessor: rarer words)"
    )
    parser.add_argument("--pretokenizer", metavar="P", help=f"pre-tokenizer: {', '.join(PRETOKENIZERS)}")
    parser.add_argument("--normalizer", choices=list(NORMALIZERS), help="rewrite text first (jamo: Hangul jamo)")
    parser.add_argument(
        "--end-of-word", choices=["separate", "attached", "none"], help="char-bpe end-of-word marker </w>"
    )
    parser.add_argument("--limit-alphabet", type=int, metavar="N", help="keep the N most frequent characters")
    parser.add_argument(
        "--character-coverage",
        type=float,
        metavar="C",
        help="spm-*: share of the text whose characters get a piece (default 0.9995; the rest use byte pieces)",
    )
    _add_encode_options(parser)
    parser.add_argument("--dampening", choices=["ones", "log", "none"], help="morfessor: word counts (default: ones)")
    parser.add_argument("--corpus-weight", type=float, metavar="A", help="morfessor: corpus weight alpha (default 1)")
    parser.add_argument("--max-epochs", type=int, metavar="N", help="morfessor: training epochs at most")
    parser.add_argument(
        "--references",
        metavar="FILE",
        help="bpe-knockout: gold morphemes, one 'word<TAB>morph morph ...' per line (the morphs spell the word)",
    )
    parser.add_argument("--base", choices=["char-bpe", "byte-bpe"], help="bpe-knockout: the BPE family (char-bpe)")
    parser.add_argument("--threshold", type=float, metavar="T", help="bpe-knockout: blame ratio to remove (0.5)")
    parser.add_argument("--input", required=True, nargs="+", metavar="FILE", help="training text, one text per line")
    parser.add_argument("--out", required=True, metavar="PATH", help="tokenizer JSON file to write")
    parser.set_defaults(handler=run_train)


def run_train(args: argparse.Namespace) -> int:
    out = Path(args.out)
    _check_output_path(out)
    family = bpe.family_class(args.kind)
    given = {
        "min_frequency": args.min_frequency,
        "pretokenizer": args.pretokenizer,
        "end_of_word": args.end_of_word,
        "limit_alphabet": args.limit_alphabet,
        "character_coverage": args.character_coverage,
        "normalizer": args.normalizer,
        **_encode_options(args),
        "dampening": args.dampening,
        "corpus_weight": args.corpus_weight,
        "max_epochs": args.max_epochs,
        "references": read_references(args.references) if args.references else None,
        "base": args.base,
        "threshold": args.threshold,
        # a merge progress bar where someone watches (the families draw it on stderr)
        "progress": sys.stderr.isatty(),
    }
    options: dict[str, Any] = {name: value for name, value in given.items() if value not in (None, False)}
    with ExitStack() as stack:
        # every input must be readable before training starts
        handles = [(stack.enter_context(open_input(path)), path) for path in args.input]
        texts = _require_text((line for handle, name in handles for line in read_lines(handle, name)), args.input)
        started = time.perf_counter()
        tokenizer = family.train(texts, args.vocab_size, **options)
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


def _register_encode(subparsers: argparse._SubParsersAction) -> None:
    parser = _add_command(
        subparsers,
        "encode",
        "Encode text, one input line to one JSON array of ids (or pieces) per output line.",
        "TOKENIZER is a saved tokenizer JSON file or a production tokenizer name "
        f"({', '.join(bpe.PRODUCTION)}).\n\n"
        "examples:\n"
        "  echo 'Hello world' | tokbench encode --tokenizer cl100k        # [9906, 1917]\n"
        "  tokbench encode --tokenizer byte-bpe-8k.json --input text.txt --pieces",
    )
    parser.add_argument("--tokenizer", required=True, metavar="PATH|NAME", help="tokenizer JSON file or name")
    parser.add_argument("--input", metavar="FILE", help="text to encode (default: stdin)")
    parser.add_argument("--pieces", action="store_true", help="print pieces (strings) instead of ids")
    _add_encode_options(parser, " (default: as saved)")
    parser.set_defaults(handler=run_encode)


def _add_encode_options(parser: argparse.ArgumentParser, default: str = "") -> None:
    parser.add_argument(
        "--encode-mode",
        metavar="M",
        help="inference method: merges (spm-unigram: likelihood), longest-prefix, longest-suffix, longest-token, "
        f"fewest-tokens{default}",
    )
    parser.add_argument("--dropout", type=float, metavar="P", help=f"BPE-dropout probability (*-bpe){default}")
    parser.add_argument("--alpha", type=float, metavar="A", help=f"spm-unigram: sample with this smoothing{default}")
    parser.add_argument("--nbest", type=int, metavar="N", help=f"spm-unigram: sample among N best (-1: all){default}")
    parser.add_argument("--seed", type=int, metavar="S", help=f"seed of sampling{default}")


def _encode_options(args: argparse.Namespace) -> dict[str, Any]:
    given = {"encode_mode": args.encode_mode, "dropout": args.dropout, "alpha": args.alpha, "nbest": args.nbest,
             "seed": args.seed}  # fmt: skip
    return {name: value for name, value in given.items() if value is not None}


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


def run_encode(args: argparse.Namespace) -> int:
    tokenizer = bpe.load(args.tokenizer)
    tokenizer = tokenizer.with_encode_options(**_encode_options(args))
    with ExitStack() as stack:
        handle, name = _stdin_or_file(args.input, stack)

        def encoded() -> Iterator[str]:
            for line in read_lines(handle, name):
                ids = tokenizer.encode(line)
                yield json.dumps(tokenizer.pieces(ids) if args.pieces else ids, ensure_ascii=False)

        _write_lines(encoded())
    return 0


def _register_decode(subparsers: argparse._SubParsersAction) -> None:
    parser = _add_command(
        subparsers,
        "decode",
        "Decode ids, one JSON array of integer ids per input line to one text line.",
        "All lines are checked before anything is written: a line that is not a JSON array of\n"
        "integers, or holds an id outside the vocabulary, is an error naming the line.\n\n"
        "example:\n"
        "  echo '[9906, 1917]' | tokbench decode --tokenizer cl100k        # Hello world",
    )
    parser.add_argument("--tokenizer", required=True, metavar="PATH|NAME", help="tokenizer JSON file or name")
    parser.add_argument("--input", metavar="FILE", help="JSON arrays of ids, one per line (default: stdin)")
    parser.set_defaults(handler=run_decode)


def run_decode(args: argparse.Namespace) -> int:
    tokenizer = bpe.load(args.tokenizer)
    with ExitStack() as stack:
        handle, name = _stdin_or_file(args.input, stack)
        texts = [
            _decode_line(tokenizer, line, f"{name} line {number}")
            for number, line in enumerate(read_lines(handle, name), start=1)
        ]
    _write_lines(texts)
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
    out = Path(args.out)
    _check_output_path(out)
    exported = to_hf_json(bpe.load(args.tokenizer))
    with _writing(out):
        atomic_write_text(out, exported)
    print(f"exported {args.tokenizer} -> {out} ({args.format})")
    return 0
