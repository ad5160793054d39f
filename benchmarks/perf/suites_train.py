"""The ``train`` suite (training time and peak memory against the peers, and where the time goes)
and the ``memory`` suite (``tokbench train`` on 1 GB)."""

from __future__ import annotations

import sys
from typing import Any

from benchmarks.perf.common import (
    GIGABYTE_TARGET_MB,
    HEADLINE_VOCAB,
    MATCHING_OPTIONS,
    MEMORY_TARGET,
    NOT_RUN,
    TIME_TARGET,
    Bench,
    Text,
    _all_met,
    _fastest,
    _fmt,
    _ok,
    _peak,
    _ratio,
    _seconds,
    _table,
)

TOKBENCH_PHASES = (
    ("import numba and the cached kernels", "import_s"),
    ("count pre-tokens (all cores, as `bpe.train`)", "count_s"),
    ("counted pre-tokens -> merge-kernel words", "to_words_s"),
    ("merge kernel", "kernel_s"),
    ("build the tokenizer, write its file (`tokbench train` writes; `bpe.train` does not)", "build_write_s"),
)


def suite_train(bench: Bench) -> None:
    options = bench.options
    real = bench.real()
    headline = [*bench.texts(max(options.train_mb)), *([real] if real else [])]
    smaller = [megabytes for megabytes in options.train_mb if megabytes != max(options.train_mb)]
    texts = [text for megabytes in smaller for text in bench.texts(megabytes)] + headline
    per_family: dict[str, dict[str, list[tuple[str, float | None, str]]]] = {
        family: {"time": [], "memory": []} for family in options.families
    }
    rows = []
    for text in texts:
        corpus = str(text.path)
        for vocab in options.vocab_sizes:
            # sentencepiece and tokbench alternate, so a change of load hits both alike
            runs: dict[str, list[dict[str, Any]]] = {"spm": [], **{family: [] for family in options.families}}
            for _ in range(options.repeats):
                if "spm" in options.peers:
                    runs["spm"].append(
                        bench.measure(
                            {"task": "train-spm", "corpus": corpus, "vocab_size": vocab, "threads": options.spm_threads}
                        )
                    )
                for family in options.families:
                    runs[family].append(
                        bench.measure(
                            {"task": "train-tokbench", "family": family, "corpus": corpus, "vocab_size": vocab}
                        )
                    )
            theirs = _fastest(runs["spm"]) if runs["spm"] else NOT_RUN
            for family in options.families:
                ours = _fastest(runs[family])
                hf = (
                    bench.measure({"task": "train-hf", "family": family, "corpus": corpus, "vocab_size": vocab})
                    if "hf" in options.peers
                    else NOT_RUN
                )
                time_ratio, memory_ratio = _ratio(ours, theirs), _ratio(ours, theirs, "rss_peak_mb")
                rows.append(
                    [
                        text.label,
                        family,
                        vocab,
                        _seconds(ours),
                        _seconds(hf),
                        _seconds(theirs),
                        _ratio(ours, hf),
                        time_ratio,
                        _peak(ours),
                        _peak(hf),
                        _peak(theirs),
                        memory_ratio,
                    ]
                )
                if vocab == HEADLINE_VOCAB and text in headline:
                    per_family[family]["time"].append(
                        (text.label, time_ratio, f"{_seconds(ours)} s vs {_seconds(theirs)} s")
                    )
                    per_family[family]["memory"].append(
                        (text.label, memory_ratio, f"{_peak(ours)} MB vs {_peak(theirs)} MB")
                    )
    for family, ratios in per_family.items():
        where = f"{family} {HEADLINE_VOCAB // 1000}k on {max(options.train_mb):g} MB of each seed and the real text"
        _all_met(f"{where}: wall time <= {TIME_TARGET}x sentencepiece", ratios["time"], TIME_TARGET, bench)
        _all_met(f"{where}: peak RSS <= {MEMORY_TARGET}x sentencepiece", ratios["memory"], MEMORY_TARGET, bench)
    repeats = f"; tokbench and sentencepiece alternated {options.repeats} times, the fastest run of each shown" * (
        options.repeats > 1
    )
    bench.sections.append(
        f"### Training (sentencepiece BPE on {options.spm_threads} threads{repeats})\n\n"
        + _table(
            [
                "text",
                "family",
                "vocab",
                "tokbench s",
                "HF s",
                "spm s",
                "tokbench / HF",
                "tokbench / spm",
                "tokbench peak MB",
                "HF peak MB",
                "spm peak MB",
                "RSS tokbench / spm",
            ],
            rows,
        )
    )
    for text in headline:
        suite_phases(bench, text)


def suite_phases(bench: Bench, text: Text) -> None:
    """Where the training time goes on one text: tokbench's steps per family beside sentencepiece's phases."""
    options = bench.options
    corpus = str(text.path)
    phases = {
        family: bench.measure(
            {"task": "train-phases", "family": family, "corpus": corpus, "vocab_size": HEADLINE_VOCAB}
        )
        for family in options.families
    }
    rows = [[label, *(_fmt(phases[family].get(key)) for family in options.families)] for label, key in TOKBENCH_PHASES]
    rows.append(
        ["sum", *(_fmt(sum(phases[family].get(key, 0.0) for _, key in TOKBENCH_PHASES)) for family in options.families)]
    )
    rows.append(
        [
            "(count pre-tokens in 1 thread, for comparison)",
            *(_fmt(phases[f].get("count_serial_s")) for f in options.families),
        ]
    )
    facts = []
    for family in options.families:
        result = phases[family]
        if not _ok(result):
            facts.append(f"{family}: error: {result['error']}")
            continue
        facts.append(
            f"{family}: {result['pretokens']:,} pre-tokens, {result['pretoken_types']:,} distinct, "
            f"{result['symbols']:,} symbols in the kernel's words, {result['merges']:,} merges, "
            f"the 1-thread count equals the all-core count: {result['counts_equal']}"
        )
    section = (
        f"### Where training time goes ({HEADLINE_VOCAB // 1000}k, {text.label})\n\n"
        + _table(["tokbench step", *(f"{family} s" for family in options.families)], rows)
        + "\n\n"
        + "; ".join(facts)
        + "."
    )
    if "spm" in options.peers:
        spm = bench.measure(
            {"task": "train-spm-phases", "corpus": corpus, "vocab_size": HEADLINE_VOCAB, "threads": options.spm_threads}
        )
        if _ok(spm):
            spm_rows = [[name, seconds] for name, seconds in spm["phases"].items()] + [["total", spm["seconds"]]]
            section += (
                f"\n\nsentencepiece BPE ({options.spm_threads} threads), from the timestamps of its log lines:\n\n"
                + _table(["sentencepiece phase", "s"], spm_rows)
            )
        else:
            section += f"\n\nsentencepiece phases: error: {spm['error']}"
    bench.sections.append(section)


def suite_memory(bench: Bench) -> None:
    options = bench.options
    rows = []
    per_family: dict[str, list[tuple[str, float | None, str]]] = {family: [] for family in options.families}
    for text in bench.texts(options.memory_mb):
        for family in options.families:
            options = MATCHING_OPTIONS[family].items()
            extra = [part for name, value in options for part in (f"--{name.replace('_', '-')}", value)]
            argv = [
                sys.executable,
                "-m",
                "benchmarks.cli",
                "train",
                "--kind",
                family,
                "--vocab-size",
                str(HEADLINE_VOCAB),
                "--input",
                str(text.path),
                "--out",
                str(options.work_dir / f"{family}-memory.json"),
                *extra,
            ]
            result = bench.measure({"task": "command", "argv": argv})
            peak = result.get("command_peak_mb")
            rows.append([text.label, family, _seconds(result), _fmt(peak, 0)])
            per_family[family].append(
                (
                    text.label,
                    None if peak is None else peak / GIGABYTE_TARGET_MB,
                    f"{_fmt(peak, 0)} MB, {_seconds(result)} s",
                )
            )
    for family, per_text in per_family.items():
        _all_met(
            f"{family} {HEADLINE_VOCAB // 1000}k on {options.memory_mb:g} MB of each seed trains within "
            f"{GIGABYTE_TARGET_MB} MB",
            per_text,
            1.0,
            bench,
            "ratio: peak / the limit",
        )
    bench.sections.append(
        f"### `tokbench train` on {options.memory_mb:g} MB of diverse text (the CLI streams its input)\n\n"
        + _table(["text", "family", "wall s", "peak MB"], rows)
    )
