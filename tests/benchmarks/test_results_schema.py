"""The results schema (``benchmarks.files.results_schema``, version 2): one typed column per family option,
derived from the families' option models, written narrow (only the options a run sets) and read back with the
full declared schema; an exported dataset of another version is refused."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pydantic import Field

import bpe
from benchmarks.cli import main
from benchmarks.errors import BenchmarkError
from benchmarks.files import (
    exported_schema,
    option_values,
    options_label,
    read_results,
    result_columns,
    results_schema,
    results_table,
    write_results,
)
from benchmarks.report import inference_method
from benchmarks.run.units import ResultRow, Unit, tidy_rows
from bpe.models.char import CharOptions, CharTokenizer
from tests.errors import raises_code


def unit(kind: str, options: tuple[tuple[str, object], ...] = (), train_chars: int | None = None,
         label: str | None = None) -> Unit:  # fmt: skip
    return Unit("embedded-eng", "eng_Latn", label or kind, kind, "family", 400, options, train_chars)


def rows_of(*units: Unit) -> list[dict[str, object]]:
    row = ResultRow("test", "", "bytes_per_token", 3.25, math.nan, math.nan, 12)
    return [r for u in units for r in tidy_rows(u, [row])]


def test_a_unit_writes_the_validated_value_of_each_option_it_sets() -> None:
    written = unit("char-bpe", (("dropout", 0.1), ("encode_mode", "merges"), ("end_of_word", "separate")), 20_000)
    columns = written.columns()
    assert columns["opt_encode_mode"] == "merges" and columns["opt_dropout"] == 0.1
    assert columns["train_chars"] == 20_000 and "opt_min_frequency" not in columns  # not set: no value
    assert option_values(columns) == {"dropout": 0.1, "encode_mode": "merges", "end_of_word": "separate"}
    assert options_label(columns) == "dropout=0.1,encode_mode=merges,end_of_word=separate,train_chars=20000"
    assert options_label(columns, train_chars=False) == "dropout=0.1,encode_mode=merges,end_of_word=separate"
    assert options_label(unit("char").columns()) == ""
    # the earlier name of an encode mode reads as the current one (the options model's alias), once, here
    assert unit("char-bpe", (("encode_mode", "greedy"),)).columns()["opt_encode_mode"] == "longest-prefix"


def test_option_columns_are_typed_from_the_declarations() -> None:
    schema = results_schema()
    assert schema.field("opt_end_of_word").type == pa.string()  # a Literal of strings
    assert schema.field("opt_min_frequency").type == pa.int64()
    assert schema.field("opt_dropout").type == pa.float64()
    assert schema.field("opt_nbest").type == pa.int64()  # Optional[int]
    assert schema.field("opt_alpha").type == pa.float64() and schema.field("opt_alpha").nullable
    assert "options" not in schema.names and schema.field("partner").type == pa.string()
    names = schema.names
    assert names.index("vocab_size") < names.index("opt_alpha") < names.index("train_chars") < names.index("eval_set")


def test_typed_columns_round_trip_csv_to_read_results_to_parquet(tmp_path: Path) -> None:
    rows = rows_of(unit("char-bpe", (("end_of_word", "separate"), ("min_frequency", 3))),
                   unit("byte-bpe", (("dropout", 0.25), ("seed", 7))), unit("char"))  # fmt: skip
    write_results(tmp_path, rows)
    header = (tmp_path / "results.csv").read_text(encoding="utf-8").splitlines()[0].split(",")
    # only the options some row sets are written; the rest of the schema in its order
    assert [c for c in header if c.startswith("opt_")] == ["opt_dropout", "opt_end_of_word", "opt_min_frequency",
                                                            "opt_seed"]  # fmt: skip
    assert [c for c in header if not c.startswith("opt_")] == [c for c in result_columns() if not c.startswith("opt_")]
    (tmp_path / "results.parquet").unlink()  # read the CSV
    frame = read_results(tmp_path)
    assert list(frame.columns) == result_columns()
    assert str(frame["opt_min_frequency"].dtype) == "Int64" and str(frame["opt_dropout"].dtype) == "Float64"
    assert str(frame["opt_end_of_word"].dtype) == "string" and frame["opt_alpha"].isna().all()
    by_label = frame.set_index("tokenizer")
    assert by_label.loc["char-bpe", "opt_min_frequency"] == 3 and pd.isna(by_label.loc["char", "opt_min_frequency"])
    assert by_label.loc["byte-bpe", "opt_dropout"] == 0.25 and by_label.loc["byte-bpe", "opt_seed"] == 7

    exported = tmp_path / "exported"
    exported.mkdir()
    pq.write_table(results_table(frame), exported / "results.parquet")
    assert pq.read_schema(exported / "results.parquet").remove_metadata().equals(exported_schema())
    pd.testing.assert_frame_equal(read_results(exported), frame)


class ToyOptions(CharOptions):
    """A toy family's options: the character family's, with two of its own."""

    toy_flag: Annotated[bool, Field(description="a flag only the toy family takes")] = False
    toy_weight: Annotated[float | None, Field(description="a weight only the toy family takes")] = None


class ToyTokenizer(CharTokenizer):
    family = "toy"
    options_model = ToyOptions


def test_a_new_option_of_a_new_family_is_a_column_without_editing_the_schema(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert "opt_toy_flag" not in result_columns()
    monkeypatch.setitem(bpe.FAMILIES, "toy", f"{__name__}:ToyTokenizer")
    schema = results_schema()
    assert schema.field("opt_toy_flag").type == pa.bool_() and schema.field("opt_toy_weight").type == pa.float64()
    toy = unit("toy", (("toy_flag", True), ("toy_weight", 0.5)))
    write_results(tmp_path, rows_of(toy, unit("toy", (("toy_flag", False),), label="toy-off")))
    (tmp_path / "results.parquet").unlink()
    frame = read_results(tmp_path).set_index("tokenizer")
    assert str(frame["opt_toy_flag"].dtype) == "boolean"
    assert frame.loc["toy", "opt_toy_flag"] is True or frame.loc["toy", "opt_toy_flag"] == True  # noqa: E712
    assert not frame.loc["toy-off", "opt_toy_flag"] and pd.isna(frame.loc["toy-off", "opt_toy_weight"])
    assert frame.loc["toy", "opt_toy_weight"] == 0.5


def _v1_dataset(folder: Path) -> Path:
    """An exported dataset of results schema version 1: options as one ``k=v`` text column."""
    folder.mkdir()
    table = pa.table({"corpus": ["kit"], "language": ["eng_Latn"], "tokenizer": ["char-bpe"], "kind": ["char-bpe"],
                      "row_type": ["family"], "vocab_size": pa.array([800], pa.int64()),
                      "options": ["end_of_word=separate"], "eval_set": ["test"], "reference": [""],
                      "metric": ["bytes_per_token"], "value": [3.0], "ci_low": [2.0], "ci_high": [4.0],
                      "n": pa.array([10], pa.int64()), "schema_version": pa.array([1], pa.int32())})  # fmt: skip
    pq.write_table(table, folder / "results.parquet")
    return folder


def test_an_old_version_1_dataset_is_refused_with_a_clear_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = _v1_dataset(tmp_path / "v1")
    with raises_code(BenchmarkError, "unsupported_version", value=[1]):
        read_results(old)
    assert main(["compare", str(old), str(old), "--out", str(tmp_path / "cmp")]) == 2
    assert "schema_version [1]" in capsys.readouterr().err and not (tmp_path / "cmp").exists()
    # a version-1 run directory (no schema_version column): named as such too
    run = tmp_path / "v1-run"
    run.mkdir()
    pd.read_parquet(old / "results.parquet").drop(columns="schema_version").to_csv(run / "results.csv", index=False)
    with raises_code(BenchmarkError, "unsupported_version", value=1) as caught:
        read_results(run)
    assert "results.csv" in str(caught.value)


def test_inference_method_reads_the_typed_options() -> None:
    assert inference_method("char-bpe", {}) == "merges"
    assert inference_method("morfessor", {}) == "viterbi"  # the family's own method when unset
    assert inference_method("char-bpe", {"encode_mode": "longest-prefix"}) == "longest-prefix"
    assert inference_method("char-bpe", {"dropout": 0.1, "encode_mode": "merges"}) == "merges + dropout 0.1"
    assert inference_method("spm-unigram", {"alpha": 0.1}) == "likelihood + sampling α=0.1"
    assert inference_method("char-bpe", {"dropout": 0.0}) == "merges"


def test_check_catches_a_changed_vocab_overlap_value(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from benchmarks import check

    byte_bpe, char_bpe = unit("byte-bpe"), unit("char-bpe", (("end_of_word", "separate"),))
    overlap = ResultRow("train", "", "vocab_overlap", 0.25, math.nan, math.nan, 800)
    pairs = [dict(row, partner=partner) for partner in ("char-bpe", "cl100k") for row in tidy_rows(byte_bpe, [overlap])]
    rows = [*rows_of(byte_bpe, char_bpe), *pairs]
    run = tmp_path / "run"
    run.mkdir()
    write_results(run, rows)
    baseline = tmp_path / "baseline.json"
    assert check.write_baseline(run, baseline) == 4  # two overlap rows of one tokenizer: two keys, by partner
    assert main(["check", str(run), "--baseline", str(baseline)]) == 0
    moved = [dict(row, value=0.3) if row.get("partner") == "cl100k" else row for row in rows]
    write_results(run, moved)
    changes = check.compare(run, check.read_baseline(baseline))
    assert [(c.key.tokenizer, c.key.partner, c.key.metric, c.status, c.old, c.new) for c in changes] == [
        ("byte-bpe", "cl100k", "vocab_overlap", "moved", 0.25, 0.3)]
    assert changes[0].key.label == "byte-bpe~cl100k"
    capsys.readouterr()
    assert main(["check", str(run), "--baseline", str(baseline)]) == 1  # a descriptive move beyond tolerance fails
    assert "byte-bpe~cl100k" in capsys.readouterr().out
    document = check.check_document(changes, run, baseline)
    assert document["changes"][0]["partner"] == "cl100k" and document["changes"][0]["options"] == {}
