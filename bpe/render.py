"""How a tokenizer split a text, for people to read: each token shown as the text it covers.

A token is rendered from its byte span into the text, never from its vocabulary piece, so every
family reads the same way whatever its markers (``Ġ``, ``▁``, ``</w>``, ``##``):

* the characters the token covers, as they are: byte-level pieces appear decoded
  (``dün``, not ``dÃ¼n``);
* a space as ``␣`` (so a leading space, however a family marks it, is ``␣word``), a newline as
  ``↵``, a tab as ``⇥``, any other invisible character as ``<U+200B>``;
* bytes that are only part of a UTF-8 character (a byte-level token ending inside ``한``) as
  ``<0xED>``, one per byte;
* a token covering no text (a separate ``</w>``, sentencepiece's lone dummy-prefix ``▁``) as ``∅``;
* an unknown token (``unk_id``) as ``<unk:text>`` with the text it replaced.

``render`` joins the pieces with ``│`` (U+2502).
"""

from __future__ import annotations

from bpe.base import Encoding

SEPARATOR = "│"
EMPTY = "∅"
_VISIBLE = {" ": "␣", "\n": "↵", "\t": "⇥"}


def _char(char: str) -> str:
    if char in _VISIBLE:
        return _VISIBLE[char]
    return char if char.isprintable() else f"<U+{ord(char):04X}>"


def _sequence_length(lead: int) -> int:
    """The length of the UTF-8 sequence a lead byte starts (1 for a byte that cannot start one)."""
    return 2 if 0xC2 <= lead <= 0xDF else 3 if 0xE0 <= lead <= 0xEF else 4 if 0xF0 <= lead <= 0xF4 else 1


def render_bytes(data: bytes) -> str:
    """Whole UTF-8 characters as text (invisible ones made visible), other bytes as ``<0xNN>``."""
    out: list[str] = []
    position = 0
    while position < len(data):
        length = _sequence_length(data[position])
        try:
            out.append(_char(data[position : position + length].decode("utf-8")))
            position += length
        except UnicodeDecodeError:  # a cut or invalid sequence: its first byte alone
            out.append(f"<0x{data[position]:02X}>")
            position += 1
    return "".join(out)


def render_pieces(text: str, encoding: Encoding, unk_id: int | None = None) -> list[str]:
    """One string per token: the text its span covers, made readable (see the module docstring)."""
    data = text.encode("utf-8")
    pieces = []
    for token, (start, end) in zip(encoding.ids, encoding.spans, strict=True):
        covered = render_bytes(data[start:end]) if end > start else EMPTY
        pieces.append(f"<unk:{covered}>" if unk_id is not None and token == unk_id else covered)
    return pieces


def render(text: str, encoding: Encoding, unk_id: int | None = None, separator: str = SEPARATOR) -> str:
    """The pieces of ``render_pieces`` joined by ``separator``."""
    return separator.join(render_pieces(text, encoding, unk_id))
