"""The shipped specs' FLORES hub source (`openlanguagedata/flores_plus`, parquet, gated) read offline: a local folder
laid out as that hub repository (one config per language, splits dev and devtest, FLORES+ columns) goes through
the same ``read_hub`` path as the hub id, with only ``dataset`` replaced by the folder."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from corpora.errors import CorpusError
from corpora.sources import read_hub
from corpora.spec import load_spec
from tests.errors import raises_code

FLORES_PLUS = "openlanguagedata/flores_plus"


def flores_plus_folder(tmp_path: Path, language: str, splits: dict[str, list[str]]) -> Path:
    folder = tmp_path / "flores_plus"
    lines = ["---", "configs:", f"- config_name: {language}", "  data_files:"]
    for split, sentences in splits.items():
        path = f"{split}/{language}.parquet"
        (folder / split).mkdir(parents=True, exist_ok=True)
        iso, script = language.split("_")
        table = pa.table({"id": list(range(1, len(sentences) + 1)), "iso_639_3": [iso] * len(sentences),
                          "iso_15924": [script] * len(sentences), "text": sentences})  # fmt: skip
        pq.write_table(table, folder / path)
        lines += [f"  - split: {split}", f"    path: {path}"]
    (folder / "README.md").write_text("\n".join([*lines, "---", ""]), encoding="utf-8")
    return folder


@pytest.mark.parametrize("corpus", ["ud-tur", "ud-eng", "ud-kor", "ud-rus"])
def test_shipped_flores_hub_sources_read_a_local_folder_in_the_hub_layout(tmp_path, corpus):
    spec = load_spec(corpus)
    hubs = [hub for source in spec.sources for hub in source.hub if hub.dataset == FLORES_PLUS]
    assert [hub.split for hub in hubs] == ["dev", "devtest"]
    assert {hub.config for hub in hubs} == {spec.language} and {hub.column for hub in hubs} == {"text"}
    folder = flores_plus_folder(tmp_path, spec.language, {"dev": ["first", "second"], "devtest": ["third"]})
    read = [[(r.key, r.text) for r in read_hub(hub.model_copy(update={"dataset": str(folder)}))] for hub in hubs]
    assert read == [[("1", "first"), ("2", "second")], [("1", "third")]]


def test_no_loading_script_dataset_is_named_by_a_shipped_spec():
    for corpus in ["ud-tur", "ud-eng", "ud-kor", "ud-rus"]:
        datasets = {hub.dataset for source in load_spec(corpus).sources for hub in source.hub}
        assert "facebook/flores" not in datasets and FLORES_PLUS in datasets


def test_a_gated_dataset_says_a_token_and_the_terms_are_needed(monkeypatch):
    def refuse(path, **_options):
        raise FileNotFoundError(f"Dataset '{path}' is a gated dataset on the Hub. You must be authenticated.")

    monkeypatch.setattr("corpora.sources._load_dataset", refuse)
    hub = next(h for s in load_spec("ud-tur").sources for h in s.hub if h.dataset == FLORES_PLUS)
    with raises_code(CorpusError, "gated_dataset") as caught:
        list(read_hub(hub))
    message = str(caught.value)  # the split, and the two ways on: a token, or a data root
    assert "flores_plus/tur_Latn/dev" in message and "HF_TOKEN" in message and "--data-dir" in message
