"""byte-bpe: GPT-2 style BPE over UTF-8 bytes.

The 256 byte values are the base symbols (ids right after the specials, in
byte order), so there is no ``<unk>`` by construction and any text
round-trips.  Pieces print bytes through GPT-2's ``bytes_to_unicode`` table
(``Ġ`` = space), which is also what a Hugging Face ByteLevel export needs.
Merge ties are broken on the tokens' bytes (see ``bpe.trainer``).  Default
pre-tokenizer: ``gpt2`` (``cl100k`` / ``o200k`` selectable).  A token may end
inside a multi-byte character; decoding a cut sequence gives U+FFFD, never an
error.  ``min_frequency`` defaults to 2 (a pair seen once is not merged).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from bpe.base import DEFAULT_SPECIAL_TOKENS, TokenizerError
from bpe.bytes_unicode import BYTE_TO_CHAR
from bpe.merge_tokenizer import MergeTokenizer, check_dropout, check_encode_mode, check_seed
from bpe.normalizers import get_normalizer, normalized_texts
from bpe.options import (
    check_training_options,
    check_vocab_minimum,
    read_common_body,
    special_tokens_with,
)
from bpe.pretokenizers import get_pretokenizer
from bpe.trainer import ProgressCallback, count_pretokens, progress_callback

_BYTES = [bytes([value]) for value in range(256)]


class ByteBPETokenizer(MergeTokenizer):
    family = "byte-bpe"

    def __init__(
        self,
        merges: Iterable[tuple[int, int]] = (),
        *,
        pretokenizer: str = "gpt2",
        normalizer: str = "none",
        special_tokens: Iterable[str] = (),
        encode_mode: str = "merges",
        dropout: float = 0.0,
        seed: int = 0,
        min_frequency: int = 2,
    ) -> None:
        """``merges``: id pairs; ``special_tokens``: extra specials after ``<pad> <unk> <s> </s>``."""
        super().__init__(
            special_tokens=special_tokens_with(special_tokens),
            base_pieces=BYTE_TO_CHAR,
            base_bytes=_BYTES,
            merges=merges,
            pretokenizer=pretokenizer,
            normalizer=normalizer,
            encode_mode=encode_mode,
            dropout=dropout,
            seed=seed,
            min_frequency=min_frequency,
        )

    @classmethod
    def train(
        cls,
        texts: Iterable[str],
        vocab_size: int,
        *,
        pretokenizer: str = "gpt2",
        normalizer: str = "none",
        min_frequency: int = 2,
        special_tokens: Iterable[str] = (),
        encode_mode: str = "merges",
        dropout: float = 0.0,
        seed: int = 0,
        progress: bool | ProgressCallback = False,
        workers: int | None = None,
        **unknown: Any,
    ) -> ByteBPETokenizer:
        """Learn merges until the vocabulary (specials + 256 bytes + merges) has
        ``vocab_size`` entries or no pair occurs ``min_frequency`` times.

        ``progress``: True for a tqdm bar on stderr, or a callback ``(merges done, merges wanted)``;
        ``workers``: processes counting pre-tokens (``bpe.trainer.count_pretokens``).
        ``normalizer`` rewrites the text before training and encoding (``bpe.normalizers``);
        ``encode_mode``, ``dropout`` and ``seed`` only change encoding (``bpe.merge_tokenizer``).
        """
        check_training_options(cls.family, vocab_size, min_frequency, unknown)
        encode_mode = check_encode_mode(encode_mode)
        check_dropout(dropout, encode_mode)
        check_seed(seed)
        get_pretokenizer(pretokenizer)
        get_normalizer(normalizer)
        specials = special_tokens_with(special_tokens)
        check_vocab_minimum(cls.family, vocab_size, len(specials) + 256, f"{len(specials)} special tokens + 256 bytes")

        counts = count_pretokens(normalized_texts(texts, normalizer), pretokenizer, workers=workers)
        options = {
            "pretokenizer": pretokenizer,
            "normalizer": normalizer,
            "special_tokens": specials[len(DEFAULT_SPECIAL_TOKENS) :],
            "encode_mode": encode_mode,
            "dropout": dropout,
            "seed": seed,
            "min_frequency": min_frequency,
        }
        with progress_callback(progress, "byte-bpe merges") as callback:
            merges = cls(**options)._learn_merges(counts, vocab_size, callback)
        return cls(merges, **options)

    def _merge_keys(self) -> list[bytes]:
        return list(self._bytes)

    def _base_symbols(self, pretoken: str) -> tuple[list[int], list[int]]:
        first = len(self.special_tokens)
        data = pretoken.encode("utf-8")
        return [first + value for value in data], [1] * len(data)

    @classmethod
    def from_dict(cls, body: dict[str, Any]) -> ByteBPETokenizer:
        config, specials, vocab = read_common_body(body)
        if vocab[len(specials) : len(specials) + 256] != list(BYTE_TO_CHAR):
            raise TokenizerError(
                'tokenizer file: field "vocab" must list the 256 byte symbols (GPT-2 aliases, byte order) '
                "right after the specials"
            )
        tokenizer = cls(
            cls._read_merges(body),
            special_tokens=specials[len(DEFAULT_SPECIAL_TOKENS) :],
            **cls._read_options(config),
        )
        tokenizer._check_saved_vocab(vocab)
        return tokenizer
