"""The `tokbench` command line: one entry point, subcommands registered by
``benchmarks.commands.*`` modules."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from benchmarks.errors import BenchmarkError
from bpe.base import TokenizerError
from corpora.errors import CorpusError

# modules that add subcommands, in the order `--help` lists them
COMMAND_MODULES = [
    "benchmarks.commands.tokenizers",  # train, encode, decode, export
    "benchmarks.commands.show",  # show
    "benchmarks.commands.reproduce",  # reproduce
    "benchmarks.commands.corpora",  # corpora list/show/stats/validate/agreement
    "benchmarks.commands.experiments",  # run, report, check
    "benchmarks.commands.bench",  # bench (performance harness)
]


#: exceptions whose message is shown to the user without a traceback
USER_ERRORS = (TokenizerError, BenchmarkError, CorpusError)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tokbench",
        description="Multilingual tokenization benchmark: train tokenizers, evaluate them, write paper-style reports.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except USER_ERRORS as exc:
        print(f"tokbench: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("tokbench: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `tokbench encode ... | head`
        return 0


if __name__ == "__main__":
    sys.exit(main())
