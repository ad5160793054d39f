"""`tokbench reproduce petrov2023`: Petrov et al. 2023's counts, recomputed exactly from the data root.

The counts need the whole FLORES-200 set (full data root); which rows, notes and errors appear is checked
on the data root in use."""

from __future__ import annotations

import csv
import dataclasses
import io
import itertools
import re
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from benchmarks.cli import main
from benchmarks.commands.reproduce import FULL_TABLE_ROWS, SHOWN_DIFFERING, terminal_table, unpublished_summary
from benchmarks.reproductions import Reproduction, Row, get_reproduction
from benchmarks.reproductions.engine import published
from benchmarks.reproductions.engine import reproduce as reproduce_table
from corpora.errors import CorpusError
from corpora.flores import DEV_LINES, DEVTEST_LINES, petrov_join, read_flores
from tests.conftest import DATA_ROOT, FULL_DATA_ROOT, by_data
from tests.errors import raises_code

PETROV = get_reproduction("petrov2023")
COLUMNS = [column.label for column in PETROV.tokenizers]

# the data README's copy of the paper's figures (English, Turkish, Russian, Korean)
PAPER = {
    "GPT-2": (52567, 127797, 301727, 266663),
    "LLAMA": (60621, 126485, 99173, 192635),
    "cl100k_base": (52835, 101176, 131496, 125737),
    "ByT5": (259396, 289924, 514650, 310727),
    "UTF-32": (259170, 266383, 282208, 130986),
}
FOUR = ("eng_Latn", "tur_Latn", "rus_Cyrl", "kor_Hang")


@pytest.fixture
def reproduce(capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
    def run(*argv: object) -> tuple[int, str, str]:
        status = main(["reproduce", "petrov2023", *(str(arg) for arg in argv)])
        captured = capsys.readouterr()
        return status, captured.out, captured.err

    return run


def read_rows(out: Path) -> list[dict[str, str]]:
    with (out / "reproduction.csv").open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def flores_bytes(language: str) -> bytes:
    """The FLORES-200 file of ``language`` as the command reads it (dev then devtest, 2,009 lines): the full
    data root's, or the shipped sample's 100 lines repeated to that length (for tests of which rows, notes
    and errors appear, never of counts)."""
    path = DATA_ROOT / "flores" / f"{language}.txt"
    if FULL_DATA_ROOT is not None:
        return path.read_bytes()
    lines = itertools.islice(itertools.cycle(path.read_text(encoding="utf-8").splitlines()), DEV_LINES + DEVTEST_LINES)
    return ("\n".join(lines) + "\n").encode("utf-8")


#: the exit status on the data root in use: 0 (every count equals the published one) on FLORES-200, 1 on the
#: repeated sample lines, which are not the text the paper counted
REPRODUCED = by_data(1, 0)


def data_root_with(tmp_path: Path, files: dict[str, str], tokenizers: Path | None = None) -> Path:
    """A data root holding the given flores/<name> (the FLORES text of the language named by the value)
    and, given a data root, its tokenizer files."""
    root = tmp_path / "data"
    (root / "flores").mkdir(parents=True)
    for name, language in files.items():
        (root / "flores" / name).write_bytes(flores_bytes(language))
    if tokenizers is not None:
        # resolved: a relative data root would make the link point from tmp_path
        (root / "tokenizers").symlink_to((tokenizers / "tokenizers").resolve())
    return root


def test_the_shipped_figures() -> None:
    figures = published(PETROV)
    assert len(COLUMNS) == 11 and len(PETROV.not_loadable) == 16  # 27 columns in their table
    assert len(figures.names) == 204 and len(figures.values) == 204 * len(COLUMNS)
    assert figures.names["tur_Latn"] == "Turkish" and figures.names["kor_Hang"] == "Korean"
    for column, counts in PAPER.items():
        assert tuple(figures.values[(column, code, "tokens")] for code in FOUR) == counts


def test_the_shipped_figures_equal_the_source(data_root: Path) -> None:
    """Every kept value equals the paper's own CSV (mirrored in the data root), row by row."""
    figures = published(PETROV)
    with (data_root / "published" / "petrov2023_tokenization_lengths.csv").open(encoding="utf-8") as handle:
        source = list(csv.DictReader(handle))
    assert [row["Language"] for row in source] == list(figures.names.values())
    for row, code in zip(source, figures.names, strict=True):
        for column in COLUMNS:
            assert figures.values[(column, code, "tokens")] == int(row[column])


def test_the_joined_text_is_their_string(tmp_path: Path) -> None:
    lines = [f"sentence {i}" for i in range(DEV_LINES + DEVTEST_LINES)]
    path = tmp_path / "xxx_Latn.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    dev = "\n".join(lines[:DEV_LINES]) + "\n"  # their two files, each ending with a newline
    devtest = "\n".join(lines[DEV_LINES:]) + "\n"
    splits = read_flores(path)
    joined = petrov_join([splits[split] for split in PETROV.text.splits])
    assert joined == " ".join(dev.split("\n") + devtest.split("\n"))
    path.write_text("\n".join(lines[:-1]) + "\n", encoding="utf-8")
    with raises_code(CorpusError, "bad_data_file", value=2008):
        read_flores(path)


def test_all_forty_four_counts_are_identical(reproduce, data_root: Path, tmp_path: Path) -> None:
    status, out, err = reproduce("--data-dir", data_root, "--out", tmp_path)
    assert status == 0, err
    rows = read_rows(tmp_path)
    assert list(rows[0]) == ["tokenizer", "language", "metric", "published", "reproduced", "difference"]
    assert len(rows) == 44 and {row["language"] for row in rows} == set(FOUR)
    assert {row["tokenizer"] for row in rows} == set(COLUMNS)
    with (data_root / "published" / "petrov2023_tokenization_lengths.csv").open(encoding="utf-8") as handle:
        source = {row["Language"]: row for row in csv.DictReader(handle)}
    names = published(PETROV).names
    for row in rows:
        assert row["published"] == row["reproduced"] and row["difference"] == "0", row
        assert row["reproduced"] == source[names[row["language"]]][row["tokenizer"]]  # the paper's own file
        if row["tokenizer"] in PAPER:
            assert int(row["reproduced"]) == PAPER[row["tokenizer"]][FOUR.index(row["language"])]
    assert "44 of 44 published values reproduced exactly" in out


def test_one_altered_line_changes_the_result(reproduce, tmp_path: Path) -> None:
    """One changed FLORES sentence changes every column's count and, on FLORES-200, the exit status."""
    root = data_root_with(tmp_path, {"tur_Latn.txt": "tur_Latn"}, FULL_DATA_ROOT)
    status, _, _ = reproduce("--data-dir", root, "--out", tmp_path / "a")
    before = {row["tokenizer"]: row["reproduced"] for row in read_rows(tmp_path / "a")}
    path = root / "flores" / "tur_Latn.txt"
    lines = path.read_text(encoding="utf-8").split("\n")
    lines[5] += " Ekstra bir cümle."
    path.write_text("\n".join(lines), encoding="utf-8")
    altered, _, _ = reproduce("--data-dir", root, "--out", tmp_path / "b")
    after = {row["tokenizer"]: row["reproduced"] for row in read_rows(tmp_path / "b")}
    assert before.keys() == after.keys() and all(before[key] != after[key] for key in before)
    assert (status, altered) == (REPRODUCED, 1)


def test_the_languages_of_a_data_root(reproduce, tmp_path: Path) -> None:
    """Only the languages a data root holds; a requested language it lacks is an error (never skipped)."""
    root = data_root_with(tmp_path, {"tur_Latn.txt": "tur_Latn", "kor_Hang.txt": "kor_Hang"}, FULL_DATA_ROOT)
    status, _, err = reproduce("--data-dir", root, "--out", tmp_path / "a")
    assert status == REPRODUCED, err
    assert sorted({row["language"] for row in read_rows(tmp_path / "a")}) == ["kor_Hang", "tur_Latn"]
    status, out, err = reproduce("--data-dir", root, "--languages", "eng_Latn", "tur_Latn", "--out", tmp_path / "b")
    assert status == 2 and out == "" and not (tmp_path / "b").exists()
    assert f"eng_Latn: not reproducible: no {root}/flores/eng_Latn.txt" in err


def test_a_language_that_cannot_be_reproduced_fails(reproduce, tmp_path: Path) -> None:
    """A file one line short is bad input, one line per such language, never a partial success."""
    root = data_root_with(tmp_path, {"tur_Latn.txt": "tur_Latn", "kor_Hang.txt": "kor_Hang"})
    path = root / "flores" / "tur_Latn.txt"
    path.write_text("\n".join(path.read_text(encoding="utf-8").split("\n")[1:]), encoding="utf-8")
    status, out, err = reproduce("--data-dir", root, "--languages", "tur_Latn", "xxx_Latn", "--out", tmp_path / "o")
    assert status == 2 and out == "" and "Traceback" not in err
    assert "tur_Latn: not reproducible: " in err and "2,008 lines, expected 2,009" in err
    assert f"xxx_Latn: not reproducible: no {root}/flores/xxx_Latn.txt" in err


def test_an_added_language_is_counted_and_compared(reproduce, tmp_path: Path) -> None:
    """A user's flores/<lang>.txt is counted like the four; with a published figure it is compared.
    Offline there is no FLORES text beyond the four, so the Korean text stands in: under a code the
    paper lacks it is counted only, and its count is Korean's; under Japanese's code it must differ
    from the paper's Japanese row. The GPT-2 and LLaMA columns need the full data root's tokenizer files."""
    stand_ins = {"kor_Hang.txt": "kor_Hang", "xxx_Hang.txt": "kor_Hang", "jpn_Jpan.txt": "kor_Hang"}
    root = data_root_with(tmp_path, stand_ins, FULL_DATA_ROOT)
    status, out, _ = reproduce("--data-dir", root, "--out", tmp_path)
    rows = {(row["tokenizer"], row["language"]): row for row in read_rows(tmp_path)}
    columns = by_data(["cl100k_base", "ByT5", "CANINE", "UTF-32"], COLUMNS)
    figures = published(PETROV).values
    assert status == 1  # Korean text is not the Japanese the paper counted
    assert {column for column, _ in rows} == set(columns)
    for column in columns:
        korean = rows[(column, "kor_Hang")]["reproduced"]
        if FULL_DATA_ROOT is not None:
            assert korean == str(figures[(column, "kor_Hang", "tokens")])
        assert rows[(column, "xxx_Hang")] == {
            "tokenizer": column, "language": "xxx_Hang", "metric": "tokens", "published": "", "reproduced": korean,
            "difference": "",
        }  # fmt: skip
        japanese = rows[(column, "jpn_Jpan")]
        assert japanese["reproduced"] == korean and japanese["published"] != korean
        assert int(japanese["difference"]) == int(korean) - int(japanese["published"])
    assert f"{len(columns)} counted values have no published figure (1 language the paper lacks: xxx_Hang): " \
        "not compared" in out
    # Korean reproduces on FLORES-200 only (the sample's lines are not the text the paper counted)
    assert f"{by_data(0, len(columns))} of {2 * len(columns)} published values reproduced exactly" in out


def test_missing_tokenizer_files_are_reported(reproduce, tmp_path: Path) -> None:
    root = data_root_with(tmp_path, {"tur_Latn.txt": "tur_Latn"})
    status, out, _ = reproduce("--data-dir", root, "--out", tmp_path)
    assert status == REPRODUCED
    assert [row["tokenizer"] for row in read_rows(tmp_path)] == ["cl100k_base", "ByT5", "CANINE", "UTF-32"]
    for column, file in [("GPT-2", "gpt2.tiktoken"), ("RoBERTa", "gpt2.tiktoken"), ("p50k_edit", "p50k_base.tiktoken"),
                         ("LLAMA", "llama2-tokenizer.model"), ("Qwen", "qwen.tiktoken")]:  # fmt: skip
        assert f"note: {column}: not available: tokenizers/{file} missing" in out


def test_bad_input(reproduce, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TOKBENCH_DATA", raising=False)
    monkeypatch.setenv("TOKBENCH_CACHE", str(tmp_path / "cache"))  # no data root fetched earlier either
    for argv, message in [
        ((), "`tokbench reproduce petrov2023` needs a data root and none is given: fetch one with `tokbench data"),
        (("--data-dir", tmp_path / "missing"), "is not a directory"),
        (("--data-dir", tmp_path), "no flores/ folder"),
        (("--data-dir", DATA_ROOT, "--languages", "xxx_Latn"), "xxx_Latn: not reproducible: no "),
    ]:
        status, out, err = reproduce(*argv, "--out", tmp_path / "out")
        assert status == 2 and out == "" and "Traceback" not in err and message in err, err
    blocker = tmp_path / "file"
    blocker.write_text("x")
    status, _, err = reproduce("--data-dir", DATA_ROOT, "--out", blocker)
    assert status == 2 and "exists and is not a directory" in err
    assert not (tmp_path / "out").exists()


def test_languages_all_reproduces_every_file_exactly(reproduce, data_root: Path, tmp_path: Path) -> None:
    """``--languages all`` counts every flores/<lang>.txt a data root holds, whatever they are: here a few of the
    data root's files plus one code the paper lacks (Korean text), which makes the terminal show its summary.
    Every published value is identical, the unpublished ones are counted and said, and leaving --languages out
    gives the same result."""
    held = sorted(path.stem for path in (data_root / "flores").glob("*.txt"))[:4]
    root = data_root_with(tmp_path, {f"{code}.txt": code for code in held} | {"xxx_Hang.txt": held[-1]}, data_root)
    columns = COLUMNS
    figures = published(PETROV).values
    status, out, err = reproduce("--data-dir", root, "--languages", "all", "--out", tmp_path / "all")
    assert status == 0, err
    rows = read_rows(tmp_path / "all")
    assert len(rows) == (len(held) + 1) * len(columns) > FULL_TABLE_ROWS
    assert {row["language"] for row in rows} == {*held, "xxx_Hang"}
    for row in rows:
        if row["language"] == "xxx_Hang":
            assert row["published"] == row["difference"] == "", row
        else:
            assert int(row["reproduced"]) == figures[(row["tokenizer"], row["language"], "tokens")], row
            assert row["difference"] == "0", row
    compared, csv_path = len(held) * len(columns), tmp_path / "all" / "reproduction.csv"
    assert f"\n{compared} of {compared} published values reproduced exactly -> {csv_path}\n" in out
    assert f"{len(columns)} counted values have no published figure (1 language the paper lacks: xxx_Hang): " \
        "not compared" in out
    # the summary, one line per column: languages, compared, identical, differing
    for column in columns:
        assert re.search(rf"^{re.escape(column)} +tokens +{len(held) + 1} +{len(held)} +{len(held)} +0$", out, re.M)
    assert f"no value differs ({len(rows)} rows, every one in reproduction.csv)" in out
    assert len(out.splitlines()) < len(rows)  # not one line per row
    status, default_out, _ = reproduce("--data-dir", root, "--out", tmp_path / "default")
    assert status == 0 and default_out == out.replace(str(tmp_path / "all"), str(tmp_path / "default"))
    assert (tmp_path / "default" / "reproduction.csv").read_bytes() == csv_path.read_bytes()


def test_counts_do_not_depend_on_the_workers(tmp_path: Path) -> None:
    """The languages are counted in worker processes; one process gives the same rows in the same order."""
    root = data_root_with(tmp_path, {"tur_Latn.txt": "tur_Latn", "kor_Hang.txt": "kor_Hang",
                                     "eng_Latn.txt": "eng_Latn"}, FULL_DATA_ROOT)  # fmt: skip
    one, three = reproduce_table(PETROV, root, jobs=1), reproduce_table(PETROV, root, jobs=3)
    assert one.rows == three.rows and one.notes == three.notes
    assert [row.language for row in one.rows[:3]] == ["eng_Latn", "kor_Hang", "tur_Latn"]


def test_all_with_codes_is_bad_input(reproduce, tmp_path: Path) -> None:
    for languages in (("all", "tur_Latn"), ("kor_Hang", "all")):
        status, out, err = reproduce("--data-dir", DATA_ROOT, "--languages", *languages, "--out", tmp_path / "o")
        assert status == 2 and out == "" and not (tmp_path / "o").exists()
        code = next(language for language in languages if language != "all")
        assert err == "tokbench: error: --languages all means every flores/<lang>.txt of the data root: give it " \
            f"alone, not with codes ({code})\n"


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_on_a_terminal_only(reproduce, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bar over languages on stderr when it is a terminal, never on stdout; none with --quiet, none when
    stderr is not a terminal (the other tests)."""
    root = data_root_with(tmp_path, {"tur_Latn.txt": "tur_Latn", "kor_Hang.txt": "kor_Hang"})
    for quiet in ((), ("--quiet",)):
        terminal = _Terminal()
        monkeypatch.setattr(sys, "stderr", terminal)
        status, out, _ = reproduce("--data-dir", root, "--out", tmp_path / "o", *quiet)
        monkeypatch.undo()
        assert status == REPRODUCED and "languages:" not in out and "reproduced exactly" in out
        assert ("languages: 100%" in terminal.getvalue() and "2/2" in terminal.getvalue()) is not bool(quiet)


def test_the_terminal_stays_readable_at_two_hundred_languages() -> None:
    """200 languages x 11 columns: a summary per column, the differing rows (at most SHOWN_DIFFERING), the
    languages the paper lacks as a count and a few codes."""
    codes = [f"l{index:03d}_Latn" for index in range(200)]
    result = Reproduction()
    for column in COLUMNS:
        for index, code in enumerate(codes):
            figure = None if index >= 190 else 1000
            result.rows.append(Row(column, code, figure, 1001 if index < 7 and column == "LLAMA" else 1000))
    text = terminal_table(result)
    lines = text.splitlines()
    assert len(lines) < 30 and max(len(line) for line in lines) < 100
    assert re.search(r"^LLAMA +tokens +200 +190 +183 +7$", text, re.M)
    assert re.search(r"^GPT-2 +tokens +200 +190 +190 +0$", text, re.M)
    assert "differing values (7 of 7 shown; every row in reproduction.csv):" in text
    assert re.search(r"^LLAMA +l006_Latn +tokens +1,000 +1,001 +\+1$", text, re.M)
    assert unpublished_summary(result) == ("110 counted values have no published figure (10 languages the paper "
                                           "lacks: l190_Latn, l191_Latn, l192_Latn, l193_Latn, l194_Latn and 5 "
                                           "more): not compared")  # fmt: skip
    result.rows = [dataclasses.replace(row, reproduced=999) for row in result.rows]  # every value differs
    assert len(terminal_table(result).splitlines()) < 20 + SHOWN_DIFFERING


def test_help_states_the_definition(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["reproduce", "--help"])
    assert exit_info.value.code == 0
    text = " ".join(capsys.readouterr().out.split())  # the help wraps lines
    assert '" ".join(dev.split("\\n") + devtest.split("\\n"))' in text and "reproduction.csv" in text
    assert "Qwen (qwen.tiktoken, Qwen pattern, NFC first)" in text and "Not loadable offline" in text
    assert "words = spacy.blank(code) tokens" in text and "ByT5 (UTF-8 bytes + one </s> per call)" in text
    assert "or 'all': every flores/<lang>.txt of the data root (the default)" in text and "--quiet" in text


def test_unknown_table_and_list(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    root = data_root_with(tmp_path, {"tur_Latn.txt": "tur_Latn"})
    assert main(["reproduce", "nosuch2099", "--data-dir", str(DATA_ROOT), "--out", str(tmp_path / "o")]) == 2
    assert "unknown table 'nosuch2099'; choose one of: petrov2023, toksuite2025" in capsys.readouterr().err
    assert main(["reproduce", "--list", "--data-dir", str(root)]) == 0
    text = capsys.readouterr().out
    assert "petrov2023: Petrov, La Malfa, Torr, Bibi (2023)" in text and "toksuite2025: TokSuite (2025)" in text
    assert "in the data root: tur_Latn" in text
    assert "file: tokenizers/qwen.tiktoken (missing)" in text  # the sample data root holds no tokenizer files
    assert not (tmp_path / "o").exists()
