"""word: one id per pre-token seen in training (the word-level baseline).

The vocabulary is the specials followed by the most frequent pre-tokens, up to
``vocab_size`` entries (ties: higher count first, then code point order;
pre-tokens seen fewer than ``min_frequency`` times, default 1, are left out).
An unknown pre-token encodes as ``<unk>`` covering its bytes: a word is never
dropped (a tokenizer that drops ``unusual`` from ``the unusual dog`` makes
``the`` and ``dog`` look adjacent).  With the default ``unicode`` pre-tokenizer a word
carries its leading space, so `` dog`` and ``dog`` are different entries and
decoding is lossless whenever no ``<unk>`` was produced.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from bpe.base import DEFAULT_SPECIAL_TOKENS, Capability, FamilyFacts, TokenizerError
from bpe.models.trained import TrainedTokenizer, TrainingRequest
from bpe.options import (
    FamilyOptions,
    MinFrequency,
    NormalizerName,
    PreTokenizerName,
    read_common_body,
    special_tokens_with,
)
from bpe.training.counts import PretokenCounts, training_counts


class WordOptions(FamilyOptions):
    pretokenizer: PreTokenizerName = "unicode"
    normalizer: NormalizerName = "none"
    min_frequency: MinFrequency = 1


class WordTokenizer(TrainedTokenizer):
    family = "word"
    options_model = WordOptions
    facts = FamilyFacts(
        capabilities=frozenset({Capability.WHOLE_PRETOKENS}),
        derivable=True,
        boundary_baseline="never splits inside a word",
        native_method="lookup",
        floor=(1, "word"),
    )

    def __init__(self, words: Sequence[str], *, special_tokens: Iterable[str] = (), **options: Any) -> None:
        """``options``: see ``WordOptions``."""
        self.options = WordOptions.parse(self.family, options)
        specials = special_tokens_with(special_tokens)
        for index, word in enumerate(words):
            if not isinstance(word, str) or not word:
                raise TokenizerError(f"word vocabulary entry #{index} must be a non-empty string, got {word!r}",
                                     code="bad_vocabulary", value=word)  # fmt: skip
        if len(set(words)) != len(words) or set(words) & set(specials):
            raise TokenizerError("word vocabulary entries must be distinct and differ from the special tokens",
                                 code="bad_vocabulary")  # fmt: skip
        pieces = [*specials, *words]
        token_bytes = [piece.encode("utf-8") for piece in pieces]
        super().__init__(pieces, token_bytes, specials, self.options.pretokenizer, self.options.normalizer)
        self._word_ids = {word: len(specials) + index for index, word in enumerate(words)}

    @classmethod
    def _train(cls, texts: Iterable[str] | PretokenCounts, request: TrainingRequest) -> WordTokenizer:
        """Keep the ``vocab_size - len(specials)`` most frequent pre-tokens (ties: code point order)."""
        settings, specials = request.options, request.special_tokens
        counts = training_counts(texts, settings.pretokenizer, workers=request.workers, normalizer=settings.normalizer)
        ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
        # a pre-token spelling a special (a literal "<s>" in the text) is not a word: it stays unknown
        words = [word for word, count in ranked if count >= settings.min_frequency and word not in specials]
        words = words[: request.vocab_size - len(specials)]
        return cls(words, special_tokens=request.extra_special_tokens, **settings.model_dump())

    def _encode_pretoken(self, pretoken: str) -> tuple[list[int], list[int]]:
        return [self._word_ids.get(pretoken, self.unk_id)], [len(pretoken.encode("utf-8"))]

    @classmethod
    def from_dict(cls, body: dict[str, Any]) -> WordTokenizer:
        config, specials, vocab = read_common_body(body)
        options = WordOptions.read_saved(config)
        return cls(
            vocab[len(specials) :], special_tokens=specials[len(DEFAULT_SPECIAL_TOKENS) :], **options.model_dump()
        )
