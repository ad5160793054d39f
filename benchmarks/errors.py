"""User-facing errors of the experiment layer (configs, runs, reports, checks)."""


class BenchmarkError(ValueError):
    """Bad config, bad run directory, bad baseline: the message says what and where."""
