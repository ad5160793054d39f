"""Encoding many texts at once with char-bpe or byte-bpe: the same ids, compiled (``bpe.kernels.encode_kernel``).

``TrainedTokenizer.encode`` runs per text in Python, merging each new pre-token in Python too; on
text with many distinct words that dominates.  ``BatchEncoder`` takes a list of texts, cuts them
with the compiled pre-tokenizers of ``bpe.kernels.count_kernel`` and merges every distinct pre-token once in
compiled code, caching its ids across calls.  It gives exactly ``tokenizer.encode(text)`` for every
text (tested on four languages), for tokenizers that encode deterministically by merge rank
(``encode_mode="merges"``, no dropout, no normalizer) with a compiled pre-tokenizer (``gpt2``,
``unicode``, ``whitespace``, ``none``); ``supports`` says whether a tokenizer qualifies, and every
other tokenizer encodes with its own ``encode``.  Imports numba (about a second): meant for large inputs such as
``tokbench encode`` on a file.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from bpe.base import Tokenizer, TokenizerError
from bpe.models.merge_tokenizer import MergeTokenizer
from bpe.training.counts import compiled_pattern, utf32_chunk


class BatchEncoder:
    """Ids of many texts at once, equal to ``tokenizer.encode`` (see the module docstring)."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        if not self.supports(tokenizer):
            raise TokenizerError(
                f"batch encoding needs a char-bpe or byte-bpe tokenizer encoding by merge rank, without dropout "
                f"or normalizer, with a compiled pre-tokenizer, not this {tokenizer.family}",
                code="not_supported",
                value=tokenizer.family,
            )
        from bpe.kernels import encode_kernel

        assert isinstance(tokenizer, MergeTokenizer)
        self._kernel = encode_kernel
        self._pattern = compiled_pattern(tokenizer.pretokenizer.name)
        self._ranks = tokenizer.compiled_ranks()
        first_byte, plain, final, end = tokenizer.base_symbol_tables()
        self._symbols = (first_byte, plain, final, end)
        self._cache = encode_kernel.empty_cache()

    @staticmethod
    def supports(tokenizer: Tokenizer) -> bool:
        """Deterministic encoding by merge rank that the kernel reproduces: no BPE-dropout sampling, no
        normalizer (the kernel reads the text as given), a compiled pre-tokenizer (not ``morpheme``)."""
        return (
            isinstance(tokenizer, MergeTokenizer)
            and tokenizer.encode_mode == "merges"
            and not tokenizer.samples
            and tokenizer.normalizer.name == "none"
            and compiled_pattern(tokenizer.pretokenizer.name) is not None
        )

    def encode(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """The ids of all ``texts`` end to end, and how many belong to each text."""
        from bpe.training.counts import CLASSES

        chunk = utf32_chunk(list(texts), 0, "text to encode")
        first_byte, plain, final, end = self._symbols
        *cache, ids, per_text = self._kernel.encode_texts(
            *self._cache, chunk.text, chunk.ends, CLASSES, self._pattern, first_byte, plain, final, end, *self._ranks
        )
        self._cache = tuple(cache)
        return ids, per_text

    def json_lines(self, texts: Sequence[str]) -> bytes:
        """``json.dumps(tokenizer.encode(text)) + "\\n"`` for every text, as UTF-8 bytes."""
        return self._kernel.json_lines(*self.encode(texts)).tobytes()
