"""bpe: tokenizer families written from scratch, plus reference and production rows.

The library knows nothing about corpora or experiments.  Entry points:

* ``train(kind, texts, vocab_size, **options)`` - train a family by name;
* ``train_from_counts(kind, counts, vocab_size, **options)`` - train on pre-token counts (``bpe.training.counts``);
* ``train_sweep(kind, texts, vocab_sizes, **options)`` / ``derive(tokenizer, vocab_size)`` - one
  training for several vocabulary sizes (``bpe.training.sweep``);
* ``load(source, format=None, pattern=None)`` - a tokenizer by name (``PRODUCTION``) or from a
  file of any accepted format (``bpe.pretrained.formats.FORMATS``: tokbench JSON, Hugging Face tokenizer.json,
  sentencepiece .model, tiktoken rank file, Mistral tekken JSON);
* ``FAMILIES`` / ``PRODUCTION`` - the names ``train`` and ``load`` accept (``bpe.families``,
  ``bpe.pretrained.production``); ``family_class(kind)`` gives a family's class, which declares its facts
  (``bpe.base.FamilyFacts``);
* ``Tokenizer`` - what every tokenizer does (encode with byte spans, decode);
  ``TrainableTokenizer`` - a family trained here, which also trains and saves;
* ``bpe.render`` - the text each token covers, for people to read.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from bpe.base import Encoding, Tokenizer, TokenizerError, TrainableTokenizer
from bpe.families import FAMILIES, family_class, tokenizer_from_document
from bpe.pretrained.production import PRODUCTION
from bpe.pretrained.published import load
from bpe.training.sweep import derive, train_sweep

if TYPE_CHECKING:
    from bpe.training.counts import PretokenCounts

__version__ = "0.1.0"

__all__ = [
    "FAMILIES",
    "PRODUCTION",
    "Encoding",
    "Tokenizer",
    "TokenizerError",
    "TrainableTokenizer",
    "derive",
    "family_class",
    "load",
    "tokenizer_from_document",
    "train",
    "train_from_counts",
    "train_sweep",
]


def train(kind: str, texts: Iterable[str], vocab_size: int, **options: Any) -> TrainableTokenizer:
    """Train a tokenizer of family ``kind`` on ``texts``."""
    return family_class(kind).train(texts, vocab_size, **options)


def train_from_counts(kind: str, counts: PretokenCounts, vocab_size: int, **options: Any) -> TrainableTokenizer:
    """Train family ``kind`` on pre-token counts (``bpe.training.counts``): the same tokenizer as training on
    the text they were counted from.  The pre-tokenizer is the counts' own.  Every family but
    spm-bpe and spm-unigram (``bpe.models.trained.TrainedTokenizer``): sentencepiece trains on sentences."""
    from bpe.models.trained import TrainedTokenizer

    family = family_class(kind)
    if not issubclass(family, TrainedTokenizer):
        raise TokenizerError(f"{kind} cannot train from pre-token counts (sentencepiece reads whole sentences)",
                             code="no_counts_training", value=kind)  # fmt: skip
    # char takes no pre-tokenizer: any lossless one gives the text's characters
    if "pretokenizer" in family.options_model.model_fields and options.get("pretokenizer") is None:
        options["pretokenizer"] = counts.pretokenizer
    return family.train(counts, vocab_size, **options)
