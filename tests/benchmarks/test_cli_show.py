"""`tokbench show`: one line per tokenizer with its count and pieces; run directories; bad input."""

from __future__ import annotations

import importlib.resources
from pathlib import Path

import pytest

import bpe
from benchmarks.cli import main
from benchmarks.commands.show import DEFAULT_TOKENIZERS
from bpe.render import render

SENTENCE = "Merhaba dünya. Привет, мир. 대한민국의 수도는 서울이다."
CL100K_RANKS = Path(str(importlib.resources.files("tiktoken_ext") / "data" / "cl100k_base.tiktoken"))



def rows(out: str) -> dict[str, tuple[int, str]]:
    """label -> (count, pieces) of each tokenizer line (indented) of the output."""
    parsed = {}
    for line in out.splitlines():
        if line.startswith("  "):
            label, count, pieces = line.split(maxsplit=2)
            parsed[label] = (int(count), pieces)
    return parsed


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run directory as `tokbench run` leaves it: RUN/tokenizers/<corpus>/<label>-<size>.json."""
    run = tmp_path_factory.mktemp("run")
    text = [SENTENCE, "Bir iki üç. Один два три. 하나 둘 셋."] * 20
    for corpus, kind, size in (("mixed", "char-bpe", 200), ("mixed", "byte-bpe", 300), ("other", "word", 50)):
        bpe.train(kind, text, size).save(run / "tokenizers" / corpus / f"{kind}-{size}.json")
    return run


def test_default_tokenizers_side_by_side(tokbench) -> None:
    status, out, err = tokbench("show", SENTENCE)
    assert status == 0, err
    assert out.splitlines()[0] == SENTENCE
    shown = rows(out)
    assert list(shown) == list(DEFAULT_TOKENIZERS)
    for name in DEFAULT_TOKENIZERS:
        tokenizer = bpe.load(name)
        encoding = tokenizer.encode_with_spans(SENTENCE)
        assert shown[name] == (len(encoding), render(SENTENCE, encoding, tokenizer.unk_id))
    assert shown["chars"][1].startswith("M│e│r│h│a│b│a│␣│d│ü│n│y│a")
    assert "Ð" not in out and "ì" not in out  # no byte-alias mojibake


def test_named_files_and_a_run(tokbench, run_dir: Path) -> None:
    status, out, err = tokbench(
        "show", "--tokenizer", "cl100k", "--tokenizer", CL100K_RANKS, "--pattern", "cl100k", "--run", run_dir, SENTENCE
    )
    assert status == 0, err
    shown = rows(out)
    assert list(shown) == ["cl100k", str(CL100K_RANKS), "mixed/byte-bpe-300", "mixed/char-bpe-200", "other/word-50"]
    assert shown["cl100k"] == shown[str(CL100K_RANKS)]  # the pattern reached the rank file, not the name
    assert shown["mixed/char-bpe-200"][1].split("│")[:2] == ["Merhaba", "␣dünya"]  # </w> never shown


def test_every_line_of_an_input_file(tokbench, tmp_path: Path) -> None:
    source = tmp_path / "sentences.txt"
    source.write_text("Merhaba dünya\n\nПривет, мир\n대한민국\n", encoding="utf-8")
    status, out, _ = tokbench("show", "--tokenizer", "chars", "--input", source)
    assert status == 0
    assert out == "Merhaba dünya\n  chars  13  M│e│r│h│a│b│a│␣│d│ü│n│y│a\n\n" + (
        "Привет, мир\n  chars  11  П│р│и│в│е│т│,│␣│м│и│р\n\n대한민국\n  chars  4  대│한│민│국\n"
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "--input"),
        (["text", "--input", "x.txt"], "--input"),
        (["--input", "/nonexistent/x.txt"], "/nonexistent/x.txt"),
        (["--tokenizer", "gpt5", "text"], "'gpt5'"),
        (["--tokenizer", CL100K_RANKS, "text"], "gpt2, r50k, cl100k, o200k, qwen"),  # the pattern names
        (["--run", "/nonexistent-run", "text"], "/nonexistent-run"),
    ],
)
def test_bad_input(tokbench, argv: list[object], message: str) -> None:
    status, out, err = tokbench("show", *argv)
    assert status == 2 and out == "" and "Traceback" not in err
    assert err.startswith("tokbench: error: ") and message in err and len(err.strip().splitlines()) == 1


def test_help_documents_the_rendering(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["show", "--help"])
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    assert "tokbench show" in text and "␣" in text and "<0xNN>" in text and "U+FFFD" in text


def test_encode_time_flags_show_an_inference_method(tokbench, tmp_path: Path) -> None:
    lines = ["evlerimizden geldik", "evlerde kaldık", "geldiklerimizden"] * 20
    bpe.train("char-bpe", lines, 60, end_of_word="none").save(tmp_path / "t.json")
    shown = {}
    for mode in ("merges", "longest-prefix", "longest-suffix", "longest-token", "fewest-tokens"):
        status, out, err = tokbench("show", "--tokenizer", tmp_path / "t.json", "--encode-mode", mode, "evlerimizden")
        assert status == 0, err
        shown[mode] = rows(out)[str(tmp_path / "t.json")]
        expected = bpe.load(tmp_path / "t.json").with_encode_options(encode_mode=mode)
        assert shown[mode][0] == len(expected.encode("evlerimizden"))
    assert shown["fewest-tokens"][0] == min(count for count, _ in shown.values())
    status, _, err = tokbench("show", "--tokenizer", "cl100k", "--encode-mode", "fewest-tokens", "ev")
    assert status == 2 and "cl100k" in err and "encode_mode" in err
