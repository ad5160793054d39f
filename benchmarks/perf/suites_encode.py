"""The ``encode`` suite: ``tokbench encode`` against a tiktoken script, in-process encoders, long inputs."""

from __future__ import annotations

import sys
from itertools import islice
from pathlib import Path
from typing import Any

from benchmarks.perf.common import (
    ENCODE_TARGET,
    HEADLINE_VOCAB,
    NOT_RUN,
    Bench,
    Text,
    _fastest,
    _fmt,
    _ok,
    _peak,
    _ratio,
    _seconds,
    _table,
)

ENCODERS = {
    "tokbench": "tokbench byte-bpe",
    "tiktoken-ours": "tiktoken, our merges",
    "hf-ours": "HF tokenizers, our merges",
    "cl100k": "tiktoken cl100k (100k vocab)",
}


def _headline_tokenizer(bench: Bench, text: Text) -> Path:
    """byte-bpe 32k trained on ``text`` (once; saved in the work folder)."""
    tokenizer = bench.options.work_dir / f"byte-bpe-{HEADLINE_VOCAB}-{text.path.stem}.json"
    if not tokenizer.exists():
        bench.measure(
            {
                "task": "train-tokbench",
                "family": "byte-bpe",
                "corpus": str(text.path),
                "vocab_size": HEADLINE_VOCAB,
                "save": str(tokenizer),
            }
        )
    return tokenizer


def suite_encode(bench: Bench) -> None:
    options = bench.options
    speedups: list[tuple[str, float | None, str]] = []
    for text in bench.texts(options.encode_mb):
        _encode_text(bench, text, speedups)
    bench.target(
        f"`tokbench encode` throughput >= {ENCODE_TARGET}x the tiktoken-plus-json script on each seed",
        "; ".join(f"{label}: {_fmt(ratio)}x ({detail})" for label, ratio, detail in speedups),
        None if any(ratio is None for _, ratio, _ in speedups) else all(r >= ENCODE_TARGET for _, r, _ in speedups),
    )
    _long_inputs(bench)


def _encode_text(bench: Bench, text: Text, speedups: list[tuple[str, float | None, str]]) -> None:
    options = bench.options
    corpus = text.path
    tokenizer = _headline_tokenizer(bench, text)
    megabytes = corpus.stat().st_size / 1e6

    def cli_encode(source: Path) -> dict[str, Any]:
        return bench.measure(
            {
                "task": "command",
                "argv": [sys.executable, "-m", "benchmarks.cli", "encode", "--tokenizer", str(tokenizer),
                         "--input", str(source), "--out", str(options.work_dir / "encoded-tokbench.jsonl")],
            }
        )  # fmt: skip

    def script_encode() -> dict[str, Any]:
        return bench.measure(
            {
                "task": "command",
                "argv": [sys.executable, "-m", "benchmarks.perf.encode_tiktoken", str(corpus),
                         str(options.work_dir / "encoded-tiktoken.jsonl")],
            }
        )  # fmt: skip

    # untimed: a fresh install compiles the encoding kernels once (numba caches them in bpe/__pycache__), a
    # one-time cost that is not the throughput compared here
    warm_up = options.work_dir / "encode-warm-up.txt"
    with corpus.open(encoding="utf-8") as lines:
        warm_up.write_text("".join(islice(lines, 1000)), encoding="utf-8")
    cli_encode(warm_up)
    # the two commands alternate, so a change of load hits both alike; the fastest of each counts
    runs: dict[str, list[dict[str, Any]]] = {"cli": [], "script": []}
    for _ in range(options.repeats):
        runs["cli"].append(cli_encode(corpus))
        if "tiktoken" in options.peers:
            runs["script"].append(script_encode())
    cli = _fastest(runs["cli"])
    script = _fastest(runs["script"]) if runs["script"] else NOT_RUN
    speedups.append((text.label, _ratio(script, cli), f"{_seconds(cli)} s vs {_seconds(script)} s"))
    bench.sections.append(
        f"### Encoding {megabytes:.1f} MB from the command line (JSON lines out; {text.label})\n\n"
        + _table(
            ["command", "wall s", "MB/s", "peak MB"],
            [
                [
                    f"tokbench encode (byte-bpe {HEADLINE_VOCAB // 1000}k)",
                    _seconds(cli),
                    megabytes / cli["seconds"] if _ok(cli) else None,
                    _fmt(cli.get("command_peak_mb"), 0),
                ],
                [
                    "python script: tiktoken cl100k + json.dumps per line",
                    _seconds(script),
                    megabytes / script["seconds"] if _ok(script) else None,
                    _fmt(script.get("command_peak_mb"), 0),
                ],
            ],
        )
        + "\n\nBoth are whole processes (interpreter start, imports and loading the tokenizer included), "
        + f"alternated {options.repeats} time(s), the fastest of each shown, after one untimed `tokbench encode` "
        + "of the text's first 1,000 lines (a fresh install compiles its encoding kernels once)."
    )
    impls = ["tokbench"] + [
        i for i in ("tiktoken-ours", "hf-ours", "cl100k") if ("hf" if i == "hf-ours" else "tiktoken") in options.peers
    ]
    rows = []
    for processes in sorted({1, options.processes}):
        results = {
            impl: bench.measure(
                {
                    "task": "encode",
                    "impl": impl,
                    "corpus": str(corpus),
                    "tokenizer": str(tokenizer),
                    "processes": processes,
                }
            )
            for impl in impls
        }
        reference = results.get("tiktoken-ours", NOT_RUN)
        for impl, result in results.items():
            rows.append(
                [
                    ENCODERS[impl],
                    processes,
                    result.get("first_pass_s"),
                    _seconds(result),
                    megabytes / result["seconds"] if _ok(result) else None,
                    result.get("tokens"),
                    _ratio(reference, result),
                ]
            )
    bench.sections.append(
        f"### Encoding {megabytes:.1f} MB in process, per-line calls (byte-bpe {HEADLINE_VOCAB // 1000}k; "
        f"{text.label})\n\n"
        + _table(
            [
                "implementation",
                "processes",
                "first pass s",
                "warm s",
                "MB/s (warm)",
                "tokens",
                "throughput / tiktoken (our merges)",
            ],
            rows,
        )
    )


def _long_inputs(bench: Bench) -> None:
    """One word of each ``LONG_WORD_MB`` (the letters of the diverse text, nothing between them) and
    one line of ``LONG_LINE_MB`` (the diverse text with its line ends made spaces), each encoded by one
    call of tokbench, tiktoken and HF with the same byte-bpe 32k vocabulary."""
    options = bench.options
    text = bench.texts(options.encode_mb)[0]
    tokenizer = _headline_tokenizer(bench, text)
    line_mb = options.long_line_mb
    source = str(bench.corpus(max(line_mb, 2 * max(options.long_word_mb))))  # letters are most of the text
    inputs = [(f"one word of {size:g} MB", "word", size, source) for size in options.long_word_mb]
    inputs.append((f"one line of {line_mb:g} MB", "line", line_mb, source))
    impls = ["tokbench"] + [
        i for i in ("tiktoken-ours", "hf-ours") if ("hf" if i == "hf-ours" else "tiktoken") in options.peers
    ]
    rows = []
    for label, shape, size, source in inputs:
        results = {
            impl: bench.measure(
                {
                    "task": "encode-long",
                    "impl": impl,
                    "shape": shape,
                    "megabytes": size,
                    "source": source,
                    "tokenizer": str(tokenizer),
                }
            )
            for impl in impls
        }
        digests = {result.get("digest") for result in results.values() if _ok(result)}
        for impl, result in results.items():
            rows.append(
                [
                    label,
                    ENCODERS[impl],
                    _seconds(result),
                    size / result["seconds"] if _ok(result) else None,
                    result.get("tokens"),
                    len(digests) == 1 if _ok(result) else "-",
                    _peak(result),
                ]
            )
    bench.sections.append(
        f"### Encoding long inputs in one call (byte-bpe {HEADLINE_VOCAB // 1000}k trained on {text.label}; "
        f"inputs cut from seed {options.seeds[0]})\n\n"
        + _table(["input", "implementation", "s", "MB/s", "tokens", "same ids as the others", "peak MB"], rows)
        + "\n\nThe word is the letters of the diverse text in order with nothing between them (one pre-token);"
        " a time that grows in proportion to the size (MB/s steady) is linear or n log n encoding."
    )
