"""GPT-2's printable alias for every byte (``Ġ`` for a space, ``Ċ`` for a newline).

Bytes that are printable Latin-1 characters stand for themselves; the other
68 bytes are shifted to U+0100 and up, in byte order.  Every byte thus maps to
one printable character, so a byte-level piece is readable and a vocabulary
written this way is exactly what Hugging Face ``tokenizers``' ByteLevel
components expect.
"""

from __future__ import annotations


def _byte_aliases() -> tuple[str, ...]:
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    aliases: dict[int, str] = {b: chr(b) for b in printable}
    shifted = 0
    for b in range(256):
        if b not in aliases:
            aliases[b] = chr(256 + shifted)
            shifted += 1
    return tuple(aliases[b] for b in range(256))


#: BYTE_TO_CHAR[b] is the printable character standing for byte b.
BYTE_TO_CHAR: tuple[str, ...] = _byte_aliases()


def bytes_to_piece(data: bytes) -> str:
    """The printable piece of a byte string (``b" the"`` -> ``"Ġthe"``)."""
    return "".join(BYTE_TO_CHAR[b] for b in data)

