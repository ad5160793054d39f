"""Performance harness: training and encoding speed and memory against HF tokenizers,
sentencepiece and tiktoken, end-to-end run time, growth with corpus size.

Run it with ``tokbench bench`` or ``python -m benchmarks.perf``; figures go to
``benchmarks/perf/RESULTS.md`` with ``--results``.  Not part of the test suite (one smoke test
runs it on ~100 KB).  Method and scaling notes: ``benchmarks/perf/README.md``.
"""
