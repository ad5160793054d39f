"""The base of every published tokenizer used as is (encode-only), and what all of them guarantee.

Published tokenizers are read from files of the formats of ``bpe.pretrained.formats`` or by name
(``bpe.pretrained.production``); this module is only their common base, so that the loaders import it and
it imports none of them.

What every pretrained tokenizer guarantees:

* **No special tokens are added** to plain text: no BOS/EOS, no ``[CLS]``/``[SEP]``; special-token
  strings in the text (``<s>``, ``<|endoftext|>``) are encoded as ordinary text.  A lone ``▁`` that
  a sentencepiece model emits is a real token of its sequence and is counted; its span is empty
  when it stands for the dummy prefix, which covers no input.
* **Byte spans** are in order and never overlap; for lossless tokenizers (byte-level BPE,
  sentencepiece with identity normalization and byte fallback) they tile the text's bytes.
* **Ids** are the owning library's own (``tests/bpe/pretrained/test_pretrained.py`` compares them with
  ``tokenizers``, ``sentencepiece``, ``tiktoken`` and ``mistral-common`` on every FLORES line).

A pretrained tokenizer is a ``bpe.base.Tokenizer`` and not a ``TrainableTokenizer``: it has no
``train``, ``vocab_floor`` or ``save``.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import accumulate

from bpe.base import Tokenizer, TokenizerError


class PretrainedTokenizer(Tokenizer):
    """A published tokenizer used as is: encoding and decoding only."""

    def __init__(self, name: str) -> None:
        self._name = name

    @property
    def name(self) -> str:
        """The registry name or the file it was read from."""
        return self._name

    def _check_id(self, token_id: int) -> None:
        check_token_id(token_id, self.vocab_size, self.name)


def check_token_id(token_id: int, vocab_size: int, name: str) -> None:
    """A TokenizerError unless ``token_id`` is an int in ``0..vocab_size-1``."""
    if isinstance(token_id, bool) or not isinstance(token_id, int) or not 0 <= token_id < vocab_size:
        integer = isinstance(token_id, int) and not isinstance(token_id, bool)
        code = "token_id_out_of_range" if integer else "token_id_not_integer"
        raise TokenizerError(f"token id {token_id!r} is out of range for {name} (0..{vocab_size - 1})", code=code,
                             value=token_id)  # fmt: skip


def running_spans(lengths: Iterable[int]) -> list[tuple[int, int]]:
    """Spans of consecutive tokens of the given byte lengths, starting at byte 0."""
    ends = list(accumulate(lengths))
    return list(zip([0, *ends][: len(ends)], ends, strict=True))
