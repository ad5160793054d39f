"""`tokbench count | train`: pre-token counts of text files, and a tokenizer trained on text or counts."""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import bpe
from benchmarks.commands.text_io import add_command, check_output_path, open_input, read_lines, require_text, writing
from benchmarks.commands.tokenizer_args import option_flag, option_flags
from benchmarks.errors import BenchmarkError
from bpe.base import Tokenizer
from bpe.models.trained import TrainedTokenizer
from bpe.options import options_by_name
from bpe.pipeline.pretokenizers import PRETOKENIZERS
from bpe.training.counts import PretokenCounts, count_pretokens, read_counts
from bpe.training.distributed import ENGINES


def register(subparsers: argparse._SubParsersAction) -> None:
    _register_count(subparsers)
    _register_train(subparsers)


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
    parser = add_command(
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
    from bpe.training.distributed import count_shards, file_shards

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
            counts = count_pretokens(require_text(lines, args.input), args.pretokenizer, workers=args.workers)
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
    check_output_path(out)
    started = time.perf_counter()
    counts = count_files(args)
    with writing(out):
        counts.save(out)
    print(
        f"counted {counts.total:,} pre-tokens ({len(counts):,} distinct, pre-tokenizer {args.pretokenizer}) in "
        f"{time.perf_counter() - started:.1f} s -> {out}"
    )
    return 0


# -- train ------------------------------------------------------------------


def _register_train(subparsers: argparse._SubParsersAction) -> None:
    parser = add_command(
        subparsers,
        "train",
        "Train a tokenizer on text files, or on pre-token counts, and save it as one JSON file.",
        "Options that a family does not use are an error (e.g. --pretokenizer for spm-*).\n"
        "Families: word, char, char-bpe, byte-bpe (written from scratch); spm-bpe, spm-unigram (sentencepiece);\n"
        "morfessor (Morfessor Baseline); bpe-knockout (BPE pruned with gold morphemes: needs --references).\n"
        "--counts (from `tokbench count`) trains the from-scratch families exactly as the counted text would,\n"
        "with the counts' pre-tokenizer; sentencepiece needs the text.\n"
        f"Encode-time options ({option_flags(options_by_name(encode_time_only=True))}) only change encoding: they are\n"
        "saved with the tokenizer, and `tokbench encode` takes them too.\n\n"
        "examples:\n"
        "  tokbench train --kind byte-bpe --vocab-size 8000 --input train.txt --out byte-bpe-8k.json\n"
        "  tokbench train --kind byte-bpe --vocab-size 32000 --counts counts.parquet --out byte-bpe-32k.json\n"
        "  tokbench train --kind char-bpe --vocab-size 8000 --normalizer jamo --pretokenizer morpheme \\\n"
        "      --input ko.txt --out ko-jamo-morpheme.json\n"
        "  tokbench train --kind bpe-knockout --vocab-size 8000 --references gold.tsv --input tr.txt --out tr-ko.json\n"
        "  tokbench train --kind parity-bpe --vocab-size 8000 --input tur=tr.txt eng=en.txt \\\n"
        "      --dev tur=flores-dev.tr eng=flores-dev.en --out parity-8k.json",
    )
    parser.add_argument("--kind", required=True, choices=list(bpe.FAMILIES), help="tokenizer family")
    parser.add_argument("--vocab-size", required=True, type=int, metavar="N", help="vocabulary size, specials included")
    for name, families in options_by_name().items():
        parser.add_argument(f"--{name.replace('_', '-')}", **option_flag(families))
    parser.add_argument(
        "--references",
        metavar="FILE",
        help="bpe-knockout: gold morphemes, one 'word<TAB>morph morph ...' per line (the morphs spell the word)",
    )
    parser.add_argument(
        "--dev",
        nargs="+",
        metavar="LANG=FILE",
        help="parity-bpe: each language's parallel dev sentences, one per line, line i the same sentence in every "
        "file; --input then names each language's training text the same way (LANG=FILE)",
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--input", nargs="+", metavar="FILE", help="training text, one text per line")
    source.add_argument("--counts", metavar="FILE", help="pre-token counts (Parquet) made by `tokbench count`")
    parser.add_argument("--out", required=True, metavar="PATH", help="tokenizer JSON file to write")
    _add_engine_arguments(parser)
    parser.set_defaults(handler=run_train)


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


def run_train(args: argparse.Namespace) -> int:
    out = Path(args.out)
    check_output_path(out)
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
    parallel = family.facts.training_input == "parallel"
    if (args.dev is not None) != parallel:
        needed = "needs --dev LANG=FILE ... and --input LANG=FILE ..." if parallel else "takes no --dev"
        raise BenchmarkError(f"--kind {args.kind} {needed}: --dev is for a family that trains on several languages "
                             "with their parallel dev sentences (parity-bpe)", code="needs_parallel_input",
                             value=args.kind, field="--dev")  # fmt: skip
    if parallel:
        if args.input is None:
            raise BenchmarkError(f"--kind {args.kind} trains on the text of each language: give --input LANG=FILE ...",
                                 code="needs_parallel_input", value=args.kind, field="--input")  # fmt: skip
        texts, dev = _language_lines(args.input, "--input"), _language_lines(args.dev, "--dev")
        started = time.perf_counter()
        tokenizer = family.train_parallel(texts, dev, args.vocab_size, progress=progress, workers=args.workers,
                                          **options)  # fmt: skip
    elif args.counts is not None:
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
            texts = require_text((line for handle, name in handles for line in read_lines(handle, name)), args.input)
            started = time.perf_counter()
            tokenizer = family.train(texts, args.vocab_size, progress=progress, workers=args.workers, **options)
    seconds = time.perf_counter() - started
    with writing(out):
        tokenizer.save(out)
    print(_summary(tokenizer, args.vocab_size, seconds, out))
    return 0


def _language_lines(values: list[str], flag: str) -> dict[str, list[str]]:
    """``LANG=FILE`` arguments -> each language's lines (every file read before training starts)."""
    files: dict[str, str] = {}
    for value in values:
        language, equals, path = value.partition("=")
        if not equals or not language or not path or language in files:
            why = f"{language!r} is named twice" if language in files else "expected LANG=FILE"
            raise BenchmarkError(f"{flag} {value}: {why} (one file per language)", code="bad_parallel_input",
                                 value=value, field=flag)  # fmt: skip
        files[language] = path
    lines: dict[str, list[str]] = {}
    for language, path in files.items():
        with open_input(path) as handle:
            lines[language] = list(require_text(read_lines(handle, path), [path]))
    return lines


def _summary(tokenizer: Tokenizer, requested: int, seconds: float, out: Path) -> str:
    merges = getattr(tokenizer, "merges", None)
    merges_text = f", {len(merges)} merges" if merges is not None else ""
    return (
        f"trained {tokenizer.family}: vocab {tokenizer.vocab_size} (requested {requested}){merges_text}, "
        f"{seconds:.1f} s -> {out}"
    )
