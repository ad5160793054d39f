"""One module per group of `tokbench` subcommands; each exposes ``register(subparsers)``.

A command handler receives the parsed ``argparse.Namespace`` and returns an exit
status.  User errors are raised as ``bpe.TokenizerError``,
``corpora.CorpusError`` or ``benchmarks.errors.BenchmarkError``; ``benchmarks.cli``
prints them as one line and exits 2.
"""

from benchmarks.errors import BenchmarkError

#: the most worker threads or processes a command starts: more than this gains nothing on any machine, and
#: each one costs memory (an unbounded --jobs ran out of memory instead of saying so)
MAX_JOBS = 256


def check_jobs(jobs: int, what: str) -> None:
    """``--jobs`` within 1..MAX_JOBS, else one clear error."""
    if not 1 <= jobs <= MAX_JOBS:
        raise BenchmarkError(f"--jobs {jobs}: expected a number of {what} from 1 to {MAX_JOBS}")
