"""bpe: tokenizer families written from scratch, plus reference and production rows.

The library knows nothing about corpora or experiments.  Entry points:

* ``train(kind, texts, vocab_size, **options)`` - train a family by name;
* ``load(path_or_name)`` - a saved JSON tokenizer, or a production tokenizer by name;
* ``FAMILIES`` / ``PRODUCTION`` - the names ``train`` and ``load`` accept.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from bpe.base import Encoding, Tokenizer, TokenizerError, read_tokenizer_document

__version__ = "0.1.0"

# family name -> "module:Class"; imported lazily so that e.g. `tokbench encode`
# with a char-bpe file never imports sentencepiece or tiktoken.
FAMILIES: dict[str, str] = {
    "word": "bpe.word:WordTokenizer",
    "char": "bpe.char:CharTokenizer",
    "char-bpe": "bpe.char_bpe:CharBPETokenizer",
    "byte-bpe": "bpe.byte_bpe:ByteBPETokenizer",
    "spm-bpe": "bpe.spm:SentencePieceBPETokenizer",
    "spm-unigram": "bpe.spm:SentencePieceUnigramTokenizer",
    "morfessor": "bpe.morfessor:MorfessorTokenizer",
    "bpe-knockout": "bpe.knockout:KnockoutTokenizer",
}

# encode-only production tokenizers, by name
PRODUCTION: dict[str, str] = {
    "cl100k": "bpe.production:Cl100kTokenizer",
    "mistral-v1": "bpe.production:MistralV1Tokenizer",
}

__all__ = ["FAMILIES", "PRODUCTION", "Encoding", "Tokenizer", "TokenizerError", "family_class", "load", "train"]


def _resolve(target: str) -> type[Tokenizer]:
    module_name, class_name = target.split(":")
    return getattr(importlib.import_module(module_name), class_name)


def family_class(kind: str) -> type[Tokenizer]:
    """The class of a trainable family, or a clear error naming the choices."""
    if kind not in FAMILIES:
        raise TokenizerError(f"unknown tokenizer kind {kind!r}; choose one of: {', '.join(FAMILIES)}")
    return _resolve(FAMILIES[kind])


def train(kind: str, texts: Iterable[str], vocab_size: int, **options: Any) -> Tokenizer:
    """Train a tokenizer of family ``kind`` on ``texts``."""
    return family_class(kind).train(texts, vocab_size, **options)


def load(path_or_name: str | Path) -> Tokenizer:
    """Load a saved tokenizer JSON, or a production tokenizer by name (``cl100k``, ``mistral-v1``)."""
    if isinstance(path_or_name, str) and path_or_name in PRODUCTION:
        return _resolve(PRODUCTION[path_or_name])()
    document = read_tokenizer_document(path_or_name)
    family = document["family"]
    if family not in FAMILIES:
        raise TokenizerError(f"{path_or_name}: unknown family {family!r} (known: {', '.join(FAMILIES)})")
    return _resolve(FAMILIES[family]).from_dict(document)
