"""A sentencepiece ``.model`` file: a serialized ``ModelProto`` (Llama 2, the mistral-common models,
``spm_train`` output), encoded by sentencepiece itself (``bpe.models.spm_encoding``)."""

from __future__ import annotations

from typing import Any

from bpe.base import Tokenizer
from bpe.pretrained.formats.file import TokenizerFile

NAME = "sentencepiece"
DESCRIPTION = "a sentencepiece .model file"
RECOGNISED_BY = "parses as a model with pieces"
JSON = False
OPTIONS: tuple[str, ...] = ()


def sniff(file: TokenizerFile) -> bool:
    from bpe.models.spm_encoding import looks_like_model  # imports sentencepiece

    return looks_like_model(file.data)


def load(file: TokenizerFile, **options: Any) -> Tokenizer:
    from bpe.models.spm_encoding import SentencePieceModelTokenizer

    return SentencePieceModelTokenizer(file.data, file.name)
