"""bpe: tokenizer families written from scratch, plus reference and production rows.

The library knows nothing about corpora or experiments.  Entry points:

* ``train(kind, texts, vocab_size, **options)`` - train a family by name;
* ``train_from_counts(kind, counts, vocab_size, **options)`` - train on pre-token counts (``bpe.counts``);
* ``train_sweep(kind, texts, vocab_sizes, **options)`` / ``derive(tokenizer, vocab_size)`` - one
  training for several vocabulary sizes (``bpe.sweep``);
* ``load(source, format=None, pattern=None)`` - a tokenizer by name (``PRODUCTION``) or from a
  file of any accepted format (``bpe.pretrained``: tokbench JSON, Hugging Face tokenizer.json,
  sentencepiece .model, tiktoken rank file, Mistral tekken JSON);
* ``FAMILIES`` / ``PRODUCTION`` - the names ``train`` and ``load`` accept; ``family_class(kind)``
  gives a family's class, which declares its facts (``bpe.base.FAMILY_FACTS``);
* ``bpe.render`` - the text each token covers, for people to read.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bpe.base import Encoding, Tokenizer, TokenizerError, check_tokenizer_document
from bpe.pretrained import load_file
from bpe.production import PRODUCTION
from bpe.sweep import derive, train_sweep

if TYPE_CHECKING:
    from bpe.counts import PretokenCounts

__version__ = "0.1.0"

# The family registry, one line per family: name -> "module:Class".  A family's facts are declared
# on its class (``bpe.base.FAMILY_FACTS``).  Imported lazily so that e.g. `tokbench encode`
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
    # char takes no pre-tokenizer: any lossless one gives the text's characters
    if "pretokenizer" in family.options_model.model_fields and options.get("pretokenizer") is None:
        options["pretokenizer"] = counts.pretokenizer
    return family.train(counts, vocab_size, **options)


def load(
    source: str | Path, *, format: str | None = None, pattern: str | None = None, normalizer: str | None = None
) -> Tokenizer:
    """A tokenizer by name (``PRODUCTION``: ``cl100k``, ``mistral-v1``, ``bytes``, ...) or from a file.

    A file's format is detected from its content; ``format`` (``tokbench``, ``hf``,
    ``sentencepiece``, ``tiktoken``, ``tekken``) makes it an error for the file to be anything
    else.  ``pattern`` is the pre-tokenizer of a tiktoken rank file: ``gpt2``/``r50k``, ``cl100k``,
    ``o200k``, ``qwen`` or a regular expression, and ``normalizer`` its normalizer (``nfc``).  A registry
    name wins over a file of the same name.
    """
    if isinstance(source, str) and source in PRODUCTION:
        if format is not None or pattern is not None or normalizer is not None:
            raise TokenizerError(f"{source} is a tokenizer name: it takes no format or pattern")
        return PRODUCTION[source].load()
    path = Path(source)
    if not path.exists() and isinstance(source, str) and not any(sep in source for sep in "/\\"):
        raise TokenizerError(
            f"{source!r} is neither a file nor a known tokenizer name; known names: {', '.join(PRODUCTION)}"
        )
    return load_file(path, format=format, pattern=pattern, normalizer=normalizer)


def tokenizer_from_document(document: dict[str, Any], path: str | Path) -> Tokenizer:
    """A tokenizer of a trainable family from a saved JSON document (checked envelope first)."""
    document = check_tokenizer_document(document, path)
    family = document["family"]
    if family not in FAMILIES:
        raise TokenizerError(f"{path}: unknown family {family!r} (known: {', '.join(FAMILIES)})")
    return _resolve(FAMILIES[family]).from_dict(document)
