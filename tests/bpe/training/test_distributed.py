"""Counting on an engine (bpe.training.distributed): file and dataset shards counted by the workers of a local
Dask cluster give exactly the serial count."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bpe.base import TokenizerError
from bpe.training.counts import count_pretokens
from bpe.training.distributed import LineReader, count_shards, file_shards, hub_shards, shard_texts
from tests.errors import raises_code

LANGUAGES = ("eng_Latn", "tur_Latn", "rus_Cyrl", "kor_Hang")


@pytest.fixture(scope="module")
def text_files(embedded_text: dict[str, list[str]], tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """One file per language, with a CRLF line and an invalid UTF-8 byte as a CLI user may have."""
    folder = tmp_path_factory.mktemp("text")
    files = []
    for language in LANGUAGES:
        path = folder / f"{language}.txt"
        body = "\n".join(embedded_text[language][:2500]).encode("utf-8")
        path.write_bytes(body + b"\r\nbroken \xff line\n")
        files.append(path)
    return files


def serial_counts(files: list[Path], pretokenizer: str):
    lines = []
    for path in files:
        with open(path, "rb") as handle:
            lines += list(LineReader(handle))
    return count_pretokens(lines, pretokenizer, workers=1)


def test_file_shards_cover_every_line_once(text_files: list[Path]) -> None:
    shards = file_shards(text_files, shard_bytes=20_000)
    assert len(shards) > 2 * len(text_files)
    for path in text_files:
        with open(path, "rb") as handle:
            whole = list(LineReader(handle))
        pieces = [text for shard in shards if shard.path == str(path.resolve()) for text in shard_texts(shard)]
        assert pieces == whole


def test_local_engine_equals_serial_count(text_files: list[Path]) -> None:
    assert count_shards(file_shards(text_files, 20_000), "gpt2") == serial_counts(text_files, "gpt2")


@pytest.mark.slow  # about 6 s: a local Dask cluster; CI runs it with -m slow
def test_dask_cluster_of_two_workers_equals_serial_count(text_files: list[Path], tmp_path: Path) -> None:
    pytest.importorskip("distributed", reason="the cluster extra is not installed: pip install 'tokbench[cluster]'")
    shards = file_shards(text_files, shard_bytes=50_000)
    # dataset shards: the same lines as two Parquet files, streamed by the workers through `datasets`
    for index, path in enumerate(text_files[:2]):
        with open(path, "rb") as handle:
            pq.write_table(pa.table({"text": list(LineReader(handle))}), tmp_path / f"part-{index}.parquet")
    data_files = [str(tmp_path / "part-0.parquet"), str(tmp_path / "part-1.parquet")]
    dataset = hub_shards("parquet", data_files=data_files, column="text")
    assert len(dataset) == 2
    counted = count_shards([*shards, *dataset], "unicode", engine="dask", workers=2)
    expected = serial_counts(text_files, "unicode").merged(serial_counts(text_files[:2], "unicode"))
    assert counted == expected


def test_a_byte_budget_per_dataset_shard(tmp_path: Path) -> None:
    lines = [f"line number {i} with some text" for i in range(200)]
    pq.write_table(pa.table({"text": lines}), tmp_path / "a.parquet")
    (shard,) = hub_shards("parquet", data_files=[str(tmp_path / "a.parquet")], max_bytes=300)
    texts = list(shard_texts(shard))
    assert texts == lines[: len(texts)] and 0 < sum(len(t.encode()) for t in texts) <= 300


def test_engine_errors(text_files: list[Path]) -> None:
    shards = file_shards(text_files[:1])
    with raises_code(TokenizerError, "unknown_engine", value="ray"):
        count_shards(shards, "gpt2", engine="ray")
    with raises_code(TokenizerError, "option_not_applicable", value="address"):
        count_shards(shards, "gpt2", address="tcp://nowhere:1")
    with raises_code(TokenizerError, "empty_training_input"):
        count_shards([], "gpt2")
    with raises_code(TokenizerError, "unreadable_file", value=text_files[0].parent / "missing.txt"):
        file_shards([text_files[0].parent / "missing.txt"])
    with raises_code(TokenizerError, "dataset_unavailable", value="parquet"):
        hub_shards("parquet", data_files=[str(text_files[0].parent / "missing.parquet")])
