"""``python -m benchmarks.perf ...`` is ``tokbench bench ...``."""

import sys

from benchmarks.cli import main

sys.exit(main(["bench", *sys.argv[1:]]))
