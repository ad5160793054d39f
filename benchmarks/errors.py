"""User-facing errors and warnings of the experiment layer (configs, runs, reports, checks)."""

import sys

from bpe.errors import CodedError


class BenchmarkError(CodedError, ValueError):
    """Bad config, bad run directory, bad baseline: the message says what and where; ``code`` names the kind of
    problem (docs/errors.md), ``value`` the offending value, ``field`` where it was given."""

    default_code = "benchmark_error"


def warn(message: str) -> None:
    """Tell the user, on stderr, what was repaired or redone (a damaged cache entry, a damaged unit file)."""
    print(f"tokbench: warning: {message}", file=sys.stderr)


class BenchmarkWarning(UserWarning):
    """A run went on, but with less than the config asked for (e.g. parity over part of a parallel set)."""
