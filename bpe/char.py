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
from bpe.normalizers import normalized_texts
from bpe.options import CharOptions, check_vocab_minimum, checked_vocab_size, read_common_body, special_tokens_with
from bpe.trained import TrainedTokenizer
from bpe.trainer import ProgressCallback, checked_texts

#: a character is encoded on its own whatever the pre-tokens are; pre-tokens only
#: let repeated words reuse the encoding cache
_CACHE_PRETOKENIZER = "unicode"


class CharTokenizer(TrainedTokenizer):
    family = "char"

    def __init__(self, alphabet: Sequence[str], *, special_tokens: Iterable[str] = (), **options: Any) -> None:
        """``options``: see ``bpe.options.CharOptions``."""
        self.options = CharOptions.parse(self.family, options)
        specials = special_tokens_with(special_tokens)
        for index, char in enumerate(alphabet):
            if not isinstance(char, str) or len(char) != 1:
                raise TokenizerError(f"char vocabulary entry #{index} must be one character, got {char!r}")
        if len(set(alphabet)) != len(alphabet):
            raise TokenizerError("char vocabulary entries must be distinct")
        pieces = [*specials, *alphabet]
        super().__init__(
            pieces, [piece.encode("utf-8") for piece in pieces], specials, _CACHE_PRETOKENIZER, self.options.normalizer
        )
        self._char_ids = {char: len(specials) + index for index, char in enumerate(alphabet)}

    @classmethod
    def train(
        cls,
        texts: Iterable[str],
        vocab_size: int,
        *,
        special_tokens: Iterable[str] = (),
        progress: bool | ProgressCallback = False,
        **options: Any,
    ) -> CharTokenizer:
        """Keep up to ``vocab_size - len(specials)`` characters, most frequent first.
        ``progress`` is accepted for a uniform interface; counting shows none."""
        settings = CharOptions.parse(cls.family, options)
        vocab_size = checked_vocab_size(vocab_size)
        specials = special_tokens_with(special_tokens)
        check_vocab_minimum(cls.family, vocab_size, len(specials) + 1, f"{len(specials)} special tokens + 1 character")

        counts: Counter[str] = Counter()
        for text in checked_texts(normalized_texts(texts, settings.normalizer)):
            counts.update(text)
        ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
        alphabet = [char for char, count in ranked[: vocab_size - len(specials)] if count >= settings.min_frequency]
        return cls(sorted(alphabet), special_tokens=specials[len(DEFAULT_SPECIAL_TOKENS) :], **settings.model_dump())

    def _encode_pretoken(self, pretoken: str) -> tuple[list[int], list[int]]:
        char_ids, unk = self._char_ids, self.unk_id
        ids = [char_ids.get(char, unk) for char in pretoken]
        return ids, ([1] * len(pretoken) if pretoken.isascii() else [len(char.encode("utf-8")) for char in pretoken])

    @classmethod
    def from_dict(cls, body: dict[str, Any]) -> CharTokenizer:
        config, specials, vocab = read_common_body(body)
        options = CharOptions.read_saved(config)
        return cls(
            vocab[len(specials) :], special_tokens=specials[len(DEFAULT_SPECIAL_TOKENS) :], **options.model_dump()
        )
