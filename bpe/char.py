"""char: one id per character (seeds 002 and 000).

The alphabet is the characters of the training text; if ``vocab_size`` cannot
hold them all, the most frequent are kept (ties: code point order), as are
only characters seen at least ``min_frequency`` times (default 1).  Ids follow
the specials in code point order (seed 002 sorts its alphabet).  Characters
outside the alphabet encode as ``<unk>`` covering their bytes.
"""

from __future__ import annotations

from collections import Counter
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
from bpe.trained import TrainedTokenizer
from bpe.trainer import ProgressCallback, checked_texts

#: a character is encoded on its own whatever the pre-tokens are; pre-tokens only
#: let repeated words reuse the encoding cache
_CACHE_PRETOKENIZER = "unicode"


class CharTokenizer(TrainedTokenizer):
    family = "char"

    def __init__(
        self,
        alphabet: Sequence[str],
        *,
        normalizer: str = "none",
        special_tokens: Iterable[str] = (),
        min_frequency: int = 1,
    ) -> None:
        specials = special_tokens_with(special_tokens)
        for index, char in enumerate(alphabet):
            if not isinstance(char, str) or len(char) != 1:
                raise TokenizerError(f"char vocabulary entry #{index} must be one character, got {char!r}")
        if len(set(alphabet)) != len(alphabet):
            raise TokenizerError("char vocabulary entries must be distinct")
        pieces = [*specials, *alphabet]
        super().__init__(pieces, [piece.encode("utf-8") for piece in pieces], specials, _CACHE_PRETOKENIZER, normalizer)
        self.min_frequency = min_frequency
        self._char_ids = {char: len(specials) + index for index, char in enumerate(alphabet)}

    @classmethod
    def train(
        cls,
        texts: Iterable[str],
        vocab_size: int,
        *,
        normalizer: str = "none",
        min_frequency: int = 1,
        special_tokens: Iterable[str] = (),
        progress: bool | ProgressCallback = False,
        **unknown: Any,
    ) -> CharTokenizer:
        """Keep up to ``vocab_size - len(specials)`` characters, most frequent first.
        ``progress`` is accepted for a uniform interface; counting shows none."""
        check_training_options(cls.family, vocab_size, min_frequency, unknown)
        get_normalizer(normalizer)
        specials = special_tokens_with(special_tokens)
        check_vocab_minimum(cls.family, vocab_size, len(specials) + 1, f"{len(specials)} special tokens + 1 character")

        counts: Counter[str] = Counter()
        for text in checked_texts(normalized_texts(texts, normalizer)):
            counts.update(text)
        ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
        alphabet = [char for char, count in ranked[: vocab_size - len(specials)] if count >= min_frequency]
        extra_specials = specials[len(DEFAULT_SPECIAL_TOKENS) :]
        return cls(sorted(alphabet), normalizer=normalizer, special_tokens=extra_specials, min_frequency=min_frequency)

    def _encode_pretoken(self, pretoken: str) -> tuple[list[int], list[int]]:
        char_ids, unk = self._char_ids, self.unk_id
        ids = [char_ids.get(char, unk) for char in pretoken]
        return ids, ([1] * len(pretoken) if pretoken.isascii() else [len(char.encode("utf-8")) for char in pretoken])

    def config(self) -> dict[str, Any]:
        return {"normalizer": self.normalizer.name, "min_frequency": self.min_frequency}

    @classmethod
    def from_dict(cls, body: dict[str, Any]) -> CharTokenizer:
        config, specials, vocab = read_common_body(body)
        return cls(
            vocab[len(specials) :],
            normalizer=config.get("normalizer", "none"),
            special_tokens=specials[len(DEFAULT_SPECIAL_TOKENS) :],
            min_frequency=body_field(config, "min_frequency", int, "config"),
        )
