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
from benchmarks.files import EXPORTED_SCHEMA, RESULT_COLUMNS, read_results

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

    assert pq.read_schema(out / "results.parquet").remove_metadata().equals(EXPORTED_SCHEMA)
    pd.testing.assert_frame_equal(read_results(out), read_results(quick_run))

    first = (out / "results.parquet").read_bytes()
    assert main(["export-results", str(quick_run), "--out", str(out)]) == 0  # an earlier export is rewritten
    assert (out / "results.parquet").read_bytes() == first  # deterministic

    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    import datasets

    loaded = datasets.load_dataset(str(out), split="train", cache_dir=str(tmp_path / "hf-cache"))
    assert loaded.column_names == [*RESULT_COLUMNS, "schema_version"]
    expected = read_results(quick_run)
    assert len(loaded) == len(expected)
    frame = loaded.to_pandas()
    assert frame["metric"].tolist() == expected["metric"].tolist()
    assert frame["value"].fillna(-1).tolist() == expected["value"].fillna(-1).tolist()
    assert set(frame["schema_version"]) == {1}


def test_export_refuses_foreign_folders_and_read_checks_the_schema(quick_run: Path, tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture) -> None:  # fmt: skip
    occupied = tmp_path / "occupied"
    occupied.mkdir()
    (occupied / "notes.txt").write_text("mine", encoding="utf-8")
    assert main(["export-results", str(quick_run), "--out", str(occupied)]) == 2
    assert "notes.txt" in capsys.readouterr().err and not (occupied / "results.parquet").exists()

    out = tmp_path / "export"
    assert main(["export-results", str(quick_run), "--out", str(out)]) == 0
    table = pq.read_table(out / "results.parquet")
    # a newer schema version, then a field of the wrong type: both named, exit 2
    versions = pa.array([2] * len(table), pa.int32())
    pq.write_table(table.set_column(table.schema.get_field_index("schema_version"), "schema_version", versions),
                   out / "results.parquet")  # fmt: skip
    assert main(["check", str(out), "--baseline", str(REPO / "results/baseline/quick.json")]) == 2
    assert "schema_version [2]" in capsys.readouterr().err
    n_as_text = pa.array([str(v) for v in table.column("n").to_pylist()])
    pq.write_table(table.set_column(table.schema.get_field_index("n"), "n", n_as_text), out / "results.parquet")
    assert main(["check", str(out), "--baseline", str(REPO / "results/baseline/quick.json")]) == 2
    assert "field 'n' is string, expected int64" in capsys.readouterr().err
