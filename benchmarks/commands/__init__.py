"""One module per group of `tokbench` subcommands; each exposes ``register(subparsers)``.

A command handler receives the parsed ``argparse.Namespace`` and returns an exit
status.  User errors are raised as ``bpe.TokenizerError``,
``corpora.CorpusError`` or ``benchmarks.errors.BenchmarkError``; ``benchmarks.cli``
prints them as one line and exits 2.
"""
