"""User-facing errors and warnings of the experiment layer (configs, runs, reports, checks)."""

import sys


class BenchmarkError(ValueError):
    """Bad config, bad run directory, bad baseline: the message says what and where."""


def warn(message: str) -> None:
    """Tell the user, on stderr, what was repaired or redone (a damaged cache entry, a damaged unit file)."""
    print(f"tokbench: warning: {message}", file=sys.stderr)


class BenchmarkWarning(UserWarning):
    """A run went on, but with less than the config asked for (e.g. parity over part of a parallel set)."""
