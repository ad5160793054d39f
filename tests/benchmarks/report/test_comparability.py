"""The generated sizes of docs/metrics.md's comparability table."""

from __future__ import annotations

import re

from benchmarks.check import BaselineRow
from benchmarks.errors import BenchmarkError
from benchmarks.report.comparability import MARK, generated_text, morphscore_upstream_gap, replace_span
from tests.conftest import REPO_ROOT
from tests.errors import raises_code


def rows(corpus: str, tokenizer: str, vocab_size: int | None, ours: float, upstream: float) -> list[BaselineRow]:
    common = {"corpus": corpus, "tokenizer": tokenizer, "vocab_size": vocab_size, "eval_set": "reference",
              "reference": "morphscore"}  # fmt: skip
    return [BaselineRow(**common, metric="morphscore", value=ours),
            BaselineRow(**common, metric="morphscore_upstream", value=upstream)]  # fmt: skip


def test_the_gap_names_both_ends_ties_and_the_widest_values() -> None:
    given = [
        *rows("b", "byte-bpe", 4000, 0.50, 0.45),  # -0.050: the widest end
        *rows("b", "byte-bpe", 8000, 0.50, 0.00),  # another size: not counted
        *rows("b", "cl100k", None, 0.20, 0.22),  # +0.020
        *rows("b", "gpt2", None, 0.30, 0.32),  # +0.020: tied
        *rows("b", "word", 4000, float("nan"), float("nan")),
        *rows("a", "char", 4000, 0.10, 0.10),
    ]
    text = morphscore_upstream_gap(given, 4000, {"a": "Aaa", "b": "Bbb"})
    assert text == ("Aaa 0.000 (char); Bbb −0.050 (byte-bpe; byte-bpe 0.500 → 0.450) to +0.020 (cl100k, gpt2), "
                    "no score: word")


def test_two_option_sets_of_one_tokenizer_are_refused() -> None:
    given = [*rows("a", "char-bpe", 4000, 0.1, 0.2), *rows("a", "char-bpe", 4000, 0.1, 0.3)]
    given[2] = given[2].model_copy(update={"options": {"end_of_word": "separate"}})
    with raises_code(BenchmarkError, "duplicate_rows", value="char-bpe"):
        morphscore_upstream_gap(given, 4000, {"a": "Aaa"})


def test_the_docs_hold_the_text_of_the_committed_paper_baseline() -> None:
    docs = (REPO_ROOT / "docs" / "metrics.md").read_text(encoding="utf-8")
    expected = generated_text(REPO_ROOT / "results" / "baseline" / "paper.json")
    assert re.search(rf"<!-- {MARK} -->(.*?)<!-- /{MARK} -->", docs).group(1) == expected
    assert replace_span(docs, expected) == docs
