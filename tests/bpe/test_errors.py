"""The user-facing errors carry a code, the offending value and the field beside an unchanged message."""

from __future__ import annotations

import pickle

import pytest

from benchmarks.errors import BenchmarkError
from bpe.base import TokenizerError
from bpe.errors import CodedError
from corpora.errors import CorpusError
from tests.errors import raises_code


@pytest.mark.parametrize(
    ("error_class", "default"),
    [(TokenizerError, "tokenizer_error"), (CorpusError, "corpus_error"), (BenchmarkError, "benchmark_error")],
)
def test_each_base_is_a_coded_value_error_with_a_default_code(error_class: type[CodedError], default: str) -> None:
    assert issubclass(error_class, CodedError) and issubclass(error_class, ValueError)
    plain = error_class("what is wrong")
    assert (plain.code, plain.value, plain.field) == (default, None, None)
    coded = error_class("vocab_size 10 is below 262", code="vocab_below_floor", value=10, field="vocab_size")
    assert str(coded) == "vocab_size 10 is below 262"  # the message is what the CLI prints, unchanged
    assert (coded.code, coded.value, coded.field) == ("vocab_below_floor", 10, "vocab_size")


def test_an_error_keeps_its_code_across_processes() -> None:
    # the parallel runner hands errors back from worker processes by pickling
    error = pickle.loads(pickle.dumps(BenchmarkError("bad", code="unknown_key", value="colour", field="x")))
    assert (str(error), error.code, error.value, error.field) == ("bad", "unknown_key", "colour", "x")


def test_raises_code_checks_class_code_value_and_field() -> None:
    with raises_code(TokenizerError, "vocab_below_floor", value=10, field="vocab_size"):
        raise TokenizerError("vocab_size 10 is too small", code="vocab_below_floor", value=10, field="vocab_size")
    with pytest.raises(AssertionError, match="code"), raises_code(TokenizerError, "vocab_below_floor"):
        raise TokenizerError("vocab_size 10 is too small", code="vocab_above_max", value=10)
    with pytest.raises(AssertionError, match="value"), raises_code(TokenizerError, "vocab_below_floor", value=11):
        raise TokenizerError("vocab_size 10 is too small", code="vocab_below_floor", value=10)
    with pytest.raises(AssertionError, match="name"), raises_code(TokenizerError, "vocab_below_floor", value=10):
        raise TokenizerError("vocab_size is too small", code="vocab_below_floor", value=10)  # the value unnamed
    with pytest.raises(AssertionError, match="field"), raises_code(CorpusError, "unknown_key", field="a"):
        raise CorpusError("unknown key", code="unknown_key", field="b")
    with pytest.raises(pytest.fail.Exception), raises_code(TokenizerError, "vocab_below_floor"):
        pass
