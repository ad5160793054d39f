"""The family registry: one line per trainable family, name -> ``"module:Class"``.

A family is one module: its class declares its options model and its facts (``bpe.base.FamilyFacts``),
read through ``family_class(kind)``.  Nothing else lists the families.  Classes are imported lazily, so
that e.g. ``tokbench encode`` with a char-bpe file never imports sentencepiece or tiktoken.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

from bpe.base import TokenizerError, TrainableTokenizer, check_tokenizer_document

FAMILIES: dict[str, str] = {
    "word": "bpe.models.word:WordTokenizer",
    "char": "bpe.models.char:CharTokenizer",
    "char-bpe": "bpe.models.char_bpe:CharBPETokenizer",
    "byte-bpe": "bpe.models.byte_bpe:ByteBPETokenizer",
    "parity-bpe": "bpe.models.parity_bpe:ParityAwareBPETokenizer",
    "spm-bpe": "bpe.models.spm:SentencePieceBPETokenizer",
    "spm-unigram": "bpe.models.spm:SentencePieceUnigramTokenizer",
    "morfessor": "bpe.models.morfessor:MorfessorTokenizer",
    "bpe-knockout": "bpe.models.knockout:KnockoutTokenizer",
    "wordpiece": "bpe.models.wordpiece:WordPieceTokenizer",
    "unigram": "bpe.models.unigram:UnigramTokenizer",
    "superbpe": "bpe.models.superbpe:SuperBPETokenizer",
}


def _resolve(target: str) -> type[TrainableTokenizer]:
    module_name, class_name = target.split(":")
    return getattr(importlib.import_module(module_name), class_name)


def family_class(kind: str) -> type[TrainableTokenizer]:
    """The class of a trainable family, or a clear error naming the choices."""
    if kind not in FAMILIES:
        raise TokenizerError(f"unknown tokenizer kind {kind!r}; choose one of: {', '.join(FAMILIES)}",
                             code="unknown_family", value=kind)  # fmt: skip
    return _resolve(FAMILIES[kind])


def tokenizer_from_document(document: Any, path: str | os.PathLike[str]) -> TrainableTokenizer:
    """A tokenizer of a trainable family from a saved JSON document (checked envelope first)."""
    document = check_tokenizer_document(document, path)
    family = document["family"]
    if family not in FAMILIES:
        raise TokenizerError(f"{path}: unknown family {family!r} (known: {', '.join(FAMILIES)})",
                             code="unknown_family", value=family, field="family")  # fmt: skip
    return _resolve(FAMILIES[family]).from_dict(document)
