"""A tiktoken rank file: ``<base64 token bytes> <rank>`` per line, ranks 0..n-1 (``gpt2.tiktoken``,
``cl100k_base.tiktoken``).  It holds no pre-tokenizer, so it takes a ``pattern``
(``bpe.pretrained.tiktoken_bpe``), and optionally a ``normalizer`` applied first (``nfc`` for Qwen)."""

from __future__ import annotations

from typing import Any

from bpe.base import Tokenizer
from bpe.pretrained.formats.file import TokenizerFile

NAME = "tiktoken"
DESCRIPTION = "a tiktoken rank file"
RECOGNISED_BY = "first line is base64, space, integer"
JSON = False
OPTIONS: tuple[str, ...] = ("pattern", "normalizer")


def sniff(file: TokenizerFile) -> bool:
    from bpe.pretrained.tiktoken_bpe import looks_like_rank_file  # imports tiktoken

    return looks_like_rank_file(file.data)


def load(
    file: TokenizerFile, *, pattern: str | None = None, normalizer: str | None = None, **options: Any
) -> Tokenizer:
    from bpe.pretrained.tiktoken_bpe import load_rank_file

    return load_rank_file(file.data, file.name, pattern, normalizer)
