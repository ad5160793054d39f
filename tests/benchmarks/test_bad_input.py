"""Bad input, one row per case: what is given, the exit status, the names and values the one-line message
must hold (the file, key or value at fault, the flag or setting that helps: never its wording), and the
output that must not exist afterwards (a refused command leaves no partial output).

Every row runs ``tokbench`` in process (``benchmarks.cli.main``) on tiny real text: the first 100
FLORES-200 English lines of the sample data root (``tests/fixtures/data``), 60 for training and 40
for testing.  Rows that need a finished run, a second process (the run folder's lock) or a killed
one (``kill -9``, then resume) are the test functions after the tables.  No captured output of any
of them may hold a traceback.
"""

from __future__ import annotations

import base64
import errno
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import bpe
from benchmarks.cli import main
from benchmarks.files import result_columns
from benchmarks.run.config import load_config
from corpora.loader import split_role
from tests.conftest import REPO_ROOT, SAMPLE_DATA_ROOT
from tests.errors import raises_code

FLORES = (SAMPLE_DATA_ROOT / "flores" / "eng_Latn.txt").read_text(encoding="utf-8").splitlines()
TRAIN, TEST = "\n".join(FLORES[:60]) + "\n", "\n".join(FLORES[60:]) + "\n"
RUN = ["run", "{d}/cfg.toml", "--out", "{d}/out", "--data-dir", "{d}", "--no-report", "--quiet", "--jobs", "1"]


def spec(*sources: str, extra: str = "") -> str:
    """A corpus spec of the given ``[[sources]]`` tables (files relative to the data root {d})."""
    head = 'id = "kit"\nlanguage = "eng_Latn"\nlicense = "CC BY-SA 4.0"\ndescription = "test kit"\n'
    return head + extra + "".join(f"[[sources]]\n{source}\n" for source in sources)


def source(role: str, files: str, fmt: str = "text") -> str:
    return f'kind = "path"\nrole = "{role}"\nformat = "{fmt}"\nfiles = "{files}"\n'


GOOD_SPEC = spec(source("train", "train.txt"), source("test", "test.txt"))
TOKENIZERS = ('[[tokenizers]]\nkind = "char"\nvocab_sizes = [50, 100]\n\n'
              '[[tokenizers]]\nkind = "word"\nvocab_sizes = [100, 200]\n')


def config(head: str = "", tokenizers: str = TOKENIZERS, corpora: str = '["kit.toml"]') -> str:
    return f'name = "kit"\ncorpora = {corpora}\n{head}\n{tokenizers}\n[bootstrap]\nresamples = 20\n'


KIT = {"train.txt": TRAIN, "test.txt": TEST, "kit.toml": GOOD_SPEC, "cfg.toml": config()}

RESULT_HEADER = ",".join(c for c in result_columns() if not c.startswith("opt_")) + "\n"  # a run without options
RESULT_ROW = "kit,eng_Latn,char,char,family,100,,test,,,bytes_per_token,{value},1.0,2.0,40\n"
BASELINE_ROW = {"corpus": "kit", "tokenizer": "char", "vocab_size": 100, "options": {}, "eval_set": "test",
                "reference": "", "metric": "bytes_per_token", "value": 1.5}  # fmt: skip


def baseline(**changes: Any) -> str:
    return json.dumps({"format": "tokbench-baseline", "format_version": 2, "rows": [BASELINE_ROW], **changes})


@dataclass(frozen=True)
class Case:
    """``files`` are written into a fresh folder {d} first (text, or bytes); ``argv`` and ``env`` may name
    {d}; ``absent``: paths under {d} that must not exist afterwards; ``forbidden``: words no output may
    hold; ``fail``: a dotted function replaced by one raising ``OSError(errno, ..., {d}/<path>)``."""

    id: str
    argv: list[str]
    status: int
    words: tuple[str, ...]
    files: dict[str, str | bytes] = field(default_factory=dict)
    absent: tuple[str, ...] = ()
    forbidden: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    fail: tuple[str, int, str] | None = None


def rank_file(tokens: list[bytes], repeat: int | None = None) -> bytes:
    """A tiktoken rank file ranking ``tokens`` in order (``repeat``: that line given twice)."""
    lines = [base64.b64encode(token) + b" %d" % rank for rank, token in enumerate(tokens)]
    if repeat is not None:
        lines.append(lines[repeat])
    return b"\n".join(lines) + b"\n"


BYTES = [bytes([byte]) for byte in range(256)]


def tekken(vocab_size: int, specials: int) -> str:
    vocab = [{"rank": rank, "token_bytes": base64.b64encode(token).decode()} for rank, token in enumerate(BYTES)]
    return json.dumps({"config": {"pattern": r"\S+|\s+", "default_vocab_size": vocab_size,
                                  "default_num_special_tokens": specials}, "vocab": vocab})  # fmt: skip


def counts_file(pretokens: list[str], counts: list[int]) -> bytes:
    """A counts file (docs/formats.md) as the gpt2 pre-tokenizer would have written it."""
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    from bpe.pipeline.pretokenizers import GPT2_PATTERN
    from bpe.training.counts import FORMAT_NAME, FORMAT_VERSION

    table = pa.table({"pretoken": pretokens, "count": pa.array(counts, pa.int64())})
    metadata = {"format": FORMAT_NAME, "format_version": FORMAT_VERSION, "pretokenizer": "gpt2",
                "pretokenizer_pattern": GPT2_PATTERN}  # fmt: skip
    table = table.replace_schema_metadata({f"tokbench.{key}": value for key, value in metadata.items()})
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


def kit(**changes: str | bytes) -> dict[str, str | bytes]:
    return {**KIT, **changes}


CASES = [
    # -- 1: a corpus without test documents, found before training
    Case("1-train-only-corpus", RUN, 2, ("'kit'", 'role = "test"'),
         kit(**{"kit.toml": spec(source("train", "train.txt"))}), absent=("out",)),
    Case("1-validate-says-so", ["corpora", "validate", "{d}/kit.toml", "--data-dir", "{d}"], 0,
         ("tokbench: warning: kit: no test or eval documents", "needs them to compute metrics on"),
         kit(**{"kit.toml": spec(source("train", "train.txt"))})),
    Case("1-three-line-corpus", RUN, 2, ("'kit'", "test_fraction = 0.1"),
         kit(**{"tiny.txt": "\n".join(FLORES[:3]) + "\n", "kit.toml": spec(source("all", "tiny.txt"))}),
         absent=("out",)),
    # -- 2: output and cache folders that cannot be written
    Case("2-out-under-a-file", [*RUN[:3], "{d}/afile/sub", *RUN[4:]], 2, ("afile",),
         kit(afile="x"), absent=("afile/sub",)),
    Case("2-out-in-proc", [*RUN[:3], "/proc/tokbench-x", *RUN[4:]], 2, ("/proc/tokbench-x",), kit()),
    Case("2-cache-is-a-file", RUN, 2, ("cachefile", "TOKBENCH_CACHE"), kit(cachefile="x"),
         absent=("out",), env={"TOKBENCH_CACHE": "{d}/cachefile"}),
    Case("2-disk-full", RUN, 2, ("out/results.parquet", "No space left on device"), kit(),
         absent=("out/results.csv",), fail=("benchmarks.run.runner.write_results", errno.ENOSPC,
         "out/results.parquet")),
    Case("2-read-only", RUN, 2, ("out/manifest.json", "Read-only file system"), kit(),
         fail=("benchmarks.run.runner.write_manifest", errno.EROFS, "out/manifest.json")),
    # -- 3: a truncated results.parquet (truncated unit files and cache entries: tests below)
    Case("3-truncated-results", ["check", "{d}/run", "--baseline", "{d}/base.json"], 2,
         ("results.parquet",), {"run/results.parquet": b"PAR1\x15\x04", "base.json": baseline()}),
    # -- 6: zero is a value, and an option a family ignores is an error (fixed by the option models)
    *[Case(f"6-{flag}", ["train", "--kind", kind, "--vocab-size", size, f"--{flag}", value, "--input", "{d}/train.txt",
                         "--out", "{d}/tok.json"], 2, words, kit(), absent=("tok.json",))
      for flag, kind, size, value, words in [
          ("min-frequency", "char-bpe", "300", "0", ("min_frequency", "0")),
          ("limit-alphabet", "char-bpe", "300", "0", ("limit_alphabet", "0")),
          ("character-coverage", "spm-bpe", "400", "0", ("character_coverage", "0")),
          ("limit-alphabet", "spm-bpe", "400", "50", ("spm-bpe", "limit_alphabet")),
      ]],
    # -- 7: `check` refuses ambiguous results and bad baselines
    Case("7-duplicate-result-rows", ["check", "{d}/run", "--baseline", "{d}/base.json"], 2,
         ("results.csv", "2", "metric='bytes_per_token'"),
         {"run/results.csv": RESULT_HEADER + RESULT_ROW.format(value=1.0) + RESULT_ROW.format(value=1.5),
          "base.json": baseline()}),
    Case("7-baseline-without-rows", ["check", "{d}/run", "--baseline", "{d}/base.json"], 2,
         ("base.json", "rows", "[]"),
         {"run/results.csv": RESULT_HEADER + RESULT_ROW.format(value=1.5), "base.json": baseline(rows=[])}),
    Case("7-duplicate-baseline-rows", ["check", "{d}/run", "--baseline", "{d}/base.json"], 2,
         ("base.json", "rows[0]", "rows[1]"),
         {"run/results.csv": RESULT_HEADER + RESULT_ROW.format(value=1.5),
          "base.json": baseline(rows=[BASELINE_ROW, dict(BASELINE_ROW, value=9.0)])}),
    Case("7-baseline-of-format-version-1", ["check", "{d}/run", "--baseline", "{d}/base.json"], 2,
         ("base.json", "format_version 1", "--update"),
         {"run/results.csv": RESULT_HEADER + RESULT_ROW.format(value=1.5),
          "base.json": baseline(format_version=1, rows=[dict(BASELINE_ROW, options="")])}),
    Case("7-negative-tolerance", ["check", "{d}/run", "--baseline", "{d}/base.json"], 2,
         ("base.json", "tolerance.relative", "-0.1"),
         {"run/results.csv": RESULT_HEADER + RESULT_ROW.format(value=1.5),
          "base.json": baseline(tolerance={"relative": -0.1, "absolute": 0})}),
    Case("7-infinite-tolerance", ["check", "{d}/run", "--baseline", "{d}/base.json"], 2,
         ("base.json", "tolerance.relative", "inf"),
         {"run/results.csv": RESULT_HEADER + RESULT_ROW.format(value=1.5),
          "base.json": baseline(tolerance={"relative": float("inf"), "absolute": 0})}),
    Case("7-baseline-of-a-later-format-version", ["check", "{d}/run", "--baseline", "{d}/base.json"], 2,
         ("base.json", "format_version", "3"),
         {"run/results.csv": RESULT_HEADER + RESULT_ROW.format(value=1.5), "base.json": baseline(format_version=3)}),
    Case("7-regression-exits-1", ["check", "{d}/run", "--baseline", "{d}/base.json"], 1,
         ("check FAILED", "1 regression"),
         {"run/results.csv": RESULT_HEADER + RESULT_ROW.format(value=1.0), "base.json": baseline()}),
    # -- 8: test or eval text inside the training text, found by content (across sources and paths)
    Case("8-flores-eval-inside-all", ["corpora", "validate", "{d}/leak.toml", "--data-dir", str(SAMPLE_DATA_ROOT)], 2,
         ("leak: ", "flores/eng_Latn.txt", 'on_leak = "drop"'),
         {"mixed.txt": "\n".join(FLORES[::-1]) + "\n",
          "leak.toml": spec(source("all", "{d}/mixed.txt"), source("eval", "flores/eng_Latn.txt")).replace(
              'id = "kit"', 'id = "leak"')}),
    Case("8-same-text-two-paths", ["corpora", "validate", "{d}/kit.toml", "--data-dir", "{d}"], 2,
         ("40", "test.txt:1", "copy.txt:1"),
         kit(**{"copy.txt": TEST, "kit.toml": spec(source("train", "train.txt"), source("train", "copy.txt"),
                                                   source("test", "test.txt"))})),
    Case("8-leak-stops-a-run", RUN, 2, ("copy.txt", "on_leak"),
         kit(**{"kit.toml": spec(source("train", "train.txt"), source("train", "copy.txt"), source("test", "test.txt")),
                "copy.txt": FLORES[70] + "\n"}), absent=("out",)),
    Case("8-drop-and-report", ["corpora", "validate", "{d}/kit.toml", "--data-dir", "{d}"], 0,
         ("1 test document(s) occur in 1 training document(s), dropped", 'on_leak = "drop"'),
         kit(**{"kit.toml": spec(source("train", "train.txt"), source("train", "copy.txt"), source("test", "test.txt"),
                                 extra='on_leak = "drop"\n'),
                "copy.txt": FLORES[70] + "\n"})),
    # -- 9: config problems found before any training, before the output folder is touched
    Case("9-repeated-vocab-size", RUN, 2, ("tokenizers[0].vocab_sizes", "300"),
         kit(**{"cfg.toml": config(tokenizers='[[tokenizers]]\nkind = "char"\nvocab_sizes = [300, 300]\n')}),
         absent=("out",)),
    Case("9-no-metrics", RUN, 2, ("metrics", "[]"), kit(**{"cfg.toml": config("metrics = []")}),
         absent=("out",)),
    Case("9-only-wall-clock-metrics", RUN, 2, ("metrics", "train_seconds", "costs.csv"),
         kit(**{"cfg.toml": config('metrics = ["train_seconds"]')}), absent=("out",)),
    Case("9-metric-without-partner", RUN, 2, ("'parity_vs_eng'", "English"),
         kit(**{"cfg.toml": config('metrics = ["parity_vs_eng"]')}), absent=("out",)),
    Case("9-metric-without-reference", RUN, 2, ("'boundary_f1'", "reference"),
         kit(**{"cfg.toml": config('metrics = ["boundary_f1"]')}), absent=("out",)),
    Case("9-optional-metric-without-reference", RUN, 2,
         ("extra_metrics", "'morphscore_upstream'", "MorphScore"),
         kit(**{"cfg.toml": config('extra_metrics = ["morphscore_upstream"]')}), absent=("out",)),
    Case("9-byte-bpe-below-256", RUN, 2, ("vocab_sizes[0]", "100", "260", "byte-bpe"),
         kit(**{"cfg.toml": config(tokenizers='[[tokenizers]]\nkind = "byte-bpe"\nvocab_sizes = [100]\n')}),
         absent=("out",)),
    Case("9-char-bpe-below-its-alphabet", RUN, 2,
         ("tokenizers[0] (char-bpe)", "vocab_size 20", "corpus 'kit'"),
         kit(**{"cfg.toml": config(tokenizers='[[tokenizers]]\nkind = "char-bpe"\nvocab_sizes = [20, 300]\n')}),
         absent=("out",)),
    Case("9-spm-below-its-characters", RUN, 2, ("vocab_size 270", "spm-unigram"),
         kit(**{"cfg.toml": config(tokenizers='[[tokenizers]]\nkind = "spm-unigram"\nvocab_sizes = [270]\n')}),
         absent=("out",)),
    Case("9-report-size-not-in-grid", RUN, 2, ("report.vocab_size", "500"),
         kit(**{"cfg.toml": config("[report]\nvocab_size = 500\n")}), absent=("out",)),
    Case("9-same-corpus-twice", RUN, 2, ("corpora", "'kit.toml'", "'kit'"),
         kit(**{"cfg.toml": config(corpora='["kit.toml", "{d}/kit.toml"]')}), absent=("out",)),
    # -- 10: names, paths and files
    Case("10-name-escapes-runs", RUN[:2], 2, ("name", "'../../x'"),
         kit(**{"cfg.toml": config().replace('name = "kit"', 'name = "../../x"')})),
    Case("10-unknown-production-name", RUN, 2, ("production[0]", "'cl100k'", "'mistral-v1'", "'gpt5'"),
         kit(**{"cfg.toml": config('production = ["gpt5"]')}), absent=("out",)),
    Case("10-unknown-tokenizer-name", ["encode", "--tokenizer", "gpt5"], 2, ("'gpt5'", "cl100k")),
    Case("10-published-name-without-a-data-root", ["encode", "--tokenizer", "o200k", "--input", "{d}/test.txt"], 2,
         ("o200k", "tokenizers/o200k_base.tiktoken", "TOKBENCH_DATA",
          "tokbench data fetch --only tokenizers"), kit()),
    Case("10-directory-in-files", ["corpora", "validate", "{d}/kit.toml", "--data-dir", "{d}"], 2,
         ("sub", "sub/*.txt"),
         kit(**{"sub/a.txt": TRAIN, "kit.toml": spec(source("train", "sub"), source("test", "test.txt"))})),
    Case("10-jsonl-parse-error", ["corpora", "validate", "{d}/kit.toml", "--data-dir", "{d}"], 2,
         ("bad.jsonl", "JSON parse error"),
         kit(**{"bad.jsonl": '{"text": "a"}\n{bad json\n', "kit.toml": spec(source("all", "bad.jsonl", "jsonl"))}),
         forbidden=("Failed to load JSON",)),
    Case("10-train-on-a-binary-file", ["train", "--kind", "char", "--vocab-size", "300", "--input", "{d}/prog",
                                       "--out", "{d}/tok.json"], 2, ("prog", "NUL"),
         {"prog": b"\x7fELF\x02\x01\x01\x00\x00\x00binary"}, absent=("tok.json",)),
    Case("10-corpus-loader-refuses-the-same", ["corpora", "validate", "{d}/kit.toml", "--data-dir", "{d}"], 2,
         ("prog", "NUL"),
         {"prog": b"\x7fELF\x02\x01\x01\x00\x00\x00binary", "kit.toml": spec(source("all", "prog"))}),
    Case("10-spec-path-not-found", RUN, 2,
         ("'nowhere.toml'", "{d}/nowhere.toml"),
         kit(**{"cfg.toml": config(corpora='["nowhere.toml"]')}), absent=("out",)),
    # -- 11: adversarial files and values
    Case("11-deeply-nested-json", ["encode", "--tokenizer", "{d}/deep.json", "--input", "{d}/test.txt"], 2,
         ("deep.json",), kit(**{"deep.json": '{"a":' * 200_000 + "1" + "}" * 200_000})),
    Case("11-tokenizer-is-a-device", ["encode", "--tokenizer", "/dev/zero", "--input", "{d}/test.txt"], 2,
         ("/dev/zero",), kit()),
    Case("11-encode-input-is-a-device", ["encode", "--tokenizer", "bytes", "--input", "/dev/zero"], 2,
         ("/dev/zero",), kit()),
    Case("11-pretrained-path-is-a-device", RUN, 2, ("'zero'", "/dev/zero"),
         kit(**{"cfg.toml": config('[[pretrained]]\npath = "/dev/zero"\nlabel = "zero"\n')}), absent=("out",)),
    *[Case(f"11-vocab-size-above-the-maximum-{kind}", ["train", "--kind", kind, "--vocab-size", "1000000000000",
                                                       "--input", "{d}/train.txt", "--out", "{d}/tok.json"], 2,
           ("vocab_size", "2147483647", "1000000000000"), kit(), absent=("tok.json",))
      for kind in ("byte-bpe", "spm-unigram", "char-bpe", "morfessor")],
    Case("11-config-vocab-size-above-the-maximum", RUN, 2, ("vocab_sizes[0]", "3000000000"),
         kit(**{"cfg.toml": config(tokenizers='[[tokenizers]]\nkind = "byte-bpe"\nvocab_sizes = [3000000000]\n')}),
         absent=("out",)),
    Case("11-negative-seed", RUN, 2, ("seed", "-1"),
         kit(**{"cfg.toml": config("seed = -1")}), absent=("out",)),
    Case("11-address-with-the-local-engine", ["train", "--kind", "byte-bpe", "--vocab-size", "300", "--engine", "local",
                                              "--address", "tcp://127.0.0.1:9", "--input", "{d}/train.txt", "--out",
                                              "{d}/tok.json"], 2,
         ("--address tcp://127.0.0.1:9", "--engine dask"), kit(), absent=("tok.json",)),
    Case("11-count-address-with-the-local-engine", ["count", "--pretokenizer", "gpt2", "--address", "tcp://127.0.0.1:9",
                                                    "--input", "{d}/train.txt", "--out", "{d}/counts.json"], 2,
         ("--address tcp://127.0.0.1:9", "--engine dask"), kit(), absent=("counts.json",)),
    Case("11-empty-label", RUN, 2, ("tokenizers[0].label", "''"),
         kit(**{"cfg.toml": config(tokenizers='[[tokenizers]]\nkind = "char"\nlabel = ""\nvocab_sizes = [100]\n')}),
         absent=("out",)),
    Case("11-label-escapes-out", RUN, 2, ("tokenizers[0].label", "../../../evil1"),
         kit(**{"cfg.toml": config(tokenizers='[[tokenizers]]\nkind = "char"\nlabel = "../../../evil1"\n'
                                              'vocab_sizes = [100]\n')}), absent=("out", "../../evil1-100.json")),
    Case("11-rank-file-without-a-byte", ["encode", "--tokenizer", "{d}/r.tiktoken", "--pattern", "gpt2", "--input",
                                         "{d}/test.txt"], 2, ("r.tiktoken", "b'a'", "0x61"),
         kit(**{"r.tiktoken": rank_file([token for token in BYTES if token != b"a"])})),
    Case("11-rank-file-token-twice", ["encode", "--tokenizer", "{d}/r.tiktoken", "--pattern", "gpt2", "--input",
                                      "{d}/test.txt"], 2, ("r.tiktoken line 257",),
         kit(**{"r.tiktoken": rank_file(BYTES, repeat=97)})),
    Case("11-rank-file-with-a-gap", ["encode", "--tokenizer", "{d}/r.tiktoken", "--pattern", "gpt2", "--input",
                                     "{d}/test.txt"], 2, ("r.tiktoken", "0..257", "rank 257"),
         kit(**{"r.tiktoken": rank_file([*BYTES, b"th", b"he"]).replace(b"aGU= 257", b"aGU= 258")})),
    Case("11-pattern-matches-empty", ["encode", "--tokenizer", "{d}/r.tiktoken", "--pattern", r"\d*", "--input",
                                      "{d}/test.txt"], 2, ("r.tiktoken", repr(r"\d*")),
         kit(**{"r.tiktoken": rank_file(BYTES)})),
    Case("11-tekken-vocab-below-specials", ["encode", "--tokenizer", "{d}/t.json", "--input", "{d}/test.txt"], 2,
         ("t.json", "default_vocab_size 100", "default_num_special_tokens 1000"),
         kit(**{"t.json": tekken(100, 1000)})),
    Case("11-unknown-analyzer", ["corpora", "validate", "{d}/kit.toml", "--data-dir", "{d}"], 2,
         ("kit: [[references]] 'silver'", "'nope'", "zemberek"),
         kit(**{"kit.toml": GOOD_SPEC + '[[references]]\nname = "silver"\nanalyzer = "nope"\n'})),
    Case("11-counts-past-int64", ["train", "--kind", "byte-bpe", "--vocab-size", "300", "--counts", "{d}/c.parquet",
                                  "--out", "{d}/tok.json"], 2, ("c.parquet", "64-bit"),
         kit(**{"c.parquet": counts_file(["day", " the", "day"], [2**62, 5, 2**62])}), absent=("tok.json",)),
    Case("11-reproduce-requested-language-wrong-length", ["reproduce", "petrov2023", "--data-dir", "{d}", "--languages",
                                                          "tur_Latn", "--out", "{d}/out"], 2,
         ("tur_Latn", "flores/tur_Latn.txt", "2,009"),
         {"flores/tur_Latn.txt": "\n".join(FLORES[:5]) + "\n"}, absent=("out",)),
    Case("11-reproduce-with-an-altered-tokenizer-file", ["reproduce", "petrov2023", "--data-dir", "{d}", "--languages",
                                                        "eng_Latn", "--out", "{d}/out"], 2,
         ("tokenizers/gpt2.tiktoken", "tokbench data fetch"),
         {"flores/eng_Latn.txt": "\n".join((FLORES * 21)[:2009]) + "\n", "tokenizers/gpt2.tiktoken": rank_file(BYTES)},
         absent=("out",)),
    # -- input that was already refused clearly, kept so it stays that way
    Case("spec-unknown-key", ["corpora", "validate", "{d}/kit.toml"], 2, ("kit.toml", "'colour'"),
         {"kit.toml": GOOD_SPEC.replace('license = "CC BY-SA 4.0"', 'license = "x"\ncolour = "red"')}),
    Case("spec-bad-language", ["corpora", "validate", "{d}/kit.toml"], 2, ("'language'", "'english'"),
         {"kit.toml": GOOD_SPEC.replace("eng_Latn", "english")}),
    Case("spec-not-toml", ["corpora", "validate", "{d}/kit.toml"], 2, ("kit.toml", "TOML"),
         {"kit.toml": "id = \n"}),
    Case("spec-missing-file", ["corpora", "validate", "{d}/kit.toml", "--data-dir", "{d}"], 2,
         ("test.txt",), {"train.txt": TRAIN, "kit.toml": GOOD_SPEC}),
    Case("unknown-corpus-id", ["corpora", "show", "nope"], 2, ("'nope'", "embedded-tur")),
    Case("config-unknown-key", RUN, 2, ("cfg.toml", "'colour'"),
         kit(**{"cfg.toml": config('colour = "red"')}), absent=("out",)),
    Case("config-bad-kind", RUN, 2, ("tokenizers[0].kind", "'bpe'"),
         kit(**{"cfg.toml": config(tokenizers='[[tokenizers]]\nkind = "bpe"\nvocab_sizes = [300]\n')}),
         absent=("out",)),
    Case("config-not-found", ["run", "{d}/none.toml"], 2, ("none.toml",)),
    Case("config-unknown-name", ["run", "quik"], 2, ("'quik'", "quick")),
    Case("jobs-zero", [*RUN[:-1], "0"], 2, ("--jobs 0",), kit(), absent=("out",)),
    Case("data-dir-missing", [*RUN[:5], "{d}/nowhere", *RUN[6:]], 2, ("nowhere",), kit(),
         absent=("out",)),
    Case("out-holds-other-files", RUN, 2, ("{d}/out", "--out"), kit(**{"out/notes.txt": "mine"})),
    Case("tokenizer-truncated", ["encode", "--tokenizer", "{d}/tok.json", "--input", "{d}/test.txt"], 2,
         ("tok.json", "JSON"), {"tok.json": '{"format": "tokbench-tokenizer", "fam', "test.txt": TEST}),
    Case("tokenizer-foreign-json", ["encode", "--tokenizer", "{d}/tok.json"], 2,
         ("tok.json",), {"tok.json": '{"hello": 1}'}),
    Case("tokenizer-unknown-format", ["encode", "--tokenizer", "cl100k", "--format", "bogus"], 2, ("invalid choice",)),
    Case("decode-id-out-of-range", ["decode", "--tokenizer", "bytes", "--input", "{d}/ids.txt"], 2,
         ("ids.txt line 2", "999"), {"ids.txt": "[104, 105]\n[999]\n"}),
    Case("decode-not-ids", ["decode", "--tokenizer", "bytes", "--input", "{d}/ids.txt"], 2,
         ("ids.txt line 1",), {"ids.txt": '["a"]\n'}),
    Case("check-without-run", ["check", "{d}/nowhere", "--baseline", "{d}/base.json"], 2,
         ("nowhere", "results.parquet", "results.csv"), {"base.json": baseline()}),
    Case("check-foreign-baseline", ["check", "{d}/run", "--baseline", "{d}/base.json"], 2,
         ("base.json", '"format": "tokbench-baseline"'),
         {"run/results.csv": RESULT_HEADER + RESULT_ROW.format(value=1.5), "base.json": '{"rows": []}'}),
    Case("report-without-run", ["report", "{d}/nowhere"], 2, ("nowhere",)),
    Case("check-infinite-tolerance", ["check", "{d}/run", "--baseline", "{d}/base.json"], 2,
         ("base.json", "tolerance.relative"), {"run/results.csv": RESULT_HEADER + RESULT_ROW.format(value=0.1),
                                               "base.json": baseline(tolerance={"relative": float("inf")})}),
]


def _place(value: str, folder: Path) -> str:
    return value.replace("{d}", str(folder))


def tokbench(argv: list[str], capfd: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """One in-process call: exit status, stdout, stderr (file-descriptor level: library loggers too)."""
    try:
        status = main(argv)
    except SystemExit as leaving:  # argparse
        status = int(leaving.code or 0)
    out, err = capfd.readouterr()
    assert "Traceback" not in out + err
    return status, out, err


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOKBENCH_CACHE", str(tmp_path_factory.getbasetemp() / "bad-input-cache"))
    monkeypatch.delenv("TOKBENCH_DATA", raising=False)
    monkeypatch.delenv("TOKBENCH_DEBUG", raising=False)


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_bad_input(case: Case, tmp_path: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):
    for name, content in case.files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(_place(content, tmp_path), encoding="utf-8")
    for name, value in case.env.items():
        monkeypatch.setenv(name, _place(value, tmp_path))
    if case.fail is not None:
        target, number, where = case.fail
        module, function = target.rsplit(".", 1)

        def refuse(*args: Any, **kwargs: Any) -> None:
            raise OSError(number, os.strerror(number), str(tmp_path / where))

        monkeypatch.setattr(f"{module}.{function}", refuse)
    monkeypatch.chdir(tmp_path.parent)  # a relative spec path must be found beside the config, not here

    status, out, err = tokbench([_place(arg, tmp_path) for arg in case.argv], capfd)

    assert status == case.status, err
    message = out + err
    if status == 2:  # one line: tokbench's, or argparse's after its usage lines
        errors = [line for line in err.splitlines() if re.match(r"tokbench( \w+)*: error: ", line)]
        assert len(errors) == 1 and err.rstrip().endswith(errors[0]), err
        message = errors[0]
    for word in case.words:
        assert _place(word, tmp_path) in message, (word, message)
    for word in case.forbidden:
        assert word not in out + err
    for name in case.absent:
        assert not (tmp_path / name).exists(), name


def test_the_three_line_corpus_has_no_test_document() -> None:
    """The row above depends on it: the split of role "all" keeps all three lines for training."""
    assert [split_role(f"tiny.txt:{line}", 0.1) for line in (1, 2, 3)] == ["train"] * 3


# --------------------------------------------------------------------------- the API


def spm_trained() -> bpe.Tokenizer:
    return bpe.train("spm-bpe", FLORES[:60], 400)


def test_sentencepiece_refuses_a_lone_surrogate_like_every_family() -> None:
    """Case 5: a TokenizerError (not sentencepiece's RuntimeError) for text without a UTF-8 form."""
    for kind in bpe.FAMILIES:
        gold = {"references": {"before": [2]}} if kind == "bpe-knockout" else {}  # it trains on gold morphemes
        gold = {"transition": 300} if kind == "superbpe" else gold  # its stage-1 size is required
        if bpe.family_class(kind).facts.training_input == "parallel":  # per-language text and a dev set
            tokenizer = bpe.family_class(kind).train_parallel({"x": FLORES[:60]}, {"x": FLORES[60:70]}, 400)
        else:
            tokenizer = spm_trained() if kind.startswith("spm") else bpe.train(kind, FLORES[:60], 400, **gold)
        with raises_code(bpe.TokenizerError, "lone_surrogate", value="\ud800"):
            tokenizer.encode("abc \ud800 def")
        with raises_code(bpe.TokenizerError, "lone_surrogate", value="\udfff"):
            tokenizer.encode_with_spans("\udfff")


def test_a_panic_of_a_compiled_library_is_a_tokenizer_error() -> None:
    """Case 11: tiktoken panics (a BaseException) on a byte without a token; the loader refuses such files,
    and an encoder built around the check still turns the panic into a TokenizerError naming the tokenizer."""
    import tiktoken

    from bpe.pretrained.tiktoken_bpe import TiktokenTokenizer

    ranks = {token: rank for rank, token in enumerate(token for token in BYTES if token != b"a")}
    encoding = tiktoken.Encoding("no-a", pat_str=r"\S+|\s+", mergeable_ranks=ranks, special_tokens={})
    with raises_code(bpe.TokenizerError, "library_failed", value="tiktoken") as caught:
        TiktokenTokenizer(encoding, "no-a").encode("banana")
    assert str(caught.value).startswith("no-a: ")  # names the tokenizer


def test_sentencepiece_literal_whitespace_mark_is_documented_behaviour() -> None:
    """Case 11 (bpe/models/spm_encoding.py): a literal U+2581 is encoded exactly like a space and decodes to one; its
    spans still index the text as given and tile it."""
    tokenizer = spm_trained()
    for text in ["a▁b", "▁The day", "day ▁ night", "▁", "▁▁x", "x▁", "The▁▁day▁"]:
        spaced = text.replace("▁", " ")
        assert tokenizer.encode(text) == tokenizer.encode(spaced)
        assert tokenizer.decode(tokenizer.encode(text)) == tokenizer.decode(tokenizer.encode(spaced))
        encoding, data = tokenizer.encode_with_spans(text), text.encode("utf-8")
        position = 0
        for token, (start, end) in zip(encoding.ids, encoding.spans, strict=True):
            assert start == position  # spans tile the text, in order
            covered = data[start:end].replace("▁".encode(), b" ")
            assert start == end or covered in (tokenizer.id_to_bytes(token), tokenizer.id_to_bytes(token)[1:])
            position = end
        assert position == len(data)


# --------------------------------------------------------------------------- finished runs


def write_kit(folder: Path) -> None:
    for name, content in KIT.items():
        (folder / name).write_text(_place(content, folder), encoding="utf-8")


def run_argv(folder: Path) -> list[str]:
    return [_place(arg, folder) for arg in RUN]


@pytest.fixture
def finished_run(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> Path:
    write_kit(tmp_path)
    assert tokbench(run_argv(tmp_path), capfd)[0] == 0
    return tmp_path / "out"


def test_damaged_unit_files_are_recomputed_and_said(finished_run: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """Case 3: a truncated, an emptied and a foreign unit file; the resumed run recomputes exactly those."""
    results = (finished_run / "results.csv").read_bytes()
    units = sorted((finished_run / "units").glob("*.json"))
    units[0].write_bytes(units[0].read_bytes()[:100])
    units[1].write_text("", encoding="utf-8")
    units[2].write_bytes(units[3].read_bytes())
    kept = units[3].stat().st_mtime_ns
    status, _, err = tokbench(run_argv(finished_run.parent), capfd)
    assert status == 0 and units[3].stat().st_mtime_ns == kept
    assert err.count("computing the unit again") == 3
    assert f"holds unit {units[3].stem!r}, expected {units[2].stem!r}" in err
    assert (finished_run / "results.csv").read_bytes() == results


def test_damaged_cache_entries_are_rebuilt(finished_run: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """Case 3: truncated trained-tokenizer and corpus cache entries are trained and read again, not a crash."""
    results = (finished_run / "results.csv").read_bytes()
    cache = Path(os.environ["TOKBENCH_CACHE"])
    damaged = [path for path in (cache / "tokenizers").glob("*.json") if not path.name.endswith(".meta.json")]
    for path in damaged:
        path.write_bytes(path.read_bytes()[:50])
    for meta in (cache / "corpora").glob("*/tokbench-corpus.json"):
        meta.write_text("{", encoding="utf-8")
    shutil.rmtree(finished_run)
    status, _, err = tokbench(run_argv(finished_run.parent), capfd)
    assert status == 0
    assert "is damaged" in err and "training it again" in err and "reading the corpus again" in err
    assert (finished_run / "results.csv").read_bytes() == results


def test_a_changed_corpus_does_not_replace_the_earlier_results(finished_run: Path, capfd: pytest.CaptureFixture[str],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """Case 11: the same command after the corpus text changed is refused, and the earlier run is kept
    byte for byte; --overwrite replaces it with the run of the new text (trained into a cache of its own,
    so the shared cache holds the sample's tokenizers only)."""
    results = (finished_run / "results.csv").read_bytes()
    monkeypatch.setenv("TOKBENCH_CACHE", str(finished_run.parent / "cache"))
    (finished_run.parent / "train.txt").write_text(TRAIN.replace("the", "a"), encoding="utf-8")
    status, _, err = tokbench(run_argv(finished_run.parent), capfd)
    assert status == 2 and "other corpus contents" in err and "--overwrite" in err
    assert (finished_run / "results.csv").read_bytes() == results
    status, _, err = tokbench([*run_argv(finished_run.parent), "--overwrite"], capfd)
    assert status == 0, err
    assert (finished_run / "results.csv").read_bytes() != results


def test_a_replaced_cache_entry_is_not_trusted(finished_run: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """Case 11: two cached tokenizers of one family swapped (each a valid tokenizer) are found by the key
    and digest each entry stores, and trained again: the next run's results do not change."""
    results = (finished_run / "results.csv").read_bytes()
    cache = Path(os.environ["TOKBENCH_CACHE"]) / "tokenizers"
    entries = sorted(path for path in cache.glob("*.json") if not path.name.endswith(".meta.json")
                     and bpe.load(path).family == "char")  # fmt: skip
    assert len(entries) >= 2
    first, second = entries[0].read_bytes(), entries[1].read_bytes()
    entries[0].write_bytes(second)
    entries[1].write_bytes(first)
    shutil.rmtree(finished_run)
    status, _, err = tokbench(run_argv(finished_run.parent), capfd)
    assert status == 0
    assert err.count("is not the one the entry recorded") == 2 and "training it again" in err
    assert (finished_run / "results.csv").read_bytes() == results


def test_a_run_without_a_parallel_set_says_why_it_has_no_parity(tmp_path: Path,
                                                                capfd: pytest.CaptureFixture[str]) -> None:
    """Case 11: the default metrics include parity; an English-only run says why it has none, on stderr
    and in the report."""
    write_kit(tmp_path)
    status, _, err = tokbench([arg for arg in run_argv(tmp_path) if arg != "--no-report"], capfd)
    assert status == 0
    assert "tokbench: warning: no parity rows in this run: no non-English corpus" in err
    report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "Groups without rows in this run: " in report and "No parity rows: no non-English corpus" in report
    assert "[sources.parallel]" in report


def test_report_needs_the_run_folders_lock(finished_run: Path, capfd: pytest.CaptureFixture[str]) -> None:
    from benchmarks.run.runner import run_folder_lock

    with run_folder_lock(finished_run):
        status, _, err = tokbench(["report", str(finished_run)], capfd)
    assert status == 2 and f"pid {os.getpid()}" in err and "is writing this run folder" in err
    assert not (finished_run / "report.md").exists()
    with run_folder_lock(finished_run):  # released again
        pass


# --------------------------------------------------------------------------- other processes


def _python(code: str, cwd: Path) -> subprocess.Popen[str]:
    environment = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    return subprocess.Popen([sys.executable, "-c", code], cwd=cwd, env=environment, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip


def _wait_for(condition: Callable[[], bool], process: subprocess.Popen[str], what: str) -> None:
    deadline = time.monotonic() + 120
    while not condition():
        assert process.poll() is None, f"the other process ended before {what}: {process.communicate()}"
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_a_second_writer_is_refused_and_a_killed_holder_leaves_no_lock(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """Case 4: while another process holds the run folder (as a run does), `run` -- with or without
    --overwrite -- is refused, naming the holder; once the holder is killed (-9), its lock is gone."""
    write_kit(tmp_path)
    out = tmp_path / "out"
    holder = _python(f"from benchmarks.run.runner import run_folder_lock\nimport time\nfrom pathlib import Path\n"
                     f"with run_folder_lock(Path({str(out)!r})):\n    print('held', flush=True)\n    time.sleep(600)\n",
                     tmp_path)  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        for extra in ([], ["--overwrite"]):
            status, _, err = tokbench([*run_argv(tmp_path), *extra], capfd)
            assert status == 2 and f"another tokbench process (pid {holder.pid} on " in err
            assert "is writing this run folder" in err
        assert not (out / "run.json").exists()
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.communicate()
    assert tokbench(run_argv(tmp_path), capfd)[0] == 0
    assert (out / "results.csv").is_file()


def test_a_killed_run_resumes_to_the_same_results(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """kill -9 in the middle of a run, then the same command: it resumes (the lock died with the run)
    and gives the results of an uninterrupted run, byte for byte."""
    write_kit(tmp_path)
    reference = tmp_path / "reference"
    assert tokbench([*run_argv(tmp_path)[:3], str(reference), *run_argv(tmp_path)[4:]], capfd)[0] == 0
    units = tmp_path / "out" / "units"
    # one unit is written, then the process stops (SIGSTOP) so that the kill lands mid-run
    code = ("import os, signal\nimport benchmarks.run.runner as runner\nwrite = runner.write_unit_result\n"
            "def write_then_stop(*args):\n    write(*args)\n    os.kill(os.getpid(), signal.SIGSTOP)\n"
            "runner.write_unit_result = write_then_stop\nfrom benchmarks.cli import main\n"
            f"main({run_argv(tmp_path)!r})\n")  # fmt: skip
    victim = _python(code, tmp_path)
    try:
        _wait_for(lambda: units.is_dir() and len(list(units.glob("*.json"))) == 1, victim, "the first unit")
    finally:
        victim.send_signal(signal.SIGKILL)
        victim.communicate()
    assert not (tmp_path / "out" / "results.csv").exists()
    (written,) = units.glob("*.json")
    kept = written.stat().st_mtime_ns
    assert tokbench(run_argv(tmp_path), capfd)[0] == 0
    assert written.stat().st_mtime_ns == kept  # resumed: the unit finished before the kill is not redone
    assert (tmp_path / "out" / "results.csv").read_bytes() == (reference / "results.csv").read_bytes()


# --------------------------------------------------------------------------- the error model


@pytest.mark.parametrize(
    ("failure", "status", "words"),
    [
        (bpe.TokenizerError("bad vocab"), 2, "tokbench: error: bad vocab"),
        (OSError(errno.EACCES, "Permission denied", "/runs/x"), 2, "tokbench: error: /runs/x: Permission denied"),
        (OSError(errno.ENOSPC, "No space left on device"), 2, "tokbench: error: No space left on device"),
        (KeyError("oops"), 70, "tokbench: internal error (a bug in tokbench): KeyError: 'oops'; run again with "
                               "TOKBENCH_DEBUG=1"),
        (ValueError("line one\nline two"), 70, "ValueError: line one line two;"),
    ],
)
def test_one_line_per_failure(failure: Exception, status: int, words: str, monkeypatch: pytest.MonkeyPatch,
                              capfd: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    """User mistakes and OS refusals exit 2, anything else is a bug (70); one line, no traceback."""

    def handler(args: Any) -> None:
        raise failure

    monkeypatch.setattr("benchmarks.commands.experiments.handle_report", handler)
    status_seen, out, err = tokbench(["report", "anything"], capfd)
    assert (status_seen, out) == (status, "") and words in err and len(err.splitlines()) == 1


def test_debug_shows_the_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    def handler(args: Any) -> None:
        raise KeyError("oops")

    monkeypatch.setattr("benchmarks.commands.experiments.handle_report", handler)
    monkeypatch.setenv("TOKBENCH_DEBUG", "1")
    with pytest.raises(KeyError):
        main(["report", "anything"])


def test_shipped_configs_still_load() -> None:
    """The stricter config model accepts what ships."""
    assert {load_config(name).name for name in ("quick", "paper")} == {"quick", "paper"}


def test_reproduce_refuses_a_damaged_rank_file_like_encode(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """Case 11: the GPT-2 rank file with a token listed twice that `encode` refuses is refused by
    `reproduce petrov2023` too, before any counting: it is not the published file."""
    (tmp_path / "flores").mkdir()
    # petrov2023 reads dev + devtest, 2,009 lines: the sample's 100 repeated
    (tmp_path / "flores" / "xxx_Latn.txt").write_text("\n".join((FLORES * 21)[:2009]) + "\n", encoding="utf-8")
    (tmp_path / "tokenizers").mkdir()
    (tmp_path / "tokenizers" / "gpt2.tiktoken").write_bytes(rank_file(BYTES, repeat=97))
    encode = ["encode", "--tokenizer", str(tmp_path / "tokenizers" / "gpt2.tiktoken"), "--pattern", "gpt2",
              "--input", str(tmp_path / "flores" / "xxx_Latn.txt")]  # fmt: skip
    status, _, err = tokbench(encode, capfd)
    assert status == 2 and "line 257" in err and "b'a'" in err
    status, _, err = tokbench(["reproduce", "petrov2023", "--data-dir", str(tmp_path), "--out",
                               str(tmp_path / "out")], capfd)  # fmt: skip
    assert status == 2 and "gpt2.tiktoken: sha256" in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("output", ["text", "markdown", "json"])
def test_a_regression_fails_even_when_the_reader_stops_early(tmp_path: Path, output: str) -> None:
    """`tokbench check ... | head -c 20`: the reader closes the pipe before check prints; the regression still
    exits 1 (a broken pipe must not turn a failure into success), with no traceback."""
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "results.csv").write_text(RESULT_HEADER + RESULT_ROW.format(value=1.0), encoding="utf-8")
    (tmp_path / "base.json").write_text(baseline(), encoding="utf-8")  # bytes_per_token was 1.5: a regression
    argv = [sys.executable, "-m", "benchmarks.cli", "check", str(tmp_path / "run"), "--baseline",
            str(tmp_path / "base.json"), "--format", output]  # fmt: skip
    process = subprocess.Popen(argv, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process.stdout.close()  # type: ignore[union-attr]  # before check writes a byte
    _, err = process.communicate(timeout=120)
    assert process.returncode == 1
    assert b"Traceback" not in err and b"Exception ignored" not in err


@pytest.mark.parametrize(("argv", "words"), [
    (["bench", "--train-mb", "nan"], "--train-mb nan"),
    (["bench", "--encode-mb", "inf"], "--encode-mb inf"),
    (["bench", "--timeout", "-5"], "--timeout -5"),
    (["bench", "--timeout", "nan"], "--timeout nan"),
    (["bench", "--vocab-sizes", "0"], "--vocab-sizes 0"),
    (["encode", "--tokenizer", "bytes", "--jobs", "1000000000"], "--jobs 1000000000"),
    (["run", "quick", "--jobs", "0"], "--jobs 0"),
])  # fmt: skip
def test_numeric_options_are_bounded(argv: list[str], words: str, capfd: pytest.CaptureFixture[str]) -> None:
    status, _, err = tokbench(argv, capfd)
    assert status == 2 and words in err, err


def test_a_label_in_another_script_is_a_plain_name(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """A row label in the user's own script (Cyrillic, Hangul) names its row and its files like an ASCII one."""
    tokenizers = ('[[tokenizers]]\nkind = "char"\nlabel = "токенизатор"\nvocab_sizes = [100]\n\n'
                  '[[tokenizers]]\nkind = "word"\nlabel = "토크나이저"\nvocab_sizes = [100]\n')  # fmt: skip
    for name, content in kit(**{"cfg.toml": config(tokenizers=tokenizers)}).items():
        (tmp_path / name).write_text(content, encoding="utf-8")
    status, _, err = tokbench([_place(arg, tmp_path) for arg in RUN], capfd)
    assert status == 0, err
    results = (tmp_path / "out" / "results.csv").read_text(encoding="utf-8")
    assert ",токенизатор," in results and ",토크나이저," in results
    assert (tmp_path / "out" / "tokenizers" / "kit" / "токенизатор-100.json").is_file()
