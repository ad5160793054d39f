"""bpe: tokenizer families written from scratch, plus reference and production rows.

The library knows nothing about corpora or experiments.  Entry points:

* ``train(kind, texts, vocab_size, **options)`` - train a family by name;
* ``train_from_counts(kind, counts, vocab_size, **options)`` - train on pre-token counts (``bpe.counts``);
* ``train_sweep(kind, texts, vocab_sizes, **options)`` / ``derive(tokenizer, vocab_size)`` - one
  training for several vocabulary sizes (``bpe.sweep``);
* ``load(path_or_name)`` - a saved JSON tokenizer, or a production tokenizer by name;
* ``FAMILIES`` / ``PRODUCTION`` - the names ``train`` and ``load`` accept.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bpe.base import Encoding, Tokenizer, TokenizerError, read_tokenizer_document
from bpe.sweep import derive, train_sweep

if TYPE_CHECKING:
    from bpe.counts import PretokenCounts

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
}

# encode-only production tokenizers, by name
PRODUCTION: dict[str, str] = {
    "cl100k": "bpe.production:Cl100kTokenizer",
    "mistral-v1": "bpe.production:MistralV1Tokenizer",
}

__all__ = [
    "FAMILIES",
    "PRODUCTION",
    "Encoding",
    "Tokenizer",
    "TokenizerError",
    "derive",
    "family_class",
    "load",
    "train",
    "train_from_counts",
    "train_sweep",
]


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


def train_from_counts(kind: str, counts: PretokenCounts, vocab_size: int, **options: Any) -> Tokenizer:
    """Train family ``kind`` on pre-token counts (``bpe.counts``): the same tokenizer as training on
    the text they were counted from.  The pre-tokenizer is the counts' own.  word, char, char-bpe
    and byte-bpe only: sentencepiece trains on sentences."""
    from bpe.trained import TrainedTokenizer

    family = family_class(kind)
    if not issubclass(family, TrainedTokenizer):
        raise TokenizerError(f"{kind} cannot train from pre-token counts (sentencepiece reads whole sentences)")
    if kind != "char":  # char takes no pre-tokenizer: any lossless one gives the text's characters
        options.setdefault("pretokenizer", counts.pretokenizer)
    return family.train(counts, vocab_size, **options)


def load(path_or_name: str | Path) -> Tokenizer:
    """Load a saved tokenizer JSON, or a production tokenizer by name (``cl100k``, ``mistral-v1``)."""
    if isinstance(path_or_name, str) and path_or_name in PRODUCTION:
        return _resolve(PRODUCTION[path_or_name])()
    document = read_tokenizer_document(path_or_name)
    family = document["family"]
    if family not in FAMILIES:
        raise TokenizerError(f"{path_or_name}: unknown family {family!r} (known: {', '.join(FAMILIES)})")
    return _resolve(FAMILIES[family]).from_dict(document)
