"""char: one id per character.

The alphabet is the characters of the training text; if ``vocab_size`` cannot
hold them all, the most frequent are kept (ties: code point order), as are
only characters seen at least ``min_frequency`` times (default 1).  Ids follow
the specials in code point order (a sorted alphabet, as in nanoGPT's ``sorted(set(text))``).  Characters
outside the alphabet encode as ``<unk>`` covering their bytes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from bpe.base import DEFAULT_SPECIAL_TOKENS, Capability, FamilyFacts, TokenizerError
from bpe.models.trained import TrainedTokenizer, TrainingRequest
from bpe.options import (
    FamilyOptions,
    MinFrequency,
    NormalizerName,
    read_common_body,
    special_tokens_with,
)
from bpe.pipeline.normalizers import normalized_texts
from bpe.training.counts import PretokenCounts, check_counts_normalizer
from bpe.training.trainer import checked_texts

#: a character is encoded on its own whatever the pre-tokens are; pre-tokens only
#: let repeated words reuse the encoding cache
_CACHE_PRETOKENIZER = "unicode"


class CharOptions(FamilyOptions):
    normalizer: NormalizerName = "none"
    min_frequency: MinFrequency = 1


class CharTokenizer(TrainedTokenizer):
    family = "char"
    options_model = CharOptions
    facts = FamilyFacts(
        capabilities=frozenset({Capability.CHARACTER_TOKENS}),
        boundary_baseline="splits at every character",
        native_method="characters",
    )  # not derivable: its saved form keeps no frequency ranks to cut by (``train_sweep`` ranks once)

    def __init__(self, alphabet: Sequence[str], *, special_tokens: Iterable[str] = (), **options: Any) -> None:
        """``options``: see ``CharOptions``."""
        self.options = CharOptions.parse(self.family, options)
        specials = special_tokens_with(special_tokens)
        for index, char in enumerate(alphabet):
            if not isinstance(char, str) or len(char) != 1:
                raise TokenizerError(f"char vocabulary entry #{index} must be one character, got {char!r}",
                                     code="bad_vocabulary", value=char)  # fmt: skip
        if len(set(alphabet)) != len(alphabet):
            raise TokenizerError("char vocabulary entries must be distinct", code="bad_vocabulary")
        pieces = [*specials, *alphabet]
        super().__init__(
            pieces, [piece.encode("utf-8") for piece in pieces], specials, _CACHE_PRETOKENIZER, self.options.normalizer
        )
        self._char_ids = {char: len(specials) + index for index, char in enumerate(alphabet)}

    @classmethod
    def _train(cls, texts: Iterable[str] | PretokenCounts, request: TrainingRequest) -> CharTokenizer:
        """Keep up to ``vocab_size - len(specials)`` characters, most frequent first.  ``texts``:
        strings, or pre-token counts (any pre-tokenizer: they are all lossless, so the characters of
        the pre-tokens are those of the text)."""
        return cls._from_ranked(ranked_characters(texts, request.options.normalizer), request)

    @classmethod
    def train_sweep(
        cls, texts: Iterable[str], vocab_sizes: Sequence[int], *, special_tokens: Iterable[str] = (), **options: Any
    ) -> dict[int, CharTokenizer]:
        """Every size from one ranking of the text's characters: a smaller alphabet keeps the most frequent
        characters, ranks a saved char tokenizer does not keep (so it is not ``derivable``)."""
        requests = [cls.training_request(size, special_tokens, options) for size in vocab_sizes]
        ranked = ranked_characters(texts, requests[0].options.normalizer)
        return {request.vocab_size: cls._from_ranked(ranked, request) for request in requests}

    @classmethod
    def _from_ranked(cls, ranked: Sequence[tuple[str, int]], request: TrainingRequest) -> CharTokenizer:
        room = request.vocab_size - len(request.special_tokens)
        alphabet = [char for char, count in ranked[:room] if count >= request.options.min_frequency]
        return cls(sorted(alphabet), special_tokens=request.extra_special_tokens, **request.options.model_dump())

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


def ranked_characters(texts: Iterable[str] | PretokenCounts, normalizer: str = "none") -> list[tuple[str, int]]:
    """Every character of the texts through ``normalizer`` (or of the counted pre-tokens, which
    hold the text as given: no normalizer) with its count, most frequent first (ties: code point
    order)."""
    counts: Counter[str] = Counter()
    if isinstance(texts, PretokenCounts):
        check_counts_normalizer(normalizer)
        import numpy as np

        from bpe.kernels.count_kernel import character_stats

        if not texts.has_text():
            raise TokenizerError("training input is empty or whitespace-only (the pre-token counts hold no other text)",
                                 code="empty_training_input")  # fmt: skip
        occurrences, _ = character_stats(texts.units, texts.offsets, texts.counts)
        seen = np.flatnonzero(occurrences)
        counts.update(dict(zip(map(chr, seen.tolist()), occurrences[seen].tolist(), strict=True)))
    else:
        for text in checked_texts(normalized_texts(texts, normalizer)):
            counts.update(text)
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))
