"""byte-bpe: GPT-2 style BPE over UTF-8 bytes.

The 256 byte values are the base symbols (ids right after the specials, in
byte order), so there is no ``<unk>`` by construction and any text
round-trips.  Pieces print bytes through GPT-2's ``bytes_to_unicode`` table
(``Ġ`` = space), which is also what a Hugging Face ByteLevel export needs.
Merge ties are broken on the tokens' bytes (see ``bpe.training.trainer``).  Default
pre-tokenizer: ``gpt2`` (``cl100k`` / ``o200k`` selectable).  A token may end
inside a multi-byte character; decoding a cut sequence gives U+FFFD, never an
error.  ``min_frequency`` defaults to 2 (a pair seen once is not merged).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from bpe.base import DEFAULT_SPECIAL_TOKENS, FamilyFacts, TokenizerError
from bpe.models.merge_tokenizer import MergeTokenizer
from bpe.models.trained import TrainingRequest
from bpe.options import (
    Dropout,
    MergesEncodeMode,
    MinFrequency,
    NormalizerName,
    PreTokenizerName,
    SamplingOptions,
    SamplingSeed,
    TieBreak,
    read_common_body,
    special_tokens_with,
)
from bpe.pipeline.bytes_unicode import BYTE_TO_CHAR
from bpe.training.counts import PretokenCounts

_BYTES = [bytes([value]) for value in range(256)]


class ByteBPEOptions(SamplingOptions):
    native_mode = "merges"

    pretokenizer: PreTokenizerName = "gpt2"
    normalizer: NormalizerName = "none"
    min_frequency: MinFrequency = 2
    encode_mode: MergesEncodeMode = "merges"
    tie_break: TieBreak = "longest-first"
    dropout: Dropout = 0.0
    seed: SamplingSeed = 0


class ByteBPETokenizer(MergeTokenizer):
    family = "byte-bpe"
    options_model = ByteBPEOptions
    facts = FamilyFacts(derivable=True, floor=(256, "bytes"))

    def __init__(
        self, merges: Iterable[tuple[int, int]] = (), *, special_tokens: Iterable[str] = (), **options: Any
    ) -> None:
        """``merges``: id pairs; ``special_tokens``: extra specials after ``<pad> <unk> <s> </s>``;
        ``options``: see ``options_model`` (``ByteBPEOptions``; a subclass family declares its own)."""
        super().__init__(
            special_tokens=special_tokens_with(special_tokens),
            base_pieces=BYTE_TO_CHAR,
            base_bytes=_BYTES,
            merges=merges,
            options=self.options_model.parse(self.family, options),
        )

    @classmethod
    def untrained(cls, counts: PretokenCounts, request: TrainingRequest) -> ByteBPETokenizer:
        """The 256 byte symbols, whatever the text."""
        return cls(special_tokens=request.extra_special_tokens, **request.options.model_dump())

    def with_merges(self, merges: Iterable[tuple[int, int]]) -> ByteBPETokenizer:
        extra_specials = self.special_tokens[len(DEFAULT_SPECIAL_TOKENS) :]
        return type(self)(merges, special_tokens=extra_specials, **self.options.model_dump())

    def _merge_keys(self) -> list[bytes]:
        return list(self._bytes)

    def _training_words(self, pretoken_counts: PretokenCounts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        from bpe.kernels.count_kernel import utf8_words

        counts = pretoken_counts
        return utf8_words(counts.units, counts.offsets, counts.counts, len(self.special_tokens))

    def base_symbol_tables(self) -> tuple[int, np.ndarray, np.ndarray, int]:
        """``(first byte id, -, -, -1)``: byte ``b`` of a pre-token's UTF-8 is base symbol ``first + b``."""
        unused = np.full(1, -1, dtype=np.int32)
        return len(self.special_tokens), unused, unused, -1

    def _base_symbols(self, pretoken: str) -> tuple[list[int], list[int]]:
        first = len(self.special_tokens)
        data = pretoken.encode("utf-8")
        return [first + value for value in data], [1] * len(data)

    def _base_symbol_arrays(self, pretokens: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        data = np.frombuffer("".join(pretokens).encode("utf-8"), dtype=np.uint8)
        offsets = np.zeros(len(pretokens) + 1, dtype=np.int64)
        np.cumsum([len(pretoken.encode("utf-8")) for pretoken in pretokens], out=offsets[1:])
        return data.astype(np.int32) + len(self.special_tokens), offsets, np.ones(len(data), dtype=np.int64)

    @staticmethod
    def read_byte_body(body: dict[str, Any]) -> tuple[dict[str, Any], list[str], list[str]]:
        """``read_common_body``, and the 256 byte symbols checked right after the specials."""
        config, specials, vocab = read_common_body(body)
        if vocab[len(specials) : len(specials) + 256] != list(BYTE_TO_CHAR):
            raise TokenizerError(
                'tokenizer file: field "vocab" must list the 256 byte symbols (GPT-2 aliases, byte order) '
                "right after the specials",
                code="bad_tokenizer_file",
                field="vocab",
            )
        return config, specials, vocab

    @classmethod
    def from_dict(cls, body: dict[str, Any]) -> ByteBPETokenizer:
        config, specials, vocab = cls.read_byte_body(body)
        options = cls.options_model.read_saved(config)
        tokenizer = cls(
            cls._read_merges(body), special_tokens=specials[len(DEFAULT_SPECIAL_TOKENS) :], **options.model_dump()
        )
        tokenizer._check_saved_vocab(vocab)
        return tokenizer
