"""The FineWeb specs of the GPU-scale language models (`fineweb2-*`, `fineweb-eng`) read offline: a local folder
laid out as the hub repository (FineWeb-2: one config per language, `data/<config>/train/*.parquet`; FineWeb:
`sample/10BT/*.parquet`) goes through the same hub source path as the hub id, with only ``dataset`` replaced by
the folder, and streaming stops at the spec's ``max_chars``."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from corpora import load_corpus
from corpora.sources import read_hub
from corpora.spec import load_spec
from tests.conftest import DATA_ROOT

LAYOUTS = {  # corpus -> (hub dataset, config, the folder of its train files)
    "fineweb2-tur": ("HuggingFaceFW/fineweb-2", "tur_Latn", "data/tur_Latn/train"),
    "fineweb2-rus": ("HuggingFaceFW/fineweb-2", "rus_Cyrl", "data/rus_Cyrl/train"),
    "fineweb2-kor": ("HuggingFaceFW/fineweb-2", "kor_Hang", "data/kor_Hang/train"),
    "fineweb-eng": ("HuggingFaceFW/fineweb", "sample-10BT", "sample/10BT"),
}


def hub_folder(tmp_path: Path, config: str, train_dir: str, shards: list[list[str]]) -> Path:
    """A folder in the repository's layout: a README whose YAML names the config's files, parquet shards with
    FineWeb's columns (text, id, url, ...)."""
    folder = tmp_path / "hub"
    (folder / train_dir).mkdir(parents=True)
    for number, texts in enumerate(shards):
        table = pa.table({"text": texts, "id": [f"<urn:{number}:{i}>" for i in range(len(texts))],
                          "url": [f"https://example.org/{number}/{i}" for i in range(len(texts))]})  # fmt: skip
        pq.write_table(table, folder / train_dir / f"000_{number:05d}.parquet")
    readme = ["---", "configs:", f"- config_name: {config}", "  data_files:", "  - split: train",
              f"    path: {train_dir}/*", "---", ""]  # fmt: skip
    (folder / "README.md").write_text("\n".join(readme), encoding="utf-8")
    return folder


@pytest.mark.parametrize("corpus", sorted(LAYOUTS))
def test_the_fineweb_specs_read_a_local_folder_in_the_hub_layout(tmp_path: Path, corpus: str) -> None:
    dataset, config, train_dir = LAYOUTS[corpus]
    spec = load_spec(corpus)
    [hub] = [hub for source in spec.sources if source.kind == "hf" for hub in source.hub]
    assert (hub.dataset, hub.config, hub.split, hub.column) == (dataset, config, "train", "text")
    folder = hub_folder(tmp_path, config, train_dir, [["first page", "second page"], ["third page"]])
    read = [(record.key, record.text) for record in read_hub(hub.model_copy(update={"dataset": str(folder)}))]
    assert read == [("1", "first page"), ("2", "second page"), ("3", "third page")]


def test_a_fineweb_corpus_streams_its_training_text_up_to_max_chars(tmp_path: Path, monkeypatch) -> None:
    """The whole spec through the loader: training documents from the hub folder, in order, until the
    role's character budget is full (the shards after it are never read), evaluation on FLORES-200."""
    dataset, config, train_dir = LAYOUTS["fineweb2-tur"]
    pages = [f"Sayfa {n:02d}: " + " ".join(["kelime"] * 20) for n in range(60)]
    folder = hub_folder(tmp_path, config, train_dir, [pages[:30], pages[30:]])
    spec_text = load_spec("fineweb2-tur").path.read_text(encoding="utf-8")  # type: ignore[union-attr]
    spec_text = spec_text.replace(f'dataset = "{dataset}"', f'dataset = "{folder.as_posix()}"')
    spec_text = spec_text.replace("max_chars = 60000000", f"max_chars = {len(pages[0]) * 12}")
    path = tmp_path / "fineweb2-tur.toml"
    path.write_text(spec_text, encoding="utf-8")
    monkeypatch.setenv("TOKBENCH_CACHE", str(tmp_path / "cache"))
    corpus = load_corpus(load_spec(path), data_dir=DATA_ROOT)
    train = [document.text for document in corpus.documents("train")]
    assert train == pages[:12]
    assert corpus.documents("eval")  # FLORES-200 from the data root
