"""A result row's ``options`` string is written by ``Unit.options_string`` and read back by one
parser (``benchmarks.files.parse_options``), which the report's inference-method names use."""

from __future__ import annotations

from benchmarks.files import parse_options, train_chars_of, without_train_chars
from benchmarks.report import inference_method
from benchmarks.units import Unit


def unit(options: tuple[tuple[str, object], ...], train_chars: int | None = None) -> Unit:
    return Unit("embedded-eng", "eng_Latn", "row", "char-bpe", "family", 400, options, train_chars)


def test_the_options_string_reads_back_as_written() -> None:
    written = unit((("dropout", 0.1), ("encode_mode", "merges"), ("end_of_word", "separate")), 20_000)
    assert written.options_string == "dropout=0.1,encode_mode=merges,end_of_word=separate,train_chars=20000"
    parsed = parse_options(written.options_string)
    assert parsed == {"dropout": "0.1", "encode_mode": "merges", "end_of_word": "separate", "train_chars": "20000"}
    assert train_chars_of(written.options_string) == 20_000
    assert without_train_chars(written.options_string) == unit(written.options).options_string
    assert parse_options(unit(()).options_string) == {} and train_chars_of("") is None


def test_inference_method_reads_the_parsed_options() -> None:
    assert inference_method("char-bpe", "") == "merges"
    assert inference_method("morfessor", "") == "viterbi"  # the family's own method when unset
    # an earlier name of a method reads as the current one (bpe.options.ENCODE_MODE_ALIASES)
    assert inference_method("char-bpe", "encode_mode=greedy,end_of_word=separate") == "longest-prefix"
    assert inference_method("char-bpe", "dropout=0.1,encode_mode=merges") == "merges + dropout 0.1"
    assert inference_method("spm-unigram", "alpha=0.1") == "likelihood + sampling α=0.1"
    assert inference_method("spm-unigram", "alpha=None") == "likelihood"
