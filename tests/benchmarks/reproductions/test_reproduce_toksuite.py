"""`tokbench reproduce toksuite2025`: TokSuite's fertility, pcw and parity on FLORES-200 dev.

The exact published values need the whole FLORES-200 dev set and the tokenizer files (full data root);
the definition itself is checked on the shipped sample (its 100 lines repeated to a FLORES file's
length) against an independent count of UTF-8 bytes for the ByT5 row."""

from __future__ import annotations

import csv
import itertools
from collections.abc import Callable
from pathlib import Path

import pytest
import spacy

from benchmarks.cli import main
from benchmarks.reproductions import get_reproduction
from benchmarks.reproductions.engine import published
from tests.conftest import DATA_ROOT

FIVE = ("GPT-2", "Phi-3", "GPT-4o", "Tekken", "ByT5")


def published_toksuite2025() -> dict[tuple[str, str, str], int | float]:
    """``(row, language, metric) -> value`` for every published figure (all 14 rows)."""
    return published(get_reproduction("toksuite2025")).values


@pytest.fixture
def reproduce(capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
    def run(*argv: object) -> tuple[int, str, str]:
        status = main(["reproduce", "toksuite2025", *(str(arg) for arg in argv)])
        captured = capsys.readouterr()
        return status, captured.out, captured.err

    return run


def read_rows(out: Path) -> list[dict[str, str]]:
    with (out / "reproduction.csv").open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def sample_root(tmp_path: Path, languages: tuple[str, ...] = ("eng_Latn", "tur_Latn")) -> Path:
    """A data root of the shipped sample's FLORES lines repeated to 2,009 lines; no tokenizer files."""
    root = tmp_path / "data"
    (root / "flores").mkdir(parents=True)
    for language in languages:
        lines = (DATA_ROOT / "flores" / f"{language}.txt").read_text(encoding="utf-8").splitlines()
        text = "\n".join(itertools.islice(itertools.cycle(lines[:100]), 2009)) + "\n"
        (root / "flores" / f"{language}.txt").write_text(text, encoding="utf-8")
    return root


def test_the_shipped_figures() -> None:
    published = published_toksuite2025()
    assert published[("GPT-2", "eng_Latn", "fertility")] == 1.296
    assert published[("ByT5", "tur_Latn", "parity")] == 1.12
    assert published[("Phi-3", "eng_Latn", "pcw")] == 0.156
    assert ("GPT-2", "eng_Latn", "parity") not in published  # parity is against English
    assert len({key[0] for key in published}) == 14


def test_published_values_are_reproduced_exactly(reproduce, data_root: Path, tmp_path: Path) -> None:
    status, out, err = reproduce("--data-dir", data_root, "--languages", "eng_Latn", "tur_Latn", "--out", tmp_path)
    assert status == 0, err
    rows = read_rows(tmp_path)
    assert list(rows[0]) == ["tokenizer", "language", "metric", "published", "reproduced", "difference"]
    compared = [row for row in rows if row["published"]]
    assert len(compared) == 25 and {row["tokenizer"] for row in compared} == set(FIVE)
    for row in compared:
        assert float(row["published"]) == float(row["reproduced"]) and row["difference"] == "0.000", row
    assert "25 of 25 published values reproduced exactly" in out


def test_the_definition_against_an_independent_byte_count(reproduce, tmp_path: Path) -> None:
    """ByT5's row is UTF-8 bytes (+ one </s> per call in parity): recomputed here from spaCy's words."""
    root = sample_root(tmp_path)
    status, _, err = reproduce("--data-dir", root, "--out", tmp_path / "out")
    assert status == 1, err  # the sample's repeated lines are not the text TokSuite measured
    rows = {(row["tokenizer"], row["language"], row["metric"]): row for row in read_rows(tmp_path / "out")}
    dev = {
        code: [line.strip() for line in (root / "flores" / f"{code}.txt").read_text(encoding="utf-8").split("\n")[:997]]
        for code in ("eng_Latn", "tur_Latn")
    }
    for code, nlp_code in (("eng_Latn", "en"), ("tur_Latn", "tr")):
        nlp = spacy.blank(nlp_code)
        words = [token.text.strip() for line in dev[code] for token in nlp(line) if token.text.strip()]
        byte_counts = [len(word.encode("utf-8")) for word in words]
        assert rows[("ByT5", code, "fertility")]["reproduced"] == f"{sum(byte_counts) / len(words):.3f}"
        continued = sum(1 for count in byte_counts if count >= 2) / len(words)
        assert rows[("ByT5", code, "pcw")]["reproduced"] == f"{continued:.3f}"
    ratios = [(len(t.encode()) + 1) / (len(e.encode()) + 1)
              for t, e in zip(dev["tur_Latn"], dev["eng_Latn"], strict=True)]
    assert rows[("ByT5", "tur_Latn", "parity")]["reproduced"] == f"{sum(ratios) / len(ratios):.3f}"


def test_one_altered_line_changes_the_result(reproduce, tmp_path: Path) -> None:
    root = sample_root(tmp_path)
    reproduce("--data-dir", root, "--out", tmp_path / "a")
    path = root / "flores" / "tur_Latn.txt"
    lines = path.read_text(encoding="utf-8").split("\n")
    lines[3] = "Değiştirilmiş cümle: muvaffakiyetsizleştiricileştiriveremeyebileceklerimizdenmişsinizcesine."
    path.write_text("\n".join(lines), encoding="utf-8")
    reproduce("--data-dir", root, "--out", tmp_path / "b")
    before, after = (
        {(r["tokenizer"], r["metric"]): r["reproduced"] for r in read_rows(tmp_path / out) if "tur" in r["language"]}
        for out in ("a", "b")
    )
    assert before.keys() == after.keys() and before[("ByT5", "fertility")] != after[("ByT5", "fertility")]


def test_bad_input(reproduce, tmp_path: Path) -> None:
    root = sample_root(tmp_path, ("eng_Latn", "tur_Latn"))
    (root / "flores" / "xxx_Latn.txt").write_bytes((root / "flores" / "eng_Latn.txt").read_bytes())
    short = root / "flores" / "tur_Latn.txt"
    for argv, messages in [
        (("--languages", "xxx_Latn"), ["xxx_Latn: not reproducible: no blank spaCy pipeline for 'xxx'"]),
        (("--languages", "ita_Latn"), [f"ita_Latn: not reproducible: no {root}/flores/ita_Latn.txt"]),
    ]:
        status, out, err = reproduce("--data-dir", root, *argv, "--out", tmp_path / "out")
        assert status == 2 and out == "" and "Traceback" not in err, err
        assert all(message in err for message in messages), err
    short.write_text("\n".join(short.read_text(encoding="utf-8").split("\n")[1:]), encoding="utf-8")
    status, out, err = reproduce("--data-dir", root, "--languages", "tur_Latn", "ita_Latn", "--out", tmp_path / "out")
    assert status == 2 and "tur_Latn: not reproducible:" in err and "2,008 lines, expected 2,009" in err
    assert "ita_Latn: not reproducible: no" in err and len(err.strip().splitlines()) == 2
    assert not (tmp_path / "out").exists()


def test_a_user_added_language_is_computed_and_compared(reproduce, tmp_path: Path) -> None:
    """A user's flores/ita_Latn.txt is found, tokenized with spaCy's blank Italian pipeline and compared
    with TokSuite's Italian figures.  No Italian FLORES text is available offline, so Turkish stands in:
    its ByT5 values must be the independent byte count over spaCy's Italian words, beside the published
    Italian value, and differ from it (exit 1)."""
    root = sample_root(tmp_path)
    (root / "flores" / "ita_Latn.txt").write_bytes((root / "flores" / "tur_Latn.txt").read_bytes())
    status, _, err = reproduce("--data-dir", root, "--out", tmp_path / "out")
    assert status == 1, err
    rows = {(row["tokenizer"], row["language"], row["metric"]): row for row in read_rows(tmp_path / "out")}
    published = published_toksuite2025()
    assert {metric for tokenizer, language, metric in rows if language == "ita_Latn"} == {"fertility", "pcw", "parity"}
    dev = [line.strip() for line in (root / "flores" / "ita_Latn.txt").read_text(encoding="utf-8").split("\n")[:997]]
    english = [line.strip() for line in (root / "flores" / "eng_Latn.txt").read_text(encoding="utf-8").split("\n")]
    nlp = spacy.blank("it")
    words = [token.text.strip() for line in dev for token in nlp(line) if token.text.strip()]
    counts = [len(word.encode("utf-8")) for word in words]
    parity = [(len(i.encode()) + 1) / (len(e.encode()) + 1) for i, e in zip(dev, english[:997], strict=True)]
    expected = {"fertility": sum(counts) / len(words), "pcw": sum(c >= 2 for c in counts) / len(words),
                "parity": sum(parity) / len(parity)}  # fmt: skip
    for metric, value in expected.items():
        row = rows[("ByT5", "ita_Latn", metric)]
        assert row["reproduced"] == f"{value:.3f}"
        assert float(row["published"]) == published[("ByT5", "ita_Latn", metric)]
        assert row["difference"] == f"{float(row['reproduced']) - float(row['published']):.3f}"
    assert any(rows[("ByT5", "ita_Latn", metric)]["difference"] != "0.000" for metric in expected)
