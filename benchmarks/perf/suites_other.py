"""The ``count`` (engines), ``sweep`` (vocabulary sweep), ``run`` (whole runs) and ``growth`` suites."""

from __future__ import annotations

from benchmarks.perf.common import (
    HEADLINE_VOCAB,
    NOT_RUN,
    RUN_TARGETS,
    SWEEP_SIZES,
    Bench,
    Text,
    _all_met,
    _ok,
    _peak,
    _ratio,
    _seconds,
    _table,
)


def suite_count(bench: Bench) -> None:
    options = bench.options
    for text in bench.texts(max(options.train_mb)):
        _count_text(bench, text)


def _count_text(bench: Bench, text: Text) -> None:
    options = bench.options
    corpus = str(text.path)
    engines = [("local", 1), ("local", options.processes), ("dask", options.processes)]
    results = [
        (engine, workers, bench.measure({"task": "count-engine", "file": corpus, "engine": engine, "workers": workers}))
        for engine, workers in engines
    ]
    serial = results[0][2]
    rows = []
    for engine, workers, result in results:
        label = (
            f"local, {workers} thread{'s' if workers > 1 else ''}"
            if engine == "local"
            else f"Dask LocalCluster, {workers} worker processes"
        )
        same = _ok(result, serial) and result["digest"] == serial["digest"]
        rows.append(
            [label, _seconds(result), result.get("shards"), result.get("distinct"), same if _ok(result) else "-"]
        )
    bench.sections.append(
        f"### Counting pre-tokens (gpt2 pre-tokenizer) on each engine ({text.label})\n\n"
        + _table(["engine", "wall s", "shards", "distinct pre-tokens", "same counts as 1 thread"], rows)
        + "\n\nDask's time includes starting the local cluster and each worker importing numba; on a real "
        "cluster the workers are already running."
    )


def suite_sweep(bench: Bench) -> None:
    sizes = ", ".join(f"{size // 1000}k" for size in SWEEP_SIZES)
    rows = []
    for text in bench.texts(min(bench.options.train_mb)):
        results = {
            mode: bench.measure(
                {"task": "sweep", "mode": mode, "corpus": str(text.path), "vocab_sizes": list(SWEEP_SIZES)}
            )
            for mode in ("separate", "once")
        }
        rows += [
            [text.label, "each size trained separately", _seconds(results["separate"]), _peak(results["separate"])],
            [
                text.label,
                "largest trained once, the rest derived (bpe.train_sweep)",
                _seconds(results["once"]),
                _peak(results["once"]),
            ],
        ]
    bench.sections.append(
        f"### A vocabulary sweep ({sizes}) of byte-bpe\n\n" + _table(["text", "how", "wall s", "peak MB"], rows)
    )


def suite_run(bench: Bench) -> None:
    """Cold end-to-end runs; with a reference commit, old and new alternate (``benchmarks.perf.reference``)."""
    from benchmarks.perf.reference import compare_runs

    options = bench.options
    rows, targets = compare_runs(bench, options.run_configs, options.reference, options.repeats)
    header = ["config", "this code s", "peak MB", "slowest silver analysis (the floor)",
              "`tokbench check` vs the baseline"]  # fmt: skip
    reference_note = ""
    if options.reference is not None:
        header += [f"reference {options.reference} s", "this / reference", "results.csv bytes = the reference's"]
        reference_note = (
            f"\n\nThe reference's results.csv is compared byte for byte, so it differs whenever the results' "
            f"columns or metrics changed after {options.reference} (10c6ea8, for one, wrote one `options` column "
            "where this code writes `opt_*` columns, and fewer metrics); whether this code's numbers hold is the "
            "`tokbench check` column, against the committed baseline of the config."
        )
        for config, ratio, detail in targets:
            limit = RUN_TARGETS.get(config)
            if limit is not None:
                _all_met(
                    f"cold `tokbench run {config}` <= {limit}x the reference commit's wall time",
                    [(config, ratio, detail)],
                    limit,
                    bench,
                    "same machine, old and new alternating",
                )
    bench.sections.append(
        "### End to end: `tokbench run` (cold caches, report included)\n\n"
        + _table(header, rows)
        + "\n\nThe slowest silver analysis (a stateful analyzer on one process: its words cannot be split, and "
        "the units needing its answers wait for it, while the others run) is the floor of a cold run, from the "
        "run's `manifest.json` (`timings`); its answers are cached by content, so a later run reads them."
        + reference_note
    )


def suite_growth(bench: Bench) -> None:
    options = bench.options
    rows = []
    for megabytes in options.growth_mb:
        corpus = str(bench.corpus(megabytes))  # the first seed only: growth is a curve, not a target
        task = {"family": "byte-bpe", "corpus": corpus, "vocab_size": HEADLINE_VOCAB}
        ours = bench.measure({"task": "train-tokbench", **task})
        hf = bench.measure({"task": "train-hf", **task}) if "hf" in options.peers else NOT_RUN
        bench.growth.append({"mb": megabytes, "tokbench": ours, "hf": hf})
        rows.append([megabytes, _seconds(ours), _peak(ours), _seconds(hf), _peak(hf), _ratio(ours, hf)])
    bench.sections.append(
        f"### Growth: byte-bpe {HEADLINE_VOCAB // 1000}k from {options.growth_mb[0]:g} to "
        f"{options.growth_mb[-1]:g} MB of diverse text (seed {options.seeds[0]})\n\n"
        + _table(["MB", "tokbench s", "tokbench peak MB", "HF s", "HF peak MB", "tokbench / HF"], rows)
    )
