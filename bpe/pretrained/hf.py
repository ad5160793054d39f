"""A Hugging Face ``tokenizer.json`` behind the Tokenizer interface, through the ``tokenizers`` library.

Encoding is ``tokenizers``' own with ``add_special_tokens=False`` (no template tokens such as
``[CLS]``/``[SEP]`` or ``<s>``) and ``encode_special_tokens`` on, so special-token strings that
occur in the text are encoded as text.  Decoding is the file's own decoder.

Byte spans.  ``tokenizers`` reports character offsets, and gives every byte-level token inside one
character the whole character.  The text each token stands for is known from its piece
(``token_bytes``: GPT-2 byte aliases for byte-level models, ``<0xNN>`` byte-fallback pieces, ``▁``
as a space, ``##`` continuation prefixes and end-of-word suffixes removed); when those bytes
spell the text exactly, the spans are their running sums.  Otherwise (normalizers, a prepended
``▁``, dropped whitespace) the spans are the library's offsets in bytes, made to never overlap:
tokens that share a character split it by their byte lengths.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from tokenizers import Tokenizer as HFLibraryTokenizer

from bpe.base import Encoding, TokenizerError, compiled_library, utf8
from bpe.pipeline.bytes_unicode import BYTE_TO_CHAR
from bpe.pretrained.base import PretrainedTokenizer, running_spans

_CHAR_TO_BYTE = {char: byte for byte, char in enumerate(BYTE_TO_CHAR)}
_BYTE_PIECE = re.compile(r"<0x([0-9A-Fa-f]{2})>")


def _components(node: Any) -> list[dict[str, Any]]:
    """A pre-tokenizer/decoder/normalizer and, for a ``Sequence``, its members, flattened."""
    if not isinstance(node, dict):
        return []
    members = node.get("pretokenizers") or node.get("decoders") or node.get("normalizers") or []
    return [node, *(part for member in members for part in _components(member))]


class HuggingFaceTokenizer(PretrainedTokenizer):
    """A ``tokenizers.Tokenizer`` and, read from its JSON, what each piece stands for in the text."""

    family = "hf"

    def __init__(self, tokenizer: HFLibraryTokenizer, document: dict[str, Any], name: str) -> None:
        super().__init__(name)
        tokenizer.encode_special_tokens = True  # "<s>" in the text is text
        self._tokenizer = tokenizer
        model = document.get("model") or {}
        parts = _components(document.get("pre_tokenizer")) + _components(document.get("decoder"))
        self._byte_level = any(part.get("type") == "ByteLevel" for part in parts)
        self._byte_fallback = bool(model.get("byte_fallback"))
        self._prefix = model.get("continuing_subword_prefix") or ""
        self._suffix = model.get("end_of_word_suffix") or ""
        metaspaces = [part for part in parts if part.get("type") == "Metaspace"]
        self._spaces = {part["replacement"] for part in metaspaces if part.get("replacement")}
        self._control = {entry["id"] for entry in document.get("added_tokens") or [] if entry.get("special")}
        self._size = tokenizer.get_vocab_size(with_added_tokens=True)
        # Unigram models name their unknown piece by id, the others by string
        unk_token = model.get("unk_token") or ""
        unk_id = model.get("unk_id") if model.get("type") == "Unigram" else tokenizer.token_to_id(unk_token)
        self._unk_id = unk_id if isinstance(unk_id, int) else None
        self._bytes: dict[int, bytes] = {}

    @property
    def continuing_subword_prefix(self) -> str:
        """The marker of a word-inner piece (WordPiece's ``##``), or ``""``."""
        return self._prefix

    @property
    def word_start_marks(self) -> frozenset[str]:
        """The characters a Metaspace pre-tokenizer writes for a space (``▁``); empty without one."""
        return frozenset(self._spaces)

    def encode_with_spans(self, text: str) -> Encoding:
        data = utf8(text)
        try:
            with compiled_library(self.name, "tokenizers"):
                encoding = self._tokenizer.encode(text, add_special_tokens=False)
        except Exception as exc:  # the library raises a bare Exception, e.g. an unknown piece without unk
            raise TokenizerError(f"{self.name}: tokenizers could not encode the text ({exc})",
                                 code="library_failed") from None  # fmt: skip
        ids = encoding.ids
        lengths = [len(self.id_to_bytes(token)) for token in ids]
        if sum(lengths) == len(data) and b"".join(self._bytes[token] for token in ids) == data:
            return Encoding(ids=ids, spans=running_spans(lengths))
        return Encoding(ids=ids, spans=_spans_from_offsets(text, encoding.offsets, lengths))

    def token_bytes(self, token_id: int) -> bytes:
        """The text a piece stands for: byte aliases decoded, markers removed, ``▁`` as a space."""
        if token_id in self._control:
            return b""
        piece = self._tokenizer.id_to_token(token_id)
        if piece is None:
            return b""
        if self._byte_fallback and (match := _BYTE_PIECE.fullmatch(piece)):
            return bytes([int(match.group(1), 16)])
        if self._prefix and piece.startswith(self._prefix) and len(piece) > len(self._prefix):
            piece = piece[len(self._prefix) :]
        if self._suffix and piece.endswith(self._suffix):
            piece = piece[: -len(self._suffix)]
        if self._byte_level and all(char in _CHAR_TO_BYTE for char in piece):
            return bytes(_CHAR_TO_BYTE[char] for char in piece)
        for space in self._spaces:
            piece = piece.replace(space, " ")
        return piece.encode("utf-8")

    def id_to_bytes(self, token_id: int) -> bytes:
        cached = self._bytes.get(token_id)
        if cached is None:
            self._check_id(token_id)
            cached = self._bytes[token_id] = self.token_bytes(token_id)
        return cached

    def decode(self, ids: Sequence[int]) -> str:
        for token_id in ids:
            self._check_id(token_id)
        return self._tokenizer.decode(list(ids), skip_special_tokens=False)

    def id_to_piece(self, token_id: int) -> str:
        self._check_id(token_id)
        return self._tokenizer.id_to_token(token_id) or ""

    @property
    def vocab_size(self) -> int:
        return self._size

    @property
    def unk_id(self) -> int | None:
        return self._unk_id


def _spans_from_offsets(text: str, offsets: list[tuple[int, int]], lengths: list[int]) -> list[tuple[int, int]]:
    """The library's character offsets as byte spans that never overlap: a token that shares its
    character(s) with the next token keeps only its own byte length of them."""
    byte_at = [0, *(len(char.encode("utf-8")) for char in text)]
    for index in range(1, len(byte_at)):
        byte_at[index] += byte_at[index - 1]
    spans: list[tuple[int, int]] = []
    previous_end = 0
    for index, (first, last) in enumerate(offsets):
        start, end = max(byte_at[first], previous_end), byte_at[last]
        if index + 1 < len(offsets) and byte_at[offsets[index + 1][0]] < end:
            end = min(end, start + lengths[index])
        end = max(end, start)
        spans.append((start, end))
        previous_end = end
    return spans


def load_hf(data: bytes, name: str) -> HuggingFaceTokenizer:
    text = data.decode("utf-8")
    try:
        tokenizer = HFLibraryTokenizer.from_str(text)
    except Exception as exc:  # the library raises a bare Exception naming the bad field
        raise TokenizerError(f"{name}: not a valid Hugging Face tokenizer.json ({exc})",
                             code="bad_tokenizer_file") from None  # fmt: skip
    return HuggingFaceTokenizer(tokenizer, json.loads(text), name)
