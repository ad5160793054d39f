"""A Mistral tekken JSON, as ``mistral-common`` ships them: tiktoken-style ranks with their pattern
and the number of control ids before them (``bpe.pretrained.tiktoken_bpe``)."""

from __future__ import annotations

from typing import Any

from bpe.base import Tokenizer
from bpe.pretrained.formats.file import TokenizerFile

NAME = "tekken"
DESCRIPTION = "a Mistral tekken JSON"
RECOGNISED_BY = 'JSON with `"config"` holding `"pattern"`, and `"vocab"`'
JSON = True
OPTIONS: tuple[str, ...] = ()


def sniff(file: TokenizerFile) -> bool:
    document = file.json_object
    return isinstance(document.get("config"), dict) and "pattern" in document["config"] and "vocab" in document


def load(file: TokenizerFile, **options: Any) -> Tokenizer:
    from bpe.pretrained.tiktoken_bpe import load_tekken

    return load_tekken(file.document, file.name)
