"""word: one id per pre-token seen in training (seed 000's word-level tokenizer, done right).

The vocabulary is the specials followed by the most frequent pre-tokens, up to
``vocab_size`` entries (ties: higher count first, then code point order;
pre-tokens seen fewer than ``min_frequency`` times, default 1, are left out).
An unknown pre-token encodes as ``<unk>`` covering its bytes: a word is never
dropped (seed 000: dropping ``unusual`` from ``the unusual dog`` makes ``the``
and ``dog`` look adjacent).  With the default ``unicode`` pre-tokenizer a word
carries its leading space, so `` dog`` and ``dog`` are different entries and
decoding is lossless whenever no ``<unk>`` was produced.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from bpe.base import DEFAULT_SPECIAL_TOKENS, TokenizerError
from bpe.normalizers import get_normalizer, normalized_texts
from bpe.options import (
    body_field,
    check_training_options,
    check_vocab_minimum,
    read_common_body,
    special_tokens_with,
)
from bpe.pretokenizers import get_pretokenizer
from bpe.trained import TrainedTokenizer
from bpe.trainer import ProgressCallback, count_pretokens


class WordTokenizer(TrainedTokenizer):
    family = "word"

    def __init__(
        self,
        words: Sequence[str],
        *,
        pretokenizer: str = "unicode",
        normalizer: str = "none",
        special_tokens: Iterable[str] = (),
        min_frequency: int = 1,
    ) -> None:
        specials = special_tokens_with(special_tokens)
        for index, word in enumerate(words):
            if not isinstance(word, str) or not word:
                raise TokenizerError(f"word vocabulary entry #{index} must be a non-empty string, got {word!r}")
        if len(set(words)) != len(words) or set(words) & set(specials):
            raise TokenizerError("word vocabulary entries must be distinct and differ from the special tokens")
        pieces = [*specials, *words]
        super().__init__(pieces, [piece.encode("utf-8") for piece in pieces], specials, pretokenizer, normalizer)
        self.min_frequency = min_frequency
        self._word_ids = {word: len(specials) + index for index, word in enumerate(words)}

    @classmethod
    def train(
        cls,
        texts: Iterable[str],
        vocab_size: int,
        *,
        pretokenizer: str = "unicode",
        normalizer: str = "none",
        min_frequency: int = 1,
        special_tokens: Iterable[str] = (),
        progress: bool | ProgressCallback = False,
        workers: int | None = None,
        **unknown: Any,
    ) -> WordTokenizer:
        """Keep the ``vocab_size - len(specials)`` most frequent pre-tokens.
        ``progress`` is accepted for a uniform interface; counting shows none."""
        check_training_options(cls.family, vocab_size, min_frequency, unknown)
        get_pretokenizer(pretokenizer)
        get_normalizer(normalizer)
        specials = special_tokens_with(special_tokens)
        check_vocab_minimum(cls.family, vocab_size, len(specials) + 1, f"{len(specials)} special tokens + 1 word")

        counts = count_pretokens(normalized_texts(texts, normalizer), pretokenizer, workers=workers)
        ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
        # a pre-token spelling a special (a literal "<s>" in the text) is not a word: it stays unknown
        words = [word for word, count in ranked if count >= min_frequency and word not in specials]
        words = words[: vocab_size - len(specials)]
        extra_specials = specials[len(DEFAULT_SPECIAL_TOKENS) :]
        return cls(
            words,
            pretokenizer=pretokenizer,
            normalizer=normalizer,
            special_tokens=extra_specials,
            min_frequency=min_frequency,
        )

    def _encode_pretoken(self, pretoken: str) -> tuple[list[int], list[int]]:
        return [self._word_ids.get(pretoken, self.unk_id)], [len(pretoken.encode("utf-8"))]

    def config(self) -> dict[str, Any]:
        return {
            "pretokenizer": self.pretokenizer.name,
            "normalizer": self.normalizer.name,
            "min_frequency": self.min_frequency,
        }

    @classmethod
    def from_dict(cls, body: dict[str, Any]) -> WordTokenizer:
        config, specials, vocab = read_common_body(body)
        return cls(
            vocab[len(specials) :],
            pretokenizer=body_field(config, "pretokenizer", str, "config"),
            normalizer=config.get("normalizer", "none"),
            special_tokens=specials[len(DEFAULT_SPECIAL_TOKENS) :],
            min_frequency=body_field(config, "min_frequency", int, "config"),
        )
