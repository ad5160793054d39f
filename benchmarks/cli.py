"""The `tokbench` command line: one entry point, subcommands registered by
``benchmarks.commands.*`` modules.

One error model (README, "Errors and exit codes"): a user mistake (bad input, config, spec,
baseline, path; an OS refusal such as a read-only folder or a full disk) is one line on stderr and
exit status 2; `tokbench check` and `tokbench reproduce` exit 1 when numbers differ; anything else is
a bug in tokbench: one line saying so and exit status 70 (``EX_SOFTWARE``).  No traceback reaches
the user unless ``TOKBENCH_DEBUG=1``.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
import warnings
from collections.abc import Sequence

from benchmarks.errors import BenchmarkError
from bpe.base import TokenizerError, is_panic
from corpora.errors import CorpusError, CorpusWarning

# modules that add subcommands, in the order `--help` lists them
COMMAND_MODULES = [
    "benchmarks.commands.training",  # count, train
    "benchmarks.commands.tokenizers",  # encode, decode, export
    "benchmarks.commands.show",  # show
    "benchmarks.commands.explore",  # explore (a run's tokenizers on any text, served locally)
    "benchmarks.commands.vocab",  # diff, audit
    "benchmarks.commands.reproduce",  # reproduce
    "benchmarks.commands.corpora",  # corpora list/show/stats/validate/agreement
    "benchmarks.commands.experiments",  # run, report, check
    "benchmarks.commands.bench",  # bench (performance harness)
    "benchmarks.commands.share",  # export-results, compare
    "benchmarks.commands.data",  # data fetch/verify
]


#: exceptions whose message is shown to the user without a traceback
USER_ERRORS = (TokenizerError, BenchmarkError, CorpusError)
#: exit statuses: a user mistake, and a bug (sysexits.h EX_SOFTWARE); `check` uses 1 for a regression
USER_ERROR, INTERNAL_ERROR = 2, 70
DEBUG_VARIABLE = "TOKBENCH_DEBUG"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tokbench",
        description="Multilingual tokenization benchmark: train tokenizers, evaluate them, write paper-style reports.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def one_line(message: object) -> str:
    """A message as one line (a library's text may span several)."""
    return " ".join(line.strip() for line in str(message).splitlines() if line.strip())


def os_error_message(exc: OSError) -> str:
    """An OS refusal in one line naming the path: ``runs/x: Permission denied``."""
    reason = exc.strerror or type(exc).__name__
    paths = [str(name) for name in (exc.filename, exc.filename2) if name is not None]
    return f"{' -> '.join(paths)}: {reason}" if paths else f"{reason} ({exc})"


def describe_failure(exc: Exception) -> tuple[int, str]:
    """The exit status and the one line a failure is reported with."""
    if isinstance(exc, USER_ERRORS):
        return USER_ERROR, f"tokbench: error: {one_line(exc)}"
    if isinstance(exc, OSError):  # permissions, not a directory, disk full, read-only file system
        return USER_ERROR, f"tokbench: error: {one_line(os_error_message(exc))}"
    return INTERNAL_ERROR, (f"tokbench: internal error (a bug in tokbench): {type(exc).__name__}: {one_line(exc)}; "
                            f"run again with {DEBUG_VARIABLE}=1 for the traceback")  # fmt: skip


def show_warning(message: Warning | str, category: type[Warning], *_: object, **__: object) -> None:
    """A warning as one line (no source line): ``tokbench: warning: ...``."""
    label = "" if issubclass(category, CorpusWarning) else f"{category.__name__}: "
    print(f"tokbench: warning: {label}{one_line(message)}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with warnings.catch_warnings():
            warnings.showwarning = show_warning
            return int(args.handler(args) or 0)
    except BrokenPipeError:  # e.g. `tokbench encode ... | head`: the reader stopped, the outcome stands
        # (a handler that knows its exit status before printing, such as check's regression, records it in
        # args.outcome); stdout goes to /dev/null so that the interpreter's final flush cannot fail again
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return int(getattr(args, "outcome", 0))
    except KeyboardInterrupt:
        print("tokbench: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        if os.environ.get(DEBUG_VARIABLE) == "1":
            raise
        status, message = describe_failure(exc)
        print(message, file=sys.stderr)
        return status
    except BaseException as exc:  # a compiled library's panic (pyo3) is no Exception
        if not is_panic(exc) or os.environ.get(DEBUG_VARIABLE) == "1":
            raise
        status, message = describe_failure(RuntimeError(f"a compiled library panicked: {exc}"))
        print(message, file=sys.stderr)
        return status


if __name__ == "__main__":
    sys.exit(main())
