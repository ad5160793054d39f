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
from bpe.merge_tokenizer import MergeTokenizer
from bpe.normalizers import normalized_texts
from bpe.options import ByteBPEOptions, check_vocab_minimum, checked_vocab_size, read_common_body, special_tokens_with
from bpe.trainer import ProgressCallback, count_pretokens, progress_callback

_BYTES = [bytes([value]) for value in range(256)]


class ByteBPETokenizer(MergeTokenizer):
    family = "byte-bpe"

    def __init__(
        self, merges: Iterable[tuple[int, int]] = (), *, special_tokens: Iterable[str] = (), **options: Any
    ) -> None:
        """``merges``: id pairs; ``special_tokens``: extra specials after ``<pad> <unk> <s> </s>``;
        ``options``: see ``bpe.options.ByteBPEOptions``."""
        super().__init__(
            special_tokens=special_tokens_with(special_tokens),
            base_pieces=BYTE_TO_CHAR,
            base_bytes=_BYTES,
            merges=merges,
            options=ByteBPEOptions.parse(self.family, options),
        )

    @classmethod
    def train(
        cls,
        texts: Iterable[str],
        vocab_size: int,
        *,
        special_tokens: Iterable[str] = (),
        progress: bool | ProgressCallback = False,
        workers: int | None = None,
        **options: Any,
    ) -> ByteBPETokenizer:
        """Learn merges until the vocabulary (specials + 256 bytes + merges) has
        ``vocab_size`` entries or no pair occurs ``min_frequency`` times.

        ``progress``: True for a tqdm bar on stderr, or a callback ``(merges done, merges wanted)``;
        ``workers``: processes counting pre-tokens (``bpe.trainer.count_pretokens``).
        ``options``: see ``bpe.options.ByteBPEOptions``; ``normalizer`` rewrites the text before
        training and encoding (``bpe.normalizers``); the encode-time options (``encode_mode``,
        ``dropout``, ``seed``) only change encoding (``bpe.merge_tokenizer``).
        """
        settings = ByteBPEOptions.parse(cls.family, options)
        vocab_size = checked_vocab_size(vocab_size)
        specials = special_tokens_with(special_tokens)
        check_vocab_minimum(cls.family, vocab_size, len(specials) + 256, f"{len(specials)} special tokens + 256 bytes")

        counts = count_pretokens(normalized_texts(texts, settings.normalizer), settings.pretokenizer, workers=workers)
        arguments = {"special_tokens": specials[len(DEFAULT_SPECIAL_TOKENS) :], **settings.model_dump()}
        with progress_callback(progress, "byte-bpe merges") as callback:
            merges = cls(**arguments)._learn_merges(counts, vocab_size, callback)
        return cls(merges, **arguments)

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
        options = ByteBPEOptions.read_saved(config)
        tokenizer = cls(
            cls._read_merges(body), special_tokens=specials[len(DEFAULT_SPECIAL_TOKENS) :], **options.model_dump()
        )
        tokenizer._check_saved_vocab(vocab)
        return tokenizer
