"""User-facing errors of the experiment layer (configs, runs, reports, checks)."""


class BenchmarkError(ValueError):
    """Bad config, bad run directory, bad baseline: the message says what and where."""


class BenchmarkWarning(UserWarning):
    """A run went on, but with less than the config asked for (e.g. parity over part of a parallel set)."""
