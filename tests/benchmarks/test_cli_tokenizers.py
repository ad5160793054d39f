"""`tokbench count | train | encode | decode | export`: the stable contract and every bad input.

Training text is real running text shipped inside installed packages (read in
place, never copied): the Korean constitution from konlpy (CRLF line ends) and
English news from gensim.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import io
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from tokenizers import Tokenizer as HFTokenizer

import bpe
from benchmarks.cli import main
from bpe.options import options_by_name
from bpe.training.counts import read_counts


def package_file(package: str, *parts: str) -> Path:
    try:
        location = importlib.resources.files(package)
    except ModuleNotFoundError:
        pytest.skip(f"package {package} is not installed")
    for part in parts:  # one part at a time: tiktoken_ext is a namespace package
        location = location / part
    path = Path(str(location))
    if not path.is_file():
        pytest.skip(f"{package} does not ship {'/'.join(parts)}")
    return path


@pytest.fixture(scope="module")
def korean() -> Path:
    return package_file("konlpy", "data", "corpus", "kolaw", "constitution.txt")


@pytest.fixture(scope="module")
def english() -> Path:
    return package_file("gensim", "test", "test_data", "lee_background.cor")


def korean_lines(path: Path) -> list[str]:
    """The file's lines with CRLF removed, as the CLI reads them."""
    return path.read_bytes().decode("utf-8").split("\r\n")[:-1]


@dataclass(frozen=True)
class Result:
    """One in-process `tokbench` call."""

    status: int
    out: str
    err: str

    def error(self) -> str:
        """The single error line, after checking the failure is a clean user error."""
        assert self.status == 2, (self.status, self.out, self.err)
        assert "Traceback" not in self.err
        lines = self.err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("tokbench: error: "), self.err
        return lines[0]


@pytest.fixture
def tokbench(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Callable[..., Result]:
    def run(*argv: object, stdin: bytes = b"") -> Result:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"))
        status = main([str(arg) for arg in argv])
        return Result(status, *capsys.readouterr())

    return run


@pytest.fixture(scope="module")
def trained(korean: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Tokenizers trained through the CLI once for the module (`main` called directly)."""
    directory = tmp_path_factory.mktemp("trained")
    paths = {}
    for kind, options in [
        ("byte-bpe", []),
        ("char-bpe", ["--end-of-word", "attached", "--min-frequency", "3"]),
        ("spm-unigram", ["--character-coverage", "1.0"]),
        ("word", []),
    ]:
        paths[kind] = directory / f"{kind}.json"
        argv = ["train", "--kind", kind, "--vocab-size", "1000", *options, "--input", korean, "--out", paths[kind]]
        assert main([str(arg) for arg in argv]) == 0
    return paths


# -- the contract ---------------------------------------------------------------


def test_train_prints_a_summary(tokbench, korean: Path, english: Path, tmp_path: Path) -> None:
    out = tmp_path / "nested" / "char-bpe.json"
    run = tokbench("train", "--kind", "char-bpe", "--vocab-size", 2000, "--input", korean, english, "--out", out)
    assert run.status == 0, run.err
    assert run.out.startswith("trained char-bpe: vocab 2000 (requested 2000), ")
    assert " merges, " in run.out and run.out.rstrip().endswith(f"-> {out}")
    assert json.loads(out.read_text(encoding="utf-8"))["family"] == "char-bpe"
    assert sorted(p.name for p in out.parent.iterdir()) == ["char-bpe.json"]  # no temporary file left


def test_parity_bpe_trains_from_files_per_language(tokbench, tmp_path: Path) -> None:
    """Each language's training text and its line-aligned dev sentences as LANG=FILE: the tokenizer the library
    trains on the same lines; a family that takes one text refuses --dev, and parity-bpe refuses plain files."""
    from tests.conftest import DATA_ROOT, read_flores

    flores = read_flores(DATA_ROOT)
    split = len(flores["eng_Latn"]) // 2
    inputs, devs, texts, dev = [], [], {}, {}
    for language in ("eng_Latn", "tur_Latn", "kor_Hang"):
        texts[language], dev[language] = flores[language][split:], flores[language][:split]
        for kind, lines, given in (("train", texts[language], inputs), ("dev", dev[language], devs)):
            path = tmp_path / f"{kind}.{language}"
            path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
            given.append(f"{language}={path}")
    out = tmp_path / "parity.json"
    run = tokbench("train", "--kind", "parity-bpe", "--vocab-size", 600, "--input", *inputs, "--dev", *devs,
                   "--out", out)  # fmt: skip
    assert run.status == 0, run.err
    direct = bpe.family_class("parity-bpe").train_parallel(texts, dev, 600)
    assert bpe.load(out).to_dict() == direct.to_dict()
    refused = [
        ("--kind", "byte-bpe", "--input", inputs[0].split("=", 1)[1], "--dev", *devs),
        ("--kind", "parity-bpe", "--input", *inputs),
        ("--kind", "parity-bpe", "--input", inputs[0].split("=", 1)[1], "--dev", *devs),
        ("--kind", "parity-bpe", "--input", inputs[0], inputs[0], "--dev", *devs),
    ]
    for arguments in refused:
        run = tokbench("train", "--vocab-size", 600, *arguments, "--out", tmp_path / "refused.json")
        assert run.status == 2 and run.err.count("\n") == 1, (arguments, run.err)
    assert not (tmp_path / "refused.json").exists()


def test_given_options_are_saved_as_given(trained: dict[str, Path]) -> None:
    def config(kind: str) -> dict:
        return json.loads(trained[kind].read_text(encoding="utf-8"))["config"]

    assert config("char-bpe")["min_frequency"] == 3 and config("char-bpe")["end_of_word"] == "attached"
    assert config("spm-unigram")["character_coverage"] == 1.0
    assert config("word")["min_frequency"] == 1  # not given: the family's declared default


def test_limit_alphabet_is_applied(tokbench, korean: Path, tmp_path: Path) -> None:
    out = tmp_path / "char-bpe.json"
    argv = ["--kind", "char-bpe", "--vocab-size", 300, "--limit-alphabet", 60, "--min-frequency", 1]
    assert tokbench("train", *argv, "--input", korean, "--out", out).status == 0
    saved = json.loads(out.read_text(encoding="utf-8"))
    assert saved["config"]["limit_alphabet"] == 60 and saved["config"]["min_frequency"] == 1
    assert saved["vocab"][4] == "</w>" and len(saved["vocab"]) - len(saved["merges"]) == 4 + 1 + 60  # </w> + 60


@pytest.mark.parametrize("kind", ["byte-bpe", "char-bpe", "spm-unigram"])
def test_encode_decode_round_trip(tokbench, kind: str, trained: dict[str, Path], korean: Path) -> None:
    lines = korean_lines(korean)
    encoded = tokbench("encode", "--tokenizer", trained[kind], "--input", korean)
    assert encoded.status == 0, encoded.err
    arrays = [json.loads(line) for line in encoded.out.splitlines()]
    assert len(arrays) == len(lines)
    assert all(isinstance(i, int) for ids in arrays for i in ids)
    decoded = tokbench("decode", "--tokenizer", trained[kind], stdin=encoded.out.encode("utf-8"))
    assert decoded.status == 0, decoded.err
    assert decoded.out.split("\n")[:-1] == lines


def test_encode_pieces_and_production_names(tokbench, trained: dict[str, Path]) -> None:
    run = tokbench("encode", "--tokenizer", trained["char-bpe"], "--pieces", stdin="대한민국 헌법\n".encode())
    pieces = json.loads(run.out)  # the text each token covers, a space as ␣ (bpe/render.py)
    assert "".join(pieces) == "대한민국␣헌법" and "</w>" not in run.out
    assert tokbench("encode", "--tokenizer", "cl100k", stdin=b"Hello world\n").out == "[9906, 1917]\n"
    assert tokbench("decode", "--tokenizer", "cl100k", stdin=b"[9906, 1917]\n").out == "Hello world\n"
    assert tokbench("encode", "--tokenizer", "mistral-v1", "--pieces", stdin=b"Hello world").out == (
        '["Hello", "␣world"]\n'
    )


def test_export_hf_gives_the_same_ids(tokbench, trained: dict[str, Path], korean: Path, tmp_path: Path) -> None:
    lines = korean_lines(korean)
    for kind in ("byte-bpe", "char-bpe"):
        out = tmp_path / f"{kind}-tokenizer.json"
        run = tokbench("export", "--tokenizer", trained[kind], "--format", "hf", "--out", out)
        assert run.status == 0, run.err
        hf = HFTokenizer.from_file(str(out))
        ours = tokbench("encode", "--tokenizer", trained[kind], "--input", korean).out.splitlines()
        assert [json.dumps(e.ids) for e in hf.encode_batch(lines, add_special_tokens=False)] == ours


def test_help_documents_each_command(capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("count", "train", "encode", "decode", "export"):
        with pytest.raises(SystemExit) as exit_info:
            main([command, "--help"])
        assert exit_info.value.code == 0
        text = capsys.readouterr().out
        assert "example" in text and "tokbench " + command in text
        if command != "export":
            assert "U+FFFD" in text  # the invalid UTF-8 policy


@pytest.mark.parametrize("command", ["train", "encode"])
def test_option_flags_follow_the_declarations(capsys: pytest.CaptureFixture[str], command: str) -> None:
    """train offers every declared option, encode only the encode-time ones; the choices of a flag
    are those of every family taking it (spm-unigram's likelihood beside the merge families' modes)."""
    with pytest.raises(SystemExit):
        main([command, "--help"])
    flags = set(re.findall(r"^  (--[a-z-]+)", capsys.readouterr().out, re.MULTILINE))
    declared = options_by_name(encode_time_only=command == "encode")
    own = {"train": {"--kind", "--vocab-size", "--references", "--dev", "--input", "--counts", "--out", "--engine",
                     "--address", "--workers"},
           "encode": {"--tokenizer", "--format", "--pattern", "--input", "--out", "--pieces",
                      "--jobs"}}[command]  # fmt: skip
    assert flags == {f"--{name.replace('_', '-')}" for name in declared} | own
    assert set(declared["encode_mode"]) == {"char-bpe", "byte-bpe", "parity-bpe", "superbpe", "spm-bpe",
                                             "spm-unigram", "wordpiece", "unigram"}
    assert ("--seed" in flags) and ("--min-frequency" in flags) == (command == "train")


def test_real_command_pipes_stdin_to_stdout(trained: dict[str, Path]) -> None:
    """The installed entry point, with pipes and a non-UTF-8 locale."""
    environment = {**os.environ, "LC_ALL": "C", "PYTHONIOENCODING": "ascii"}
    encode = subprocess.run(
        [sys.executable, "-m", "benchmarks.cli", "encode", "--tokenizer", str(trained["byte-bpe"])],
        input="헌법 제1조\n".encode(),
        capture_output=True,
        env=environment,
        timeout=120,
        check=True,
    )
    decode = subprocess.run(
        [sys.executable, "-m", "benchmarks.cli", "decode", "--tokenizer", str(trained["byte-bpe"])],
        input=encode.stdout,
        capture_output=True,
        env=environment,
        timeout=120,
        check=True,
    )
    assert decode.stdout.decode("utf-8") == "헌법 제1조\n"
    failed = subprocess.run(
        [sys.executable, "-m", "benchmarks.cli", "decode", "--tokenizer", str(trained["byte-bpe"])],
        input=b"[1, 2, oops]\n",
        capture_output=True,
        env=environment,
        timeout=120,
    )
    assert failed.returncode == 2 and b"Traceback" not in failed.stderr
    assert failed.stdout == b""


# -- invalid UTF-8: replaced with U+FFFD and counted on stderr ---------------


def test_invalid_utf8_is_replaced_and_reported(
    tokbench, korean: Path, trained: dict[str, Path], tmp_path: Path
) -> None:
    broken = tmp_path / "broken.txt"
    # three invalid sequences (a Latin-1 é, a cut 3-byte Hangul syllable, a stray 0xFF) and one genuine U+FFFD
    cut_syllable = "헌".encode()[:2]
    broken.write_bytes(korean.read_bytes() + b"caf\xe9 " + "\ufffd".encode() + b" ok\r\n" + cut_syllable + b" \xff\n")
    out = tmp_path / "tokenizer.json"
    run = tokbench("train", "--kind", "char-bpe", "--vocab-size", 1500, "--input", broken, "--out", out)
    assert run.status == 0
    assert f"tokbench: warning: {broken}: 3 invalid UTF-8 sequence(s) replaced with U+FFFD" in run.err
    encoded = tokbench("encode", "--tokenizer", trained["byte-bpe"], "--pieces", stdin=b"caf\xe9\n")
    assert "<stdin>: 1 invalid UTF-8 sequence(s)" in encoded.err
    # U+FFFD (bytes EF BF BD) is in no merge of this Korean tokenizer: one byte token each, shown as bytes
    assert json.loads(encoded.out) == ["c", "a", "f", "<0xEF>", "<0xBF>", "<0xBD>"]


# -- bad input: one clear message, exit 2, no output file --------------------


def write(tmp_path: Path, name: str, content: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(content)
    return path


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--kind", "byte-bpe", "--vocab-size", "100"], "vocab_size 100 is below the minimum 260 for byte-bpe"),
        (["--kind", "char-bpe", "--vocab-size", "50"], "vocab_size 50 is below the minimum"),
        (["--kind", "spm-bpe", "--vocab-size", "100"], "vocab_size 100 is below the minimum"),
        (["--kind", "spm-bpe", "--vocab-size", "900", "--pretokenizer", "gpt2"], "does not take option(s): pretok"),
        (["--kind", "byte-bpe", "--vocab-size", "900", "--limit-alphabet", "10"], "does not take option(s): limit"),
        (["--kind", "spm-bpe", "--vocab-size", "900", "--alpha", "0.1"], "does not take option(s): alpha"),
        (["--kind", "bpe-knockout", "--vocab-size", "900"], "bpe-knockout needs references"),
        (["--kind", "word", "--vocab-size", "900", "--dropout", "0.1"], "word does not take option(s): dropout"),
        (
            ["--kind", "byte-bpe", "--vocab-size", "900", "--dropout", "0.1", "--encode-mode", "fewest-tokens"],
            "dropout applies to encode_mode 'merges' only, not 'fewest-tokens'",
        ),
        (["--kind", "spm-unigram", "--vocab-size", "900", "--nbest", "4"], "nbest only applies to sampling"),
        (["--kind", "morfessor", "--vocab-size", "900", "--corpus-weight", "0"], "corpus_weight must be a number > 0"),
        # zero is a value, not "unset": never replaced by the family's default
        (
            ["--kind", "char-bpe", "--vocab-size", "900", "--min-frequency", "0"],
            "min_frequency must be an integer >= 1, got 0",
        ),
        (
            ["--kind", "char-bpe", "--vocab-size", "900", "--limit-alphabet", "0"],
            "limit_alphabet must be an integer >= 1, got 0",
        ),
        (
            ["--kind", "spm-bpe", "--vocab-size", "900", "--character-coverage", "0"],
            "coverage must be a number in (0, 1], got 0.0",
        ),
        (
            ["--kind", "spm-bpe", "--vocab-size", "900", "--limit-alphabet", "0"],
            "spm-bpe does not take option(s): limit_alph",
        ),
        (
            ["--kind", "spm-unigram", "--vocab-size", "900", "--limit-alphabet", "50"],
            "does not take option(s): limit_alphabet",
        ),
        (
            ["--kind", "char", "--vocab-size", "900", "--encode-mode", "greedy"],
            "char does not take option(s): encode_mode",
        ),
    ],
)
def test_bad_training_options(tokbench, korean: Path, tmp_path: Path, argv: list[str], message: str) -> None:
    out = tmp_path / "tokenizer.json"
    assert message in tokbench("train", *argv, "--input", korean, "--out", out).error()
    assert list(tmp_path.iterdir()) == []


def test_encode_options_override_the_saved_ones(tokbench, trained: dict[str, Path], korean: Path) -> None:
    lines = korean_lines(korean)[:40]
    text = ("\n".join(lines) + "\n").encode()
    counts = {}
    for mode in ("merges", "longest-prefix", "longest-suffix", "longest-token", "fewest-tokens"):
        result = tokbench("encode", "--tokenizer", trained["byte-bpe"], "--encode-mode", mode, stdin=text)
        assert result.status == 0
        counts[mode] = sum(len(json.loads(line)) for line in result.out.splitlines())
    assert counts["fewest-tokens"] == min(counts.values()) < max(counts.values())
    byte_bpe, unigram = ("--tokenizer", trained["byte-bpe"]), ("--tokenizer", trained["spm-unigram"])
    sampled = tokbench("encode", *byte_bpe, "--dropout", "0.2", "--seed", "3", stdin=text).out
    assert sampled != tokbench("encode", *byte_bpe, stdin=text).out
    assert tokbench("encode", *byte_bpe, "--dropout", "0.2", "--seed", "3", stdin=text).out == sampled
    result = tokbench("encode", *unigram, "--alpha", "0.1", "--nbest", "4", stdin=text)
    assert result.status == 0 and result.out != tokbench("encode", *unigram, stdin=text).out
    word = tokbench("encode", "--tokenizer", trained["word"], "--encode-mode", "fewest-tokens", stdin=text)
    assert "word does not take encode option(s): encode_mode (it takes: none)" in word.error()


def test_knockout_reads_references(tokbench, english: Path, tmp_path: Path) -> None:
    references = tmp_path / "gold.tsv"
    references.write_text("walked\twalk ed\nhouses\thouse s\n\nreplayed\tre play ed\n", encoding="utf-8")
    out = tmp_path / "knockout.json"
    argv = ["--kind", "bpe-knockout", "--vocab-size", "800", "--references", references, "--base", "byte-bpe"]
    assert tokbench("train", *argv, "--input", english, "--out", out).status == 0
    assert json.loads(out.read_text(encoding="utf-8"))["base"]["family"] == "byte-bpe"
    references.write_text("walked\twalk ing\n", encoding="utf-8")
    message = tokbench("train", *argv, "--input", english, "--out", tmp_path / "other.json").error()
    assert f"{references} line 1: expected 'word<TAB>morph morph ...'" in message


@pytest.mark.parametrize("flag", ["--kind", "--pretokenizer", "--end-of-word", "--encode-mode", "--normalizer"])
def test_unknown_choice_is_an_argparse_error(korean: Path, tmp_path: Path, capsys, flag: str) -> None:
    argv = {
        "--kind": "char-bpe",
        "--vocab-size": "900",
        "--input": str(korean),
        "--out": str(tmp_path / "t"),
        flag: "bogus",
    }
    with pytest.raises(SystemExit) as exit_info:
        main(["train", *(part for pair in argv.items() for part in pair)])
    assert exit_info.value.code == 2
    assert f"argument {flag}: invalid choice: 'bogus'" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("content", "message"),
    [(b"", "no training text (the input is empty or whitespace-only)"), (b"  \n\t\r\n\n", "no training text")],
)
def test_empty_training_input(tokbench, tmp_path: Path, content: bytes, message: str) -> None:
    source = write(tmp_path, "input.txt", content)
    for kind in ("byte-bpe", "spm-bpe", "word"):
        out = tmp_path / "out" / "tokenizer.json"
        assert (
            message in tokbench("train", "--kind", kind, "--vocab-size", 900, "--input", source, "--out", out).error()
        )
        assert not out.parent.exists() or list(out.parent.iterdir()) == []


def test_missing_and_unreadable_inputs(tokbench, korean: Path, tmp_path: Path) -> None:
    out = tmp_path / "tokenizer.json"
    missing = tmp_path / "missing.txt"
    train = ("train", "--kind", "byte-bpe", "--vocab-size", 900, "--out", out, "--input")
    assert f"{missing}: no such file" in tokbench(*train, korean, missing).error()
    assert f"{tmp_path}: is a directory" in tokbench(*train, tmp_path).error()
    assert f"{missing}: no such file" in tokbench("encode", "--tokenizer", "cl100k", "--input", missing).error()
    assert f"{missing}: no such tokenizer file" in tokbench("encode", "--tokenizer", missing).error()
    assert f"{tmp_path}: is a directory" in tokbench(*train[:-2], tmp_path, "--input", korean).error()
    assert f"{korean}/x.json: cannot write there" in tokbench(*train[:-2], korean / "x.json", "--input", korean).error()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root reads files whatever their mode")
def test_permission_denied(tokbench, tmp_path: Path) -> None:
    secret = write(tmp_path, "secret.txt", b"text\n")
    secret.chmod(0)
    assert "cannot read (Permission denied)" in tokbench("encode", "--tokenizer", "cl100k", "--input", secret).error()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"vocab": {"a": 0}}', "a JSON file in no known tokenizer format; expected a tokbench tokenizer JSON, "),
        (b'{"format": "other"}', 'not a tokbench tokenizer (expected "format": "tokbench-tokenizer")'),
        (b"not json at all", "a file in no known tokenizer format"),
        (b'{"model": [1, ', "not a JSON file"),
        (b'{"format": "tokbench-tokenizer", "format_version": 1, "family": "byte-bpe"}', 'field "config" is missing'),
        (b"\xff\xfe{}", "a file in no known tokenizer format"),
    ],
)
def test_not_a_tokbench_tokenizer(tokbench, tmp_path: Path, content: bytes, message: str) -> None:
    path = write(tmp_path, "tokenizer.json", content)
    for command in ("encode", "decode"):
        assert message in tokbench(command, "--tokenizer", path, stdin=b"[1]\n").error()


def test_any_tokenizer_file_is_accepted(tokbench, trained: dict[str, Path], korean: Path, tmp_path: Path) -> None:
    """The file `tokbench export` writes, a directory holding it, a sentencepiece model, a tiktoken
    rank file: each encodes like the tokenizer it came from."""
    exported = tmp_path / "hf" / "tokenizer.json"
    assert tokbench("export", "--tokenizer", trained["byte-bpe"], "--format", "hf", "--out", exported).status == 0
    ours = tokbench("encode", "--tokenizer", trained["byte-bpe"], "--input", korean).out
    assert tokbench("encode", "--tokenizer", exported, "--input", korean).out == ours
    assert tokbench("encode", "--tokenizer", exported.parent, "--format", "hf", "--input", korean).out == ours
    model = package_file("mistral_common", "data", "tokenizer.model.v1")
    assert tokbench("encode", "--tokenizer", model, stdin=b"Hello world\n").out == "[22557, 1526]\n"
    ranks = package_file("tiktoken_ext", "data", "cl100k_base.tiktoken")
    run = tokbench("encode", "--tokenizer", ranks, "--pattern", "cl100k", stdin=b"Hello world\n")
    assert run.out == tokbench("encode", "--tokenizer", "cl100k", stdin=b"Hello world\n").out == "[9906, 1917]\n"
    decoded = tokbench("decode", "--tokenizer", ranks, "--pattern", "cl100k", stdin=b"[9906, 1917]\n")
    assert decoded.out == "Hello world\n"


def test_bad_tokenizer_arguments(tokbench, trained: dict[str, Path], tmp_path: Path) -> None:
    exported = tmp_path / "tokenizer.json"
    assert tokbench("export", "--tokenizer", trained["byte-bpe"], "--format", "hf", "--out", exported).status == 0
    ranks = package_file("tiktoken_ext", "data", "cl100k_base.tiktoken")
    encode = ("encode", "--tokenizer")
    message = tokbench(*encode, ranks, stdin=b"x\n").error()
    assert "give a pattern: gpt2, r50k, cl100k, o200k, qwen or a regex" in message
    assert "unknown pattern 'gtp2'" in tokbench(*encode, ranks, "--pattern", "gtp2", stdin=b"x\n").error()
    wrong = tokbench(*encode, exported, "--format", "sentencepiece", stdin=b"x\n").error()
    assert "expected a sentencepiece .model file, but this is a Hugging Face tokenizer.json" in wrong
    assert "a directory without tokenizer.json" in tokbench(*encode, trained["byte-bpe"].parent, stdin=b"x\n").error()
    assert "known names: cl100k, mistral-v1" in tokbench(*encode, "gpt5", stdin=b"x\n").error()


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (b"hello", "line 2: expected a JSON array of integer ids, got 'hello'"),
        (b"", "line 2: expected a JSON array of integer ids, got ''"),
        (b'[1, "a"]', "line 2: expected a JSON array of integer ids"),
        (b"[1.5]", "line 2: expected a JSON array of integer ids"),
        (b"[true]", "line 2: expected a JSON array of integer ids"),
        (b'{"ids": [1]}', "line 2: expected a JSON array of integer ids"),
        (b"[5, 1000]", "line 2: token id 1000 is out of range"),
        (b"[-1]", "line 2: token id -1 is out of range"),
    ],
)
def test_bad_decode_lines(tokbench, trained: dict[str, Path], line: bytes, message: str) -> None:
    for kind in ("byte-bpe", "spm-unigram"):
        run = tokbench("decode", "--tokenizer", trained[kind], stdin=b"[5, 6]\n" + line + b"\n[7]\n")
        assert message in run.error()
        assert run.out == ""  # every line is checked before anything is written


def test_unexportable_and_bad_export_target(tokbench, trained: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "tokenizer.json"
    export = ("export", "--format", "hf", "--tokenizer")
    for tokenizer in (trained["spm-unigram"], trained["word"], "cl100k"):
        assert "exportable: byte-bpe" in tokbench(*export, tokenizer, "--out", out).error()
    assert "is a directory" in tokbench(*export, trained["byte-bpe"], "--out", tmp_path).error()
    assert list(tmp_path.iterdir()) == []


# -- counts as a training input, engines, batch encoding -------------------------------------------


def test_count_then_train_equals_training_on_the_text(tokbench, korean: Path, english: Path, tmp_path: Path) -> None:
    counts = tmp_path / "counts.parquet"
    run = tokbench("count", "--pretokenizer", "unicode", "--input", korean, english, "--out", counts)
    assert run.status == 0, run.err
    assert run.out.startswith("counted ") and "distinct, pre-tokenizer unicode" in run.out
    settings = read_counts(counts).settings
    assert settings["normalization"] == "none" and settings["text_unit"] == "line"
    inputs = json.loads(settings["inputs"])
    assert [item["path"] for item in inputs] == [str(korean), str(english)]
    assert inputs[0]["sha256"] == hashlib.sha256(korean.read_bytes()).hexdigest()
    for kind, options in [("char-bpe", ["--end-of-word", "attached"]), ("word", []), ("char", [])]:
        from_counts, from_text = tmp_path / f"{kind}-counts.json", tmp_path / f"{kind}-text.json"
        argv = ["train", "--kind", kind, "--vocab-size", 1500, *options]
        assert tokbench(*argv, "--counts", counts, "--out", from_counts).status == 0
        assert tokbench(*argv, "--input", korean, english, "--out", from_text).status == 0
        assert from_counts.read_bytes() == from_text.read_bytes(), kind


def test_dask_engine_through_the_cli(tokbench, korean: Path, english: Path, tmp_path: Path) -> None:
    pytest.importorskip("distributed", reason="the cluster extra is not installed: pip install 'tokbench[cluster]'")
    local, dask = tmp_path / "local.parquet", tmp_path / "dask.parquet"
    assert tokbench("count", "--pretokenizer", "gpt2", "--input", korean, english, "--out", local).status == 0
    run = tokbench(
        "count", "--pretokenizer", "gpt2", "--input", korean, english, "--out", dask, "--engine", "dask", "--workers", 2
    )
    assert run.status == 0, run.err
    assert read_counts(dask) == read_counts(local)
    trained_on_cluster = tmp_path / "cluster.json"
    argv = ["train", "--kind", "byte-bpe", "--vocab-size", 1200, "--out", trained_on_cluster]
    assert tokbench(*argv, "--input", korean, english, "--engine", "dask", "--workers", 2).status == 0
    assert tokbench(*argv[:-1], tmp_path / "plain.json", "--input", korean, english).status == 0
    assert trained_on_cluster.read_bytes() == (tmp_path / "plain.json").read_bytes()


def test_encode_writes_a_file_in_batches(tokbench, trained: dict[str, Path], korean: Path, tmp_path: Path) -> None:
    out = tmp_path / "ids.jsonl"
    assert tokbench("encode", "--tokenizer", trained["byte-bpe"], "--input", korean, "--out", out).status == 0
    tokenizer = bpe.load(trained["byte-bpe"])
    assert out.read_text(encoding="utf-8").splitlines() == [
        json.dumps(tokenizer.encode(t)) for t in korean_lines(korean)
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ids.jsonl"]  # no temporary file left


def test_encode_on_threads_writes_what_one_thread_writes(
    tokbench, trained: dict[str, Path], korean: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Batches of 7 lines, so the constitution's lines are dozens of batches spread over 1, 2 and 3
    threads (each with its own cache of merged pre-tokens): the same bytes, in input order."""
    from benchmarks.commands import tokenizers as commands

    monkeypatch.setattr(commands, "BATCH_LINES", 7)
    written = {}
    for jobs in (1, 2, 3):
        out = tmp_path / f"ids-{jobs}.jsonl"
        argv = ["encode", "--tokenizer", trained["byte-bpe"], "--input", korean, "--out", out, "--jobs", jobs]
        assert tokbench(*argv).status == 0
        written[jobs] = out.read_bytes()
    tokenizer = bpe.load(trained["byte-bpe"])
    assert len(korean_lines(korean)) > 10 * 7
    assert written[1].decode().splitlines() == [json.dumps(tokenizer.encode(t)) for t in korean_lines(korean)]
    assert written[2] == written[1] and written[3] == written[1]
    run = tokbench("encode", "--tokenizer", trained["byte-bpe"], "--jobs", 0, stdin=b"a\n")
    assert run.status != 0 and "--jobs" in run.err and "0" in run.err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["train", "--kind", "spm-bpe", "--vocab-size", "500", "--counts", "{counts}", "--out", "{out}"],
            "spm-bpe",
        ),
        (
            [
                "train",
                "--kind",
                "byte-bpe",
                "--vocab-size",
                "500",
                "--pretokenizer",
                "gpt2",
                "--counts",
                "{counts}",
                "--out",
                "{out}",
            ],
            "'gpt2'",
        ),
        (
            [
                "train",
                "--kind",
                "word",
                "--vocab-size",
                "500",
                "--counts",
                "{counts}",
                "--out",
                "{out}",
                "--engine",
                "dask",
            ],
            "--counts",
        ),
        (
            ["train", "--kind", "word", "--vocab-size", "500", "--counts", "{missing}", "--out", "{out}"],
            "missing",
        ),
        (["count", "--pretokenizer", "gpt2", "--input", "{missing}", "--out", "{out}"], "missing"),
        (["count", "--pretokenizer", "gpt2", "--input", "{blank}", "--out", "{out}"], "blank.txt"),
        (["count", "--pretokenizer", "gpt2", "--input", "{korean}", "--out", "{out}", "--workers", "0"], "--workers"),
    ],
)
def test_bad_count_and_counts_arguments(tokbench, korean: Path, tmp_path: Path, argv: list[str], message: str) -> None:
    counts = tmp_path / "counts.parquet"
    assert tokbench("count", "--pretokenizer", "unicode", "--input", korean, "--out", counts).status == 0
    (tmp_path / "blank.txt").write_text("  \n\n", encoding="utf-8")
    names = {
        "counts": counts,
        "missing": tmp_path / "missing",
        "out": tmp_path / "o.parquet",
        "blank": tmp_path / "blank.txt",
        "korean": korean,
    }
    error = tokbench(*[arg.format(**names) for arg in argv]).error()
    assert message in error
    assert not (tmp_path / "o.parquet").exists()


def test_published_files_of_the_data_root_by_name(tokbench, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--tokenizer o200k` / `gpt2` / `qwen`: the data root's rank file with its published pattern (and Qwen's
    NFC), equal to tiktoken's own encoding of that file; `tokbench tokenizers` lists them as present."""
    import tiktoken

    from bpe.pipeline.pretokenizers import O200K_PATTERN
    from bpe.pretrained.tiktoken_bpe import read_ranks
    from tests.conftest import DATA_ROOT_ABSENT, FULL_DATA_ROOT

    if FULL_DATA_ROOT is None or not (FULL_DATA_ROOT / "tokenizers" / "o200k_base.tiktoken").is_file():
        pytest.skip(DATA_ROOT_ABSENT)
    monkeypatch.setenv("TOKBENCH_DATA", str(FULL_DATA_ROOT))
    text = "Tokenization of 대한민국 and Çağrı, 2024."
    file = FULL_DATA_ROOT / "tokenizers" / "o200k_base.tiktoken"
    reference = tiktoken.Encoding("o200k", pat_str=O200K_PATTERN, mergeable_ranks=read_ranks(file.read_bytes(), "o"),
                                  special_tokens={})  # fmt: skip
    assert json.loads(tokbench("encode", "--tokenizer", "o200k", stdin=text.encode()).out) == reference.encode(text)
    listing = tokbench("tokenizers").out
    assert re.search(r"o200k\s+data root: tokenizers/o200k_base.tiktoken \(present\)\s+pattern o200k", listing)
    assert re.search(r"qwen\s+.*pattern qwen, normalizer nfc", listing)
    assert "cl100k" in listing and "built in" in listing
