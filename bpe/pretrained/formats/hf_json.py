"""A Hugging Face ``tokenizers`` ``tokenizer.json``, or a directory holding one (``bpe.pretrained.hf``); the
files ``tokbench export`` writes are of this format."""

from __future__ import annotations

from typing import Any

from bpe.base import Tokenizer
from bpe.pretrained.formats.file import TokenizerFile

NAME = "hf"
DESCRIPTION = "a Hugging Face tokenizer.json"
RECOGNISED_BY = 'JSON with `"model"` and `"pre_tokenizer"`'
JSON = True
OPTIONS: tuple[str, ...] = ()


def sniff(file: TokenizerFile) -> bool:
    document = file.json_object
    return isinstance(document.get("model"), dict) and "pre_tokenizer" in document


def load(file: TokenizerFile, **options: Any) -> Tokenizer:
    from bpe.pretrained.hf import load_hf  # imports tokenizers

    return load_hf(file.data, file.name)
