"""Sharing results: `tokbench export-results` (a Hugging Face datasets folder) and `tokbench compare`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from benchmarks.cli import main
from benchmarks.files import exported_schema, read_results, result_columns
from benchmarks.results.export import EXPORT_FILES

REPO = Path(__file__).resolve().parents[2]
QUICK = REPO / "reports" / "quick"


@pytest.fixture
def quick_run(tmp_path: Path) -> Path:
    """The committed quick run: its results.csv and manifest.json are a finished run directory."""
    run = tmp_path / "quick"
    shutil.copytree(QUICK, run)
    return run


def test_export_loads_with_datasets_and_reads_back_identical(quick_run: Path, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    out = tmp_path / "export"
    assert main(["export-results", str(quick_run), "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["README.md", "manifest.json", "results.parquet"]
    card = (out / "README.md").read_text(encoding="utf-8")
    header = card.split("---\n")[1]
    import yaml

    metadata = yaml.safe_load(header)
    assert metadata["configs"] == [{"config_name": "default", "data_files": "results.parquet"}]
    assert metadata["license"] == "other" and "Apache-2.0" in card and json.loads(
        (out / "manifest.json").read_text(encoding="utf-8")) == json.loads((quick_run / "manifest.json").read_text())

    assert pq.read_schema(out / "results.parquet").remove_metadata().equals(exported_schema())
    pd.testing.assert_frame_equal(read_results(out), read_results(quick_run))

    first = (out / "results.parquet").read_bytes()
    assert main(["export-results", str(quick_run), "--out", str(out)]) == 0  # an earlier export is rewritten
    assert (out / "results.parquet").read_bytes() == first  # deterministic

    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    import datasets

    loaded = datasets.load_dataset(str(out), split="train", cache_dir=str(tmp_path / "hf-cache"))
    assert loaded.column_names == [*result_columns(), "schema_version"]
    expected = read_results(quick_run)
    assert len(loaded) == len(expected)
    frame = loaded.to_pandas()
    assert frame["metric"].tolist() == expected["metric"].tolist()
    assert frame["value"].fillna(-1).tolist() == expected["value"].fillna(-1).tolist()
    assert set(frame["schema_version"]) == {2}


def test_export_refuses_foreign_folders_and_read_checks_the_schema(quick_run: Path, tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture) -> None:  # fmt: skip
    occupied = tmp_path / "occupied"
    occupied.mkdir()
    (occupied / "notes.txt").write_text("mine", encoding="utf-8")
    assert main(["export-results", str(quick_run), "--out", str(occupied)]) == 2
    assert "notes.txt" in capsys.readouterr().err and not (occupied / "results.parquet").exists()

    # a folder holding only the user's README.md is not an earlier export: it is left alone
    readme_only = tmp_path / "readme-only"
    readme_only.mkdir()
    (readme_only / "README.md").write_text("# my notes\n", encoding="utf-8")
    assert main(["export-results", str(quick_run), "--out", str(readme_only)]) == 2
    assert "README.md" in capsys.readouterr().err
    assert (readme_only / "README.md").read_text(encoding="utf-8") == "# my notes\n"

    out = tmp_path / "export"
    assert main(["export-results", str(quick_run), "--out", str(out)]) == 0
    # an export killed mid-write leaves its temporary file: the next export recognises it and goes on
    (out / ".results.parquet.k1ll3d.tmp").write_bytes(b"PAR1 half")
    assert main(["export-results", str(quick_run), "--out", str(out)]) == 0
    assert sorted(path.name for path in out.iterdir()) == sorted(EXPORT_FILES)
    table = pq.read_table(out / "results.parquet")
    # a newer schema version, then a field of the wrong type: both named, exit 2
    versions = pa.array([3] * len(table), pa.int32())
    pq.write_table(table.set_column(table.schema.get_field_index("schema_version"), "schema_version", versions),
                   out / "results.parquet")  # fmt: skip
    assert main(["check", str(out), "--baseline", str(REPO / "results/baseline/quick.json")]) == 2
    assert "schema_version [3]" in capsys.readouterr().err
    n_as_text = pa.array([str(v) for v in table.column("n").to_pylist()])
    pq.write_table(table.set_column(table.schema.get_field_index("n"), "n", n_as_text), out / "results.parquet")
    assert main(["check", str(out), "--baseline", str(REPO / "results/baseline/quick.json")]) == 2
    assert "field 'n' is string, expected int64" in capsys.readouterr().err


def _tables(markdown: str) -> dict[str, list[str]]:
    """Markdown comparison: heading -> its lines (note and table)."""
    tables: dict[str, list[str]] = {}
    heading = None
    for line in markdown.splitlines():
        if line.startswith("## "):
            heading = line[3:]
            tables[heading] = []
        elif heading is not None and line:
            tables[heading].append(line)
    return tables


def _rows(lines: list[str]) -> dict[str, list[str]]:
    table = [line for line in lines if line.startswith("|")][2:]
    cells = [[cell.strip() for cell in line.strip("|").split("|")] for line in table]
    return {row[0]: row[1:] for row in cells}


def test_a_run_and_its_exported_dataset_compare_cell_for_cell(quick_run: Path, tmp_path: Path) -> None:
    exported = tmp_path / "published"
    assert main(["export-results", str(quick_run), "--out", str(exported)]) == 0
    out = tmp_path / "comparison"
    assert main(["compare", str(quick_run), str(exported), "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["comparison.csv", "comparison.html", "comparison.md"]
    tables = _tables((out / "comparison.md").read_text(encoding="utf-8"))
    heading = "bytes / token (`bytes_per_token`) on `test`"
    assert heading in tables and not any(", table 2" in h for h in tables)  # same data: never split
    for lines in tables.values():
        rows = _rows(lines)
        local = {label.split("/", 1)[1]: cells for label, cells in rows.items() if label.startswith("quick/")}
        published = {label.split("/", 1)[1]: cells for label, cells in rows.items() if label.startswith("published/")}
        assert local and local == published

    # the cells are the report's own: the quick report's bytes_per_token table, row for row
    report_md = (QUICK / "report.md").read_text(encoding="utf-8")
    section = report_md.split("### bytes / token (`bytes_per_token`)\n\n", 1)[1]
    report_rows = _rows(section.split("\n\n", 2)[1].splitlines())  # after the caption
    compared = _rows(tables[heading])
    assert len(report_rows) == 9 and report_rows == {
        label.split("/", 1)[1]: cells for label, cells in compared.items() if label.startswith("quick/")}

    frame = pd.read_csv(out / "comparison.csv", keep_default_na=False)
    assert set(frame["table"]) >= {"bytes_per_token--test"}
    html = (out / "comparison.html").read_text(encoding="utf-8")
    assert html.count("<table>") == len(tables) and "http" not in html


def test_runs_on_different_evaluation_data_get_separate_tables(quick_run: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    shutil.copytree(quick_run, other)
    manifest = json.loads((other / "manifest.json").read_text(encoding="utf-8"))
    korean = manifest["corpora"]["embedded-kor"]  # as if its Korean text were another
    korean["fingerprint"] = "0" * 64
    korean["eval_fingerprints"] = dict.fromkeys(korean.get("eval_fingerprints", {"test": ""}), "0" * 64)
    (other / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    out = tmp_path / "comparison"
    assert main(["compare", str(quick_run), str(other), "--out", str(out)]) == 0
    tables = _tables((out / "comparison.md").read_text(encoding="utf-8"))
    first, second = tables["bytes / token (`bytes_per_token`) on `test`"], \
        tables["bytes / token (`bytes_per_token`) on `test`, table 2"]  # fmt: skip
    assert all(label.startswith("quick/") for label in _rows(first))
    assert all(label.startswith("other/") for label in _rows(second))
    assert any("other data" in line and "kor_Hang" in line and "000000000000" in line for line in second)


def test_per_set_fingerprints_decide_when_every_run_has_them(quick_run: Path, tmp_path: Path) -> None:
    """Two runs trained on different text (corpus fingerprints differ) but tested on the same test text
    (the same per-set fingerprint) are comparable; a differing per-set fingerprint splits them."""
    other = tmp_path / "other"
    shutil.copytree(quick_run, other)
    for run, corpus_print in ((quick_run, "a" * 64), (other, "b" * 64)):
        manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
        for entry in manifest["corpora"].values():
            entry["fingerprint"], entry["eval_fingerprints"] = corpus_print, {"test": "c" * 64}
        (run / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    heading = "bytes / token (`bytes_per_token`) on `test`"
    assert main(["compare", str(quick_run), str(other), "--out", str(tmp_path / "same")]) == 0
    tables = _tables((tmp_path / "same" / "comparison.md").read_text(encoding="utf-8"))
    assert f"{heading}, table 2" not in tables and len(_rows(tables[heading])) == 18

    manifest = json.loads((other / "manifest.json").read_text(encoding="utf-8"))
    manifest["corpora"]["embedded-tur"]["eval_fingerprints"]["test"] = "d" * 64
    (other / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    assert main(["compare", str(quick_run), str(other), "--out", str(tmp_path / "split")]) == 0
    tables = _tables((tmp_path / "split" / "comparison.md").read_text(encoding="utf-8"))
    assert any("tur_Latn" in line and "set fingerprint dddddddddddd" in line for line in tables[f"{heading}, table 2"])


def test_compare_names_an_unreadable_run_and_writes_nothing(quick_run: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture) -> None:  # fmt: skip
    out = tmp_path / "comparison"
    assert main(["compare", str(quick_run), str(tmp_path / "absent"), "--out", str(out)]) == 2
    assert "absent: no such run directory" in capsys.readouterr().err
    assert not out.exists()
    broken = tmp_path / "broken"
    shutil.copytree(quick_run, broken)
    manifest = json.loads((broken / "manifest.json").read_text(encoding="utf-8"))
    del manifest["corpora"]["embedded-kor"]["fingerprint"]
    (broken / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    assert main(["compare", str(quick_run), str(broken), "--out", str(out)]) == 2
    assert "corpora.embedded-kor.fingerprint is missing" in capsys.readouterr().err and not out.exists()


@pytest.mark.parametrize(("edit", "command", "words"), [
    (lambda run: _edit_manifest(run, corpora=["ud-tur"]), "compare", ("manifest.json", "corpora", "list")),
    (lambda run: _edit_manifest(run, corpora={"embedded-tur": 3}), "report", ("manifest.json", "corpora.embedded-tur")),
    (lambda run: (run / "paired.csv").write_text("corpus,eval_set\nx,y\n", encoding="utf-8"), "report",
     ("paired.csv", "metric")),
])  # fmt: skip
def test_an_edited_run_folder_is_input_checked_naming_file_and_field(quick_run, tmp_path, edit, command, words,
                                                                     capsys) -> None:  # fmt: skip
    edit(quick_run)
    argv = ["compare", str(quick_run), str(QUICK), "--out", str(tmp_path / "cmp")] if command == "compare" \
        else ["report", str(quick_run)]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert all(word in err for word in words) and "internal error" not in err


def _edit_manifest(run: Path, **fields) -> None:
    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    (run / "manifest.json").write_text(json.dumps({**manifest, **fields}), encoding="utf-8")
