"""Pre-token counts (bpe.training.counts, bpe.kernels.count_kernel): the compiled pre-tokenizers cut exactly as the
regexes do, counting is independent of threads and chunks, the Parquet format round-trips and is
checked, and training from counts equals training from the text for every family that can."""

from __future__ import annotations

import json
import threading
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bpe
from bpe.base import TokenizerError
from bpe.pipeline.pretokenizers import PRETOKENIZERS, get_pretokenizer
from bpe.training import counts as counts_module
from bpe.training.counts import PretokenCounts, count_pretokens, read_counts
from tests.errors import UNSET, raises_code

LANGUAGES = ("eng_Latn", "tur_Latn", "rus_Cyrl", "kor_Hang")
COMPILED = ("gpt2", "unicode", "whitespace", "none")


def regex_counts(lines: list[str], pretokenizer: str) -> Counter[str]:
    counts: Counter[str] = Counter()
    for line in lines:
        counts.update(get_pretokenizer(pretokenizer).split(line))
    return counts


# -- the compiled pre-tokenizers cut as the regexes do ---------------------------------------------


@pytest.mark.parametrize("pretokenizer", list(PRETOKENIZERS))
def test_counts_equal_the_regex_on_embedded_text(embedded_text: dict[str, list[str]], pretokenizer: str) -> None:
    for language in LANGUAGES:
        lines = embedded_text[language][:3000]
        assert count_pretokens(lines, pretokenizer) == regex_counts(lines, pretokenizer), language


@pytest.mark.parametrize("pretokenizer", list(PRETOKENIZERS))
def test_counts_equal_the_regex_on_flores(flores: dict[str, list[str]], pretokenizer: str) -> None:
    for language in LANGUAGES:
        lines = flores[language]
        assert count_pretokens(lines, pretokenizer, workers=1) == regex_counts(lines, pretokenizer), language


# characters where the patterns differ: plain and other spaces (\xa0 and \u2028 are \s, \x1c is not),
# line ends, letters of four scripts, a combining mark, digits of three kinds, punctuation, the
# contraction letters after an apostrophe, an emoji outside the BMP
TRICKY = " \t\n\r\x0b\x1c\xa0\u2028\u3000aZsdmtlvreşЖж한\u0301\u1100\u11a8109²Ⅻ٣'.,!-€😀"


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet=TRICKY, max_size=30), min_size=1, max_size=8))
def test_compiled_matchers_equal_the_regex_on_random_text(texts: list[str]) -> None:
    for pretokenizer in COMPILED:
        assert count_pretokens(texts, pretokenizer, workers=1, require_text=False) == regex_counts(texts, pretokenizer)


def test_counts_each_distinct_pretoken() -> None:
    counts = count_pretokens(["the cat, the dog", "the"], "unicode")
    assert counts == Counter({" the": 1, "the": 2, " cat": 1, ",": 1, " dog": 1})
    assert counts.total == 6 and len(counts) == 5


@pytest.mark.parametrize("pretokenizer", ["gpt2", "cl100k"])  # compiled, and counted with regex in threads
def test_threads_and_chunks_do_not_change_the_counts(
    embedded_text: dict[str, list[str]], pretokenizer: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = [line for language in LANGUAGES for line in embedded_text[language][:1500]]
    serial = count_pretokens(lines, pretokenizer, workers=1)
    monkeypatch.setattr(counts_module, "CHUNK_CHARS", 5_000)  # many chunks over both threads
    assert count_pretokens(lines, pretokenizer, workers=2) == serial
    assert count_pretokens(lines, pretokenizer, workers=1) == serial


def chunks_counted_by_thread(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """From now on, how many chunks each thread counts (by thread name)."""
    counted_by: Counter[str] = Counter()
    count = counts_module._Counter.count

    def counting(self, chunk) -> None:
        counted_by[threading.current_thread().name] += 1
        count(self, chunk)

    monkeypatch.setattr(counts_module._Counter, "count", counting)
    return counted_by


def test_counting_threads_sum_their_tables_exactly_on_flores(
    flores: dict[str, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every counting thread counts its share of the chunks into its own table; the tables summed
    equal the serial count and the regex, and the order of the pre-tokens is the same run after run."""
    lines = [line for language in LANGUAGES for line in flores[language]]
    serial = count_pretokens(lines, "gpt2", workers=1)
    assert serial == regex_counts(lines, "gpt2")
    # about 50 chunks, from the full data root's 2,009 lines a language or the sample's 100
    monkeypatch.setattr(counts_module, "CHUNK_CHARS", sum(map(len, lines)) // 50)
    counted_by = chunks_counted_by_thread(monkeypatch)
    for workers in (2, 3):
        counted_by.clear()
        threaded = count_pretokens(lines, "gpt2", workers=workers)
        assert threaded == serial and threaded.total == serial.total
        assert len(counted_by) == workers and min(counted_by.values()) >= 10, counted_by  # several chunks each
        again = count_pretokens(lines, "gpt2", workers=workers)
        assert list(again) == list(threaded) and again.counts.tolist() == threaded.counts.tolist()


def test_a_small_input_is_counted_in_the_calling_thread(
    embedded_text: dict[str, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Up to SERIAL_CHUNKS chunks the calling thread counts whatever ``workers`` says (so the order of
    the pre-tokens is that of ``workers=1``); one chunk more and the counting threads do."""
    lines = embedded_text["tur_Latn"][:400]
    monkeypatch.setattr(counts_module, "CHUNK_CHARS", sum(map(len, lines)) // counts_module.SERIAL_CHUNKS + 1)
    assert len(list(counts_module._chunks(iter(lines), counts_module.CHUNK_CHARS))) == counts_module.SERIAL_CHUNKS
    counted_by = chunks_counted_by_thread(monkeypatch)
    serial = count_pretokens(lines, "gpt2", workers=1)
    counted_by.clear()
    small = count_pretokens(lines, "gpt2", workers=2)
    assert dict(counted_by) == {threading.current_thread().name: counts_module.SERIAL_CHUNKS}
    assert list(small) == list(serial) and small.counts.tolist() == serial.counts.tolist()
    monkeypatch.setattr(counts_module, "CHUNK_CHARS", sum(map(len, lines)) // (counts_module.SERIAL_CHUNKS + 1))
    counted_by.clear()
    larger = count_pretokens(lines, "gpt2", workers=2)
    assert sorted(counted_by) == ["tokbench-count-0", "tokbench-count-1"], counted_by
    assert larger == serial and larger.total == serial.total


def test_an_error_in_a_counting_thread_is_raised_and_every_thread_ends(
    embedded_text: dict[str, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(counts_module, "CHUNK_CHARS", 1_000)
    calls = Counter()
    count = counts_module._Counter.count

    def failing(self, chunk) -> None:
        calls["chunks"] += 1
        if calls["chunks"] == 5:
            raise MemoryError("table too large")
        count(self, chunk)

    monkeypatch.setattr(counts_module._Counter, "count", failing)
    with pytest.raises(MemoryError, match="table too large"):
        count_pretokens(embedded_text["eng_Latn"][:500], "gpt2", workers=2)
    assert not [thread for thread in threading.enumerate() if thread.name.startswith("tokbench-count")]


def test_lone_surrogate_names_the_text() -> None:
    with raises_code(TokenizerError, "lone_surrogate", value="\ud800") as caught:
        count_pretokens(["fine", "also fine", "a\ud800b"], "gpt2")
    assert "#2" in str(caught.value) and "index 1" in str(caught.value)  # which text, where in it


@pytest.mark.parametrize(
    ("texts", "code"),
    [([], "empty_training_input"), (["  ", "\t"], "empty_training_input"), ("x", "bad_training_input")],
)
def test_bad_input_is_refused(texts: object, code: str) -> None:
    with raises_code(TokenizerError, code):
        count_pretokens(texts, "gpt2")  # type: ignore[arg-type]


def test_counts_from_a_mapping_and_merged() -> None:
    first = PretokenCounts.from_mapping({"a": 2, " b": 1}, "unicode")
    second = PretokenCounts.from_mapping({" b": 4, "c": 1}, "unicode")
    assert first.merged(second) == {"a": 2, " b": 5, "c": 1}
    with raises_code(TokenizerError, "pretokenizer_mismatch", value="gpt2"):
        first.merged(PretokenCounts.from_mapping({"a": 1}, "gpt2"))
    for bad, value in (({"": 1}, ""), ({"a": 0}, 0), ({"a": 1.5}, 1.5)):
        with raises_code(TokenizerError, "bad_counts", value=value):
            PretokenCounts.from_mapping(bad, "unicode")


# -- the Parquet format ----------------------------------------------------------------------------


def test_saved_counts_round_trip_byte_identically(embedded_text: dict[str, list[str]], tmp_path: Path) -> None:
    lines = embedded_text["tur_Latn"][:2000]
    counts = count_pretokens(lines, "gpt2", workers=1)
    counts.settings = {"normalization": "none", "inputs": json.dumps(["x.txt"])}
    counts.save(tmp_path / "a.parquet")
    threaded = count_pretokens(lines, "gpt2", workers=2)
    threaded.settings = dict(counts.settings)
    threaded.save(tmp_path / "b.parquet")
    assert (tmp_path / "a.parquet").read_bytes() == (tmp_path / "b.parquet").read_bytes()
    loaded = read_counts(tmp_path / "a.parquet")
    assert loaded == counts and loaded.pretokenizer == "gpt2"
    assert loaded.settings == counts.settings
    table = pq.read_table(tmp_path / "a.parquet")
    assert table.column_names == ["pretoken", "count"]
    assert table.column("pretoken").to_pylist() == sorted(counts)  # rows in code point order


def test_counts_written_by_another_engine_are_read(tmp_path: Path) -> None:
    """Any writer will do: large strings, int32 counts, extra columns, repeated pre-tokens (summed)."""
    schema = pa.schema(
        [("pretoken", pa.large_string()), ("count", pa.int32()), ("shard", pa.int32())],
        metadata={"tokbench.pretokenizer": "unicode"},
    )
    table = pa.table({"pretoken": ["a", " b", "a"], "count": [1, 2, 3], "shard": [0, 0, 1]}, schema=schema)
    pq.write_table(table, tmp_path / "spark.parquet")
    counts = read_counts(tmp_path / "spark.parquet")
    assert counts == {"a": 4, " b": 2} and counts.pretokenizer == "unicode"


def _text_file(path: Path) -> Path:
    path.write_text("not parquet", encoding="utf-8")
    return path


def _write(path: Path, pretokens: list, counts: list, metadata: dict[str, str] | None, types=None) -> Path:
    schema = pa.schema(
        [("pretoken", (types or {}).get("pretoken", pa.string())), ("count", (types or {}).get("count", pa.int64()))],
        metadata=metadata,
    )
    pq.write_table(pa.table({"pretoken": pretokens, "count": counts}, schema=schema), path)
    return path


@pytest.mark.parametrize(
    ("build", "code", "field", "value"),
    [
        (lambda p: p / "missing.parquet", "missing_file", UNSET, UNSET),
        (lambda p: _text_file(p / "x.parquet"), "bad_counts", UNSET, UNSET),
        (lambda p: _write(p / "x.parquet", ["a"], [1], None), "bad_counts", "tokbench.pretokenizer", UNSET),
        (
            lambda p: _write(p / "x.parquet", ["a"], [1], {"tokbench.pretokenizer": "bert"}),
            "unknown_pretokenizer",
            UNSET,
            "bert",
        ),
        (
            lambda p: _write(
                p / "x.parquet", ["a"], [1], {"tokbench.pretokenizer": "gpt2", "tokbench.pretokenizer_pattern": "x"}
            ),
            "pretokenizer_mismatch",
            "tokbench.pretokenizer_pattern",
            "gpt2",
        ),
        (
            lambda p: _write(
                p / "x.parquet", ["a"], [1], {"tokbench.pretokenizer": "gpt2", "tokbench.format_version": "9"}
            ),
            "unsupported_version",
            "tokbench.format_version",
            "9",
        ),
        (lambda p: _write(p / "x.parquet", ["a"], [0], {"tokbench.pretokenizer": "gpt2"}), "bad_counts", "count", 0),
        (
            lambda p: _write(p / "x.parquet", ["a", ""], [1, 1], {"tokbench.pretokenizer": "gpt2"}),
            "bad_counts",
            "pretoken",
            1,
        ),
        (
            lambda p: _write(p / "x.parquet", ["a", None], [1, 1], {"tokbench.pretokenizer": "gpt2"}),
            "bad_counts",
            "pretoken",
            UNSET,
        ),
        (
            lambda p: _write(p / "x.parquet", ["a"], [1.0], {"tokbench.pretokenizer": "gpt2"}, {"count": pa.float64()}),
            "bad_counts",
            "count",
            "double",
        ),
    ],
)
def test_bad_counts_files_are_refused(tmp_path: Path, build, code: str, field: object, value: object) -> None:
    path = build(tmp_path)
    with raises_code(TokenizerError, code, field=field, value=value) as caught:
        read_counts(path)
    assert str(path) in str(caught.value)  # the message names the file


# -- training from counts equals training from the text ------------------------------------------

TRAINING_CASES = [
    ("word", {}),
    ("word", {"min_frequency": 2, "pretokenizer": "whitespace"}),
    ("char", {"min_frequency": 3}),
    ("char-bpe", {}),
    ("char-bpe", {"end_of_word": "attached", "limit_alphabet": 60}),
    ("char-bpe", {"end_of_word": "none", "pretokenizer": "gpt2"}),
    ("byte-bpe", {}),
    ("byte-bpe", {"pretokenizer": "o200k", "min_frequency": 3}),
]


@pytest.mark.parametrize(("kind", "options"), TRAINING_CASES)
def test_training_from_counts_equals_training_from_text(
    embedded_text: dict[str, list[str]], tmp_path: Path, kind: str, options: dict
) -> None:
    pretokenizer = options.get("pretokenizer", {"byte-bpe": "gpt2"}.get(kind, "unicode"))
    for language in LANGUAGES:
        lines = embedded_text[language][:1500]
        direct = bpe.train(kind, lines, 1200, **options)
        path = tmp_path / f"{language}.parquet"
        count_pretokens(lines, pretokenizer).save(path)
        rest = {key: value for key, value in options.items() if key != "pretokenizer"}
        from_counts = bpe.train_from_counts(kind, read_counts(path), 1200, **rest)
        assert from_counts.to_dict() == direct.to_dict(), language


def test_training_from_counts_on_flores(flores: dict[str, list[str]]) -> None:
    for language in LANGUAGES:
        lines = flores[language][:1000]
        for kind in ("char-bpe", "byte-bpe"):
            counts = count_pretokens(lines, {"char-bpe": "unicode", "byte-bpe": "gpt2"}[kind])
            assert bpe.train_from_counts(kind, counts, 3000).to_dict() == bpe.train(kind, lines, 3000).to_dict()


def test_counts_must_match_the_pretokenizer_and_sentencepiece_refuses() -> None:
    counts = count_pretokens(["merhaba dünya"] * 3, "unicode")
    with raises_code(TokenizerError, "pretokenizer_mismatch", value="gpt2") as caught:
        bpe.train("byte-bpe", counts, 300)
    assert "'unicode'" in str(caught.value)  # and names the counts' own pre-tokenizer
    with raises_code(TokenizerError, "no_counts_training", value="spm-bpe"):
        bpe.train_from_counts("spm-bpe", counts, 300)
    with raises_code(TokenizerError, "bad_training_input"):
        bpe.train("spm-unigram", counts, 300)
    blank = PretokenCounts.from_mapping({" ": 3}, "unicode")
    for kind in ("word", "char", "char-bpe"):
        with raises_code(TokenizerError, "empty_training_input"):
            bpe.train_from_counts(kind, blank, 300)


def test_merge_kernel_words_of_counts(embedded_text: dict[str, list[str]]) -> None:
    """The compiled word builders equal the per-pre-token Python mapping of the families."""
    lines = embedded_text["kor_Hang"][:500]
    tokenizer = bpe.train("char-bpe", lines, 400, end_of_word="attached", limit_alphabet=80)
    untrained = type(tokenizer)(
        tokenizer.vocab[4 : tokenizer.first_merge_id], end_of_word="attached", limit_alphabet=80
    )
    counts = count_pretokens(lines, "unicode")
    symbols, offsets, word_counts = untrained._training_words(counts)
    words = Counter()
    for start, end, count in zip(offsets[:-1].tolist(), offsets[1:].tolist(), word_counts.tolist(), strict=True):
        words[tuple(symbols[start:end].tolist())] += count
    expected: Counter[tuple[int, ...]] = Counter()
    for pretoken, count in counts.items():
        base, _ = untrained._base_symbols(pretoken)
        parts, part = [], []
        for symbol in base:
            if symbol == untrained.unk_id:
                parts.append(part)
                part = []
            else:
                part.append(symbol)
        for piece in [*parts, part]:
            if len(piece) > 1:
                expected[tuple(piece)] += count
    assert words == expected
    assert np.all(word_counts > 0)
