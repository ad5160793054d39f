"""Reproduction files: the registry is every ``benchmarks/reproductions/*.toml``, a table whose measurements exist
needs no code, an invalid file is one error naming file, field and value, and what the files share (FLORES
reading, the joined text, language codes, the reference language) is written once."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from benchmarks.cli import main
from benchmarks.reproductions import REPRODUCTIONS, get_reproduction
from benchmarks.reproductions.engine import published, published_label, reproduce
from benchmarks.reproductions.measures import MEASURES, WORDS, Counts
from benchmarks.reproductions.model import ReproductionFileError, read_reproduction
from corpora.flores import DEV_LINES, REFERENCE_LANGUAGE, petrov_join, read_flores
from corpora.spec import flores_spec, short_language_code
from tests.conftest import DATA_ROOT

REPO = Path(__file__).resolve().parents[3]
FOLDER = REPO / "benchmarks" / "reproductions"
PETROV_TEXT = (FOLDER / "petrov2023.toml").read_text(encoding="utf-8")
TOKSUITE_TEXT = (FOLDER / "toksuite2025.toml").read_text(encoding="utf-8")


def test_the_registry_is_every_file() -> None:
    files = {path.stem: path for path in sorted(FOLDER.glob("*.toml"))}
    assert files == REPRODUCTIONS
    assert list(REPRODUCTIONS) == ["petrov2023", "toksuite2025"]
    for name in REPRODUCTIONS:
        assert get_reproduction(name).name == name
    assert not list(FOLDER.glob("petrov2023.py")) and not list(FOLDER.glob("toksuite2025.py"))  # no code per paper


def test_the_docs_name_every_measure_splitter_and_column() -> None:
    text = (REPO / "docs" / "reproductions.md").read_text(encoding="utf-8")
    for name in [*MEASURES, *WORDS]:
        assert f"`{name}`" in text, name
    sections = dict(re.findall(r"^## `([^`]+)`.*?\n(.*?)(?=^## |\Z)", text, re.MULTILINE | re.DOTALL))
    for name in REPRODUCTIONS:
        table = get_reproduction(name)
        for label in [*(column.label for column in table.tokenizers), *table.not_loadable]:
            assert label in sections[name], (name, label)


def test_the_published_files_as_one_name() -> None:
    assert published_label(get_reproduction("petrov2023")) == "petrov2023.csv"
    assert published_label(get_reproduction("toksuite2025")) == "toksuite2025_{fertility,parity,pcw}.csv"


# ------------------------------------------------------------------------------------------- invalid files
#: (file text, the field named, the value given there)
INVALID = {
    "wrong type": (PETROV_TEXT.replace('pattern = "gpt2"', "pattern = 3", 1), "tokenizers[0].pattern", 3),
    "unknown format": (PETROV_TEXT.replace('format = "sentencepiece"', 'format = "spm"'), "tokenizers[5].format",
                       "spm"),
    "unknown metric": (PETROV_TEXT.replace('metrics = ["tokens"]', 'metrics = ["tokenz"]'), "metrics[0]", "tokenz"),
    "metric without its words": (PETROV_TEXT.replace('metrics = ["tokens"]', 'metrics = ["tokens", "pcw"]'),
                                 "metrics[1]", "pcw"),
    "metric without a joined text": (TOKSUITE_TEXT.replace('metrics = ["fertility"', 'metrics = ["tokens"'),
                                     "metrics[0]", "tokens"),
    "missing key": (re.sub(r"(?m)^citation = .*\n", "", PETROV_TEXT), "citation", None),
    "unknown key": (PETROV_TEXT.replace("[text]\n", "[text]\nsplit = 1\n"), "text.split", 1),
    "unknown join": (PETROV_TEXT.replace('join = "petrov"', 'join = "concat"'), "text.join", "concat"),
    "unknown split": (PETROV_TEXT.replace('splits = ["dev", "devtest"]', 'splits = ["dev", "test"]'),
                      "text.splits[1]", "test"),
    "no such published file": (PETROV_TEXT.replace('file = "petrov2023.csv"', 'file = "petrov2024.csv"'),
                               "published[0].file", "petrov2024.csv"),
    "no such column": (PETROV_TEXT.replace('key = "flores"', 'key = "code"'), "published[0].key", "code"),
    "published metric not measured": (PETROV_TEXT.replace('metric = "tokens"', 'metric = "parity"'),
                                      "published[0].metric", "parity"),
    "negative tolerance": (PETROV_TEXT.replace("tolerance = 0", "tolerance = -1"), "compare.tolerance", -1),
    "not a language code": (PETROV_TEXT.replace('codes = "data-root"', 'codes = ["tur_Latn", "turkish"]'),
                            "languages.codes", ["tur_Latn", "turkish"]),
    "name not the file's": (PETROV_TEXT.replace('name = "petrov2023"', 'name = "petrov2024"'), "name", "petrov2024"),
    "a column twice": (PETROV_TEXT.replace('label = "r50k_base"', 'label = "GPT-2"'), "tokenizers[1].label", "GPT-2"),
    "loadable and not": (PETROV_TEXT.replace("Glot500 =", "LLAMA ="), "not_loadable.LLAMA", "LLAMA"),
    "name and path": (PETROV_TEXT.replace('name = "cl100k"', 'name = "cl100k"\npath = "x"'), "tokenizers[6]",
                      {"label": "cl100k_base", "name": "cl100k", "path": "x"}),
    "not TOML": (PETROV_TEXT.replace("[text]", "[text"), None, None),
}


@pytest.mark.parametrize("case", INVALID)
def test_an_invalid_file_names_file_field_and_value(case: str, tmp_path: Path) -> None:
    text, field, value = INVALID[case]
    path = tmp_path / ("toksuite2025.toml" if 'name = "toksuite2025"' in text else "petrov2023.toml")
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ReproductionFileError) as info:
        read_reproduction(path)
    assert (info.value.file, info.value.field, info.value.value) == (path, field, value)
    assert str(info.value).startswith(f"{path}: {field}: " if field else f"{path}: ")
    assert "\n" not in str(info.value)


def test_an_invalid_file_on_the_command_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """Running the table is exit 2 and one line, no traceback; every other table and `--help` still work."""
    path = tmp_path / "broken.toml"
    path.write_text(PETROV_TEXT.replace('name = "petrov2023"', 'name = "broken"').replace("tolerance = 0",
                    'tolerance = "none"'), encoding="utf-8")  # fmt: skip
    monkeypatch.setitem(REPRODUCTIONS, "broken", path)
    status = main(["reproduce", "broken", "--data-dir", str(DATA_ROOT), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert status == 2 and len(err.splitlines()) == 1 and "Traceback" not in err
    assert err.startswith(f"tokbench: error: {path}: compare.tolerance: ") and "'none'" in err
    assert not (tmp_path / "out").exists()
    with pytest.raises(SystemExit) as exit_info:
        main(["reproduce", "--help"])
    assert exit_info.value.code == 0 and "broken: unusable:" in capsys.readouterr().out
    assert main(["reproduce", "--list", "--data-dir", str(DATA_ROOT)]) == 2  # the listing reads every file
    assert "compare.tolerance" in capsys.readouterr().err


# ------------------------------------------------------------------------------------ a table without code
def test_a_new_table_is_one_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    """A file of existing measurements is a table: Petrov et al.'s count over FLORES dev alone, a language list,
    a tolerance.  Its ByT5 and CANINE columns are the UTF-8 bytes and code points of the joined dev text."""
    text = (PETROV_TEXT.replace('name = "petrov2023"', 'name = "devonly"')
            .replace('splits = ["dev", "devtest"]', 'splits = ["dev"]')
            .replace('codes = "data-root"', 'codes = ["tur_Latn"]')
            .replace("tolerance = 0", "tolerance = 1000000"))  # fmt: skip
    path = tmp_path / "devonly.toml"
    path.write_text(text, encoding="utf-8")
    monkeypatch.setitem(REPRODUCTIONS, "devonly", path)
    root = tmp_path / "data"
    (root / "flores").mkdir(parents=True)
    lines = (DATA_ROOT / "flores" / "tur_Latn.txt").read_text(encoding="utf-8").splitlines()
    filled = [lines[i % len(lines)] for i in range(2009)]  # the shipped sample is shorter than FLORES
    (root / "flores" / "tur_Latn.txt").write_text("\n".join(filled) + "\n", encoding="utf-8")
    (root / "flores" / "kor_Hang.txt").write_text("\n".join(filled) + "\n", encoding="utf-8")  # not listed
    status = main(["reproduce", "devonly", "--data-dir", str(root), "--out", str(tmp_path / "out")])
    out = capsys.readouterr().out
    joined = petrov_join([filled[:DEV_LINES]])
    assert status == 0 and "published values reproduced within 1e+06 ->" in out
    rows = {row.split(",")[0]: row.split(",") for row in (tmp_path / "out" / "reproduction.csv").read_text().split()}
    assert rows["ByT5"][1:5] == ["tur_Latn", "tokens", rows["ByT5"][3], str(len(joined.encode("utf-8")))]
    assert rows["CANINE"][4] == str(len(joined)) and "kor_Hang" not in out
    result = reproduce(read_reproduction(path), root, jobs=1)
    assert result.tolerance == 1000000 and not result.differing and len(result.compared) == len(result.rows)


# ------------------------------------------------------------------------------------------- measurements
def test_the_measurements() -> None:
    words, sentences = Counts(words=[1, 2, 3, 1]), Counts(sentences=[2, 4, 0])
    english = Counts(sentences=[1, 2, 0])
    assert MEASURES["tokens"].compute(Counts(text=7), None, 1) == 7  # special tokens never counted
    assert MEASURES["fertility"].compute(words, None, 1) == 7 / 4
    assert MEASURES["pcw"].compute(words, None, 1) == 2 / 4
    assert MEASURES["parity"].compute(sentences, english, 0) == (2 / 1 + 4 / 2) / 2  # a 0-token pair left out
    assert MEASURES["parity"].compute(sentences, english, 1) == (3 / 2 + 5 / 3 + 1 / 1) / 3  # specials included
    assert [name for name, measure in MEASURES.items() if measure.reference] == ["parity"]


def test_published_figures_read_both_layouts() -> None:
    petrov, toksuite = published(get_reproduction("petrov2023")), published(get_reproduction("toksuite2025"))
    assert petrov.values[("GPT-2", "tur_Latn", "tokens")] == 127797 and len(petrov.languages) == 204
    assert toksuite.values[("ByT5", "tur_Latn", "parity")] == 1.12 and petrov.names["kor_Hang"] == "Korean"
    assert set(toksuite.languages) == {"eng_Latn", "tur_Latn", "ita_Latn", "pes_Arab", "zho_Hans"}


# ------------------------------------------------------------------------------------------ written once
def test_one_flores_reader(tmp_path: Path) -> None:
    path = tmp_path / "xxx_Latn.txt"
    path.write_text("".join(f" line {i} \n" for i in range(2009)), encoding="utf-8")
    splits = read_flores(path)
    assert (len(splits["dev"]), len(splits["devtest"])) == (997, 1012) and splits["dev"][0] == " line 0 "


def test_one_language_code_conversion() -> None:
    expected = {"eng_Latn": "en", "tur_Latn": "tr", "ita_Latn": "it", "pes_Arab": "fa", "zho_Hans": "zh",
                "cmn_Hans": "zh", "ajp_Arab": "ajp", "kor": "ko"}  # fmt: skip
    assert {code: short_language_code(code) for code in expected} == expected
    assert flores_spec("flores-200:pes_Arab").short_language == "fa"  # the corpus spec asks the same function


def test_one_reference_language() -> None:
    from benchmarks.run import parallel

    assert REFERENCE_LANGUAGE == "eng_Latn" and parallel.ENGLISH is REFERENCE_LANGUAGE
    sources = [path for package in ("bpe", "corpora", "benchmarks") for path in sorted((REPO / package).rglob("*.py"))]
    literal = [str(path.relative_to(REPO)) for path in sources
               if path.name != "flores.py" and re.search(r"=\s*[\"']eng_Latn[\"']\s*(#.*)?$", path.read_text(), re.M)]
    assert not literal, f"the reference language defined again: {literal}"  # fmt: skip


def test_only_the_command_imports_the_reproductions() -> None:
    """A reproduction is read by the engine behind `tokbench reproduce` (and `data fetch --languages all`, for
    Petrov et al.'s languages); no run, metric or corpus imports one."""
    importers = []
    for package in ("bpe", "corpora", "benchmarks"):
        for path in sorted((REPO / package).rglob("*.py")):
            relative = path.relative_to(REPO).as_posix()
            if relative.startswith(("benchmarks/reproductions/", "benchmarks/commands/")):
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else (
                    [node.module] if isinstance(node, ast.ImportFrom) and node.module else [])  # fmt: skip
                importers += [relative for name in names if name.startswith("benchmarks.reproductions")]
    assert not importers, importers
