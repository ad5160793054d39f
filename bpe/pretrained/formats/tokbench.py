"""tokbench's own saved tokenizer (``TrainableTokenizer.save``, ``tokbench train``): a JSON object
with ``"format": "tokbench-tokenizer"`` and the fields of ``docs/formats.md``."""

from __future__ import annotations

from typing import Any

from bpe.base import Tokenizer
from bpe.pretrained.formats.file import TokenizerFile

NAME = "tokbench"
DESCRIPTION = "a tokbench tokenizer JSON"
RECOGNISED_BY = 'JSON with `"format"`'
JSON = True
OPTIONS: tuple[str, ...] = ()


def sniff(file: TokenizerFile) -> bool:
    # any "format" key claims the file, so that a foreign or newer envelope gets the envelope's error
    return "format" in file.json_object


def load(file: TokenizerFile, **options: Any) -> Tokenizer:
    from bpe.families import tokenizer_from_document  # imports no family until the file names one

    return tokenizer_from_document(file.document, file.path)
