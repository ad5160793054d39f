"""The ``o200k`` and ``qwen`` pre-tokenizer patterns on the data root's published rank files: the ids
tokbench's rank-file tokenizer gives equal tiktoken's own ``Encoding`` with tiktoken's o200k pattern
(``tiktoken_ext.openai_public``) on FLORES lines; Qwen's pattern splits digits one at a time."""

from __future__ import annotations

from pathlib import Path

import pytest
import tiktoken
import tiktoken.load

import bpe
from bpe.pipeline.pretokenizers import get_pretokenizer


def test_qwen_pattern_splits_digits_one_at_a_time() -> None:
    assert get_pretokenizer("qwen").split("I'LL pay 1234") == ["I", "'LL", " pay", " ", "1", "2", "3", "4"]
    assert get_pretokenizer("cl100k").split("I'LL pay 1234") == ["I", "'LL", " pay", " ", "123", "4"]


def test_o200k_ids_equal_tiktoken_on_flores(data_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    openai_public = pytest.importorskip("tiktoken_ext.openai_public")
    monkeypatch.setattr(openai_public, "load_tiktoken_bpe", lambda *args, **kwargs: {})  # only pat_str wanted
    pattern = openai_public.o200k_base()["pat_str"]
    monkeypatch.undo()
    file = data_root / "tokenizers" / "o200k_base.tiktoken"
    ranks = tiktoken.load.load_tiktoken_bpe(str(file))
    reference = tiktoken.Encoding("o200k", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
    ours = bpe.load(file, pattern="o200k")
    for language in ("eng_Latn", "tur_Latn", "rus_Cyrl", "kor_Hang"):
        lines = (data_root / "flores" / f"{language}.txt").read_text(encoding="utf-8").splitlines()
        for line in lines[::10]:
            assert ours.encode(line) == reference.encode_ordinary(line), (language, line)


def test_rank_file_with_a_special_gap_loads(data_root: Path) -> None:
    """p50k_base leaves rank 50256 to <|endoftext|>; its ids equal tiktoken's with the same ranks."""
    file = data_root / "tokenizers" / "p50k_base.tiktoken"
    ranks = tiktoken.load.load_tiktoken_bpe(str(file))
    reference = tiktoken.Encoding("p50k", pat_str=get_pretokenizer("gpt2").pattern, mergeable_ranks=ranks,
                                  special_tokens={})  # fmt: skip
    ours = bpe.load(file, pattern="gpt2")
    assert ours.vocab_size == 50281
    text = (data_root / "flores" / "eng_Latn.txt").read_text(encoding="utf-8")[:20000]
    assert ours.encode(text) == reference.encode_ordinary(text)
