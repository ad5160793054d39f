"""The two baseline rows of tokenizer-parity papers (Petrov et al. 2023, Rust et al. 2021):

* ``bytes``: one token per UTF-8 byte, id = the byte's value (0..255).  ByT5 counts exactly these
  tokens (its ids are the byte values shifted past 3 specials, which no count depends on).
* ``chars``: one token per Unicode code point, id = the code point (0..0x10FFFF): the UTF-32 row.

Both are lossless and cannot produce unknowns.  A byte's piece is the character itself when it is
printable ASCII, else ``<0xNN>``; a code point's piece is the character.
"""

from __future__ import annotations

from bpe.base import Encoding, utf8
from bpe.pretrained.base import PretrainedTokenizer, running_spans

_UNICODE_SIZE = 0x110000


class ByteTokenizer(PretrainedTokenizer):
    family = "bytes"

    def __init__(self) -> None:
        super().__init__("bytes")

    def encode_with_spans(self, text: str) -> Encoding:
        data = utf8(text)
        return Encoding(ids=list(data), spans=[(index, index + 1) for index in range(len(data))])

    def id_to_bytes(self, token_id: int) -> bytes:
        self._check_id(token_id)
        return bytes([token_id])

    def id_to_piece(self, token_id: int) -> str:
        self._check_id(token_id)
        return chr(token_id) if 0x20 < token_id < 0x7F else f"<0x{token_id:02X}>"

    @property
    def vocab_size(self) -> int:
        return 256


class CodepointTokenizer(PretrainedTokenizer):
    family = "chars"

    def __init__(self) -> None:
        super().__init__("chars")

    def encode_with_spans(self, text: str) -> Encoding:
        utf8(text)  # refuses lone surrogates, which have no bytes to span
        lengths = [1] * len(text) if text.isascii() else [len(char.encode("utf-8")) for char in text]
        return Encoding(ids=[ord(char) for char in text], spans=running_spans(lengths))

    def id_to_bytes(self, token_id: int) -> bytes:
        """A surrogate code point has no UTF-8 form: it decodes to U+FFFD."""
        self._check_id(token_id)
        return "\ufffd".encode() if 0xD800 <= token_id <= 0xDFFF else chr(token_id).encode()

    def id_to_piece(self, token_id: int) -> str:
        """The code point itself; a surrogate (no UTF-8 form, so no text of its own) as ``<U+D800>``."""
        self._check_id(token_id)
        return f"<U+{token_id:04X}>" if 0xD800 <= token_id <= 0xDFFF else chr(token_id)

    @property
    def vocab_size(self) -> int:
        return _UNICODE_SIZE
