"""bpe-knockout: BPE with the merges that cut across gold morpheme boundaries removed.

Bauwens & Delobelle 2024, "BPE-knockout: Pruning Pre-existing BPE Tokenisers
with Backwards-compatible Morphological Semi-supervision" (NAACL).  The
``bpe-knockout`` package on PyPI implements it inside its authors' framework
(TkTkT, with its own preprocessors and dataset loaders); this module
implements the algorithm of the paper over this library's BPE families:

1. Train an ordinary BPE tokenizer (``base``: ``char-bpe`` or ``byte-bpe``,
   with any of its options) on the text.
2. Encode every reference word in its mid-sentence form (after a space, as
   ``Tokenizer.encode_word``) with the merges, and record every merge
   application and the byte offset where it joined its two parts.  An
   application is *bad* when that offset is a gold morpheme boundary of the
   word.  Each word counts once.
3. Knock out every merge whose blame ratio (bad applications / applications)
   is at least ``threshold`` (the paper's 0.5): its token leaves the
   vocabulary, and every later merge that used it as a part uses that
   token's own parts instead, so merges may join more than two tokens
   (knocking out ``a + b`` turns ``ab + c`` into ``a + b + c``).  Merges keep
   their priority.

Encoding applies the remaining merges like BPE: repeatedly the
highest-priority merge whose parts occur in a row (leftmost on ties).  The
vocabulary is the base vocabulary without the knocked-out tokens (ids
renumbered in the same order), so it is smaller than ``vocab_size``.

References are passed by the caller (the library reads no corpora): a mapping
from a word to its inner gold boundaries as character offsets (``{"evler":
[2]}`` for ev|ler).  The saved file holds the base tokenizer and the ids it
knocked out, not the references.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from itertools import accumulate
from typing import Annotated, Any, Literal

from pydantic import Field, model_validator
from typing_extensions import Self

from bpe.base import FamilyFacts, TokenizerError, VocabFloor
from bpe.families import family_class
from bpe.models.merge_tokenizer import MergeTokenizer, token_byte_lengths
from bpe.models.trained import TrainedTokenizer
from bpe.options import (
    EndOfWord,
    FamilyOptions,
    LimitAlphabet,
    MinFrequency,
    PreTokenizerName,
    body_field,
)
from bpe.training.counts import PretokenCounts
from bpe.training.trainer import ProgressCallback
from bpe.validation import in_interval, table_rule

BASES = ("char-bpe", "byte-bpe")


class KnockoutOptions(FamilyOptions):
    """bpe-knockout's own options, then the training options of its base BPE family (unset: the
    base's default).  The gold references are training data, passed to ``train`` beside the text."""

    base: Annotated[Literal["char-bpe", "byte-bpe"], Field(description="bpe-knockout: the BPE family to prune")] = (
        "char-bpe"
    )
    threshold: Annotated[
        in_interval(0, 1, closed_high=True),
        Field(description="bpe-knockout: a merge is removed when this share of its applications cross a boundary"),
    ] = 0.5
    pretokenizer: Annotated[
        PreTokenizerName | None, Field(description="the base's pre-tokenizer (unset: the base's default)")
    ] = None
    end_of_word: Annotated[
        EndOfWord | None, Field(description="the end-of-word marker of a char-bpe base (unset: char-bpe's default)")
    ] = None
    min_frequency: MinFrequency = 2
    limit_alphabet: LimitAlphabet = None

    @model_validator(mode="after")
    def _char_bpe_options_need_char_bpe(self) -> Self:
        given = [name for name in ("end_of_word", "limit_alphabet") if getattr(self, name) is not None]
        if given and self.base != "char-bpe":
            raise table_rule(f"{given[0]} applies to base 'char-bpe' only, not {self.base!r}", value=given[0])
        return self

    def base_options(self) -> dict[str, Any]:
        """The training options of the base family that are set."""
        own = {"base", "threshold"}
        return {name: value for name, value in self.model_dump(exclude=own).items() if value is not None}


class KnockoutTokenizer(TrainedTokenizer):
    family = "bpe-knockout"
    options_model = KnockoutOptions
    facts = FamilyFacts(trains_on_references=True)

    options: KnockoutOptions

    def __init__(self, base: MergeTokenizer, knocked_out: Iterable[int], threshold: float | None = None) -> None:
        """``base``: the BPE tokenizer before knockout; ``knocked_out``: ids of its merged tokens to remove;
        ``threshold``: the blame ratio they were removed at (``KnockoutOptions``)."""
        if not isinstance(base, MergeTokenizer) or base.family not in BASES:
            raise TokenizerError(f"bpe-knockout needs a base tokenizer of family {' or '.join(BASES)}",
                                 code="bad_base", value=getattr(base, "family", None))  # fmt: skip
        if base.encode_mode != "merges" or base.samples or base.normalizer.name != "none":
            raise TokenizerError("bpe-knockout needs a base encoding by merges, without dropout or normalizer",
                                 code="bad_base")  # fmt: skip
        # the base's training options, as declared for bpe-knockout
        inherited = {name: value for name, value in base.options.training_options().items()
                     if name in KnockoutOptions.model_fields}  # fmt: skip
        self.options = KnockoutOptions.parse(self.family, {"base": base.family, "threshold": threshold, **inherited})
        knocked_out = list(knocked_out)
        merged = range(base.first_merge_id, base.vocab_size)
        for token in knocked_out:
            if isinstance(token, bool) or not isinstance(token, int) or token not in merged:
                raise TokenizerError(f"bpe-knockout can only remove merged tokens of the base, not id {token!r}",
                                     code="token_id_out_of_range", value=token)  # fmt: skip
        removed = sorted(set(knocked_out))
        self.base = base
        self.knocked_out = removed
        gone = set(removed)
        kept = [token for token in range(base.vocab_size) if token not in gone]
        new_id = {old: new for new, old in enumerate(kept)}
        # each base token as surviving base tokens: itself, or the parts it was merged from
        replacement: list[tuple[int, ...]] = [(token,) for token in range(base.first_merge_id)]
        merges: list[tuple[tuple[int, ...], int]] = []  # (parts, new id), in priority order
        for token, (left, right) in enumerate(base.merges, start=base.first_merge_id):
            parts = replacement[left] + replacement[right]
            if token in gone:
                replacement.append(parts)
            else:
                replacement.append((token,))
                merges.append((tuple(new_id[part] for part in parts), new_id[token]))
        super().__init__(
            [base.vocab[token] for token in kept],
            [base.id_to_bytes(token) for token in kept],
            base.special_tokens,
            base.pretokenizer.name,
        )
        self._symbol_counts = [base._symbol_counts[token] for token in kept]
        self._merges_from: dict[int, list[tuple[int, tuple[int, ...], int]]] = {}
        for priority, (parts, token) in enumerate(merges):
            self._merges_from.setdefault(parts[0], []).append((priority, parts, token))

    @property
    def merges(self) -> list[tuple[int, ...]]:
        """The merges as tuples of part ids (two or more), in priority order."""
        ordered = sorted(entry for entries in self._merges_from.values() for entry in entries)
        return [parts for _, parts, _ in ordered]

    # -- training ---------------------------------------------------------
    @classmethod
    def train(
        cls,
        texts: Iterable[str] | PretokenCounts,
        vocab_size: int,
        *,
        references: Mapping[str, Collection[int]] | None = None,
        progress: bool | ProgressCallback = False,
        workers: int | None = None,
        **options: Any,
    ) -> KnockoutTokenizer:
        """Train the base BPE (``vocab_size`` is its own), then knock out the merges that
        ``references`` (word -> inner character boundaries) blame.  ``options``: see
        ``KnockoutOptions``; ``workers``: threads counting pre-tokens."""
        settings = KnockoutOptions.parse(cls.family, options)
        words = _checked_references(references)
        trained = family_class(settings.base).train(texts, vocab_size, progress=progress, workers=workers,
                                                    **settings.base_options())  # fmt: skip
        assert isinstance(trained, MergeTokenizer)
        return cls(trained, blamed_merges(trained, words, settings.threshold), settings.threshold)

    @classmethod
    def vocab_floor(cls, texts: Iterable[str] | PretokenCounts | None = None, **options: Any) -> VocabFloor:
        """The floor of the base BPE family with the base options (``vocab_size`` is the base's)."""
        settings = KnockoutOptions.parse(cls.family, options)
        return family_class(settings.base).vocab_floor(texts, **settings.base_options())

    # -- encoding ---------------------------------------------------------
    def _encode_pretoken(self, pretoken: str) -> tuple[list[int], list[int]]:
        symbols, byte_lengths = self.base._base_symbols(pretoken)  # base symbols keep their ids
        merges_from = self._merges_from
        while True:
            best: tuple[int, int, int, int] | None = None  # priority, position, length, new id
            for position, token in enumerate(symbols):
                for priority, parts, new in merges_from.get(token, ()):  # sorted by priority
                    if best is not None and priority >= best[0]:
                        break
                    if tuple(symbols[position : position + len(parts)]) == parts:
                        best = (priority, position, len(parts), new)
                        break
            if best is None:
                break
            _, position, length, new = best
            symbols[position : position + length] = [new]
        return symbols, token_byte_lengths(symbols, byte_lengths, self._symbol_counts)

    # -- persistence ------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        base = {"family": self.base.family, **self.base.to_dict()}
        return {**super().to_dict(), "knocked_out": list(self.knocked_out), "base": base}

    @classmethod
    def from_dict(cls, body: dict[str, Any]) -> KnockoutTokenizer:
        base_body = body.get("base")
        if not isinstance(base_body, dict) or base_body.get("family") not in BASES:
            raise TokenizerError(f'tokenizer file: field "base" must hold a {" or ".join(BASES)} tokenizer',
                                 code="bad_tokenizer_file", field="base")  # fmt: skip
        base = family_class(base_body["family"]).from_dict(base_body)
        knocked_out = body.get("knocked_out")
        if not isinstance(knocked_out, list):
            raise TokenizerError('tokenizer file: field "knocked_out" must be a list of ids', code="wrong_type",
                                 value=knocked_out, field="knocked_out")  # fmt: skip
        config = body_field(body, "config", dict)
        options = KnockoutOptions.read_saved(config)
        tokenizer = cls(base, knocked_out, options.threshold)
        if tokenizer.options != options:
            raise TokenizerError('tokenizer file: field "config" does not match the options of field "base"',
                                 code="bad_tokenizer_file", field="config")  # fmt: skip
        if body.get("vocab") != tokenizer.vocab:
            raise TokenizerError('tokenizer file: field "vocab" does not match the base without the knocked-out ids',
                                 code="bad_tokenizer_file", field="vocab")  # fmt: skip
        return tokenizer


def blamed_merges(tokenizer: MergeTokenizer, references: Mapping[str, frozenset[int]], threshold: float) -> list[int]:
    """Ids of the merged tokens whose merges join parts across a gold boundary in at least
    ``threshold`` of their applications to the reference words (each word in mid-sentence form)."""
    applications: Counter[int] = Counter()
    bad: Counter[int] = Counter()
    for word, boundaries in references.items():
        text = " " + word
        char_offsets = [0, *accumulate(len(char.encode("utf-8")) for char in text)]
        gold = {char_offsets[boundary + 1] for boundary in boundaries}  # +1: the space before the word
        for pretoken, start in tokenizer.pretokenizer.split_with_offsets(text):
            symbols, byte_lengths = tokenizer._base_symbols(pretoken)
            junctions: list[tuple[int, int]] = []
            tokenizer._apply_merges(symbols, junctions)
            offsets = list(accumulate(byte_lengths, initial=start))  # byte offset before each base symbol
            for token, symbol_index in junctions:
                applications[token] += 1
                bad[token] += offsets[symbol_index] in gold
    return sorted(token for token, count in applications.items() if bad[token] / count >= threshold)


def _checked_references(references: Any) -> dict[str, frozenset[int]]:
    if not isinstance(references, Mapping) or not references:
        raise TokenizerError("bpe-knockout needs references: a non-empty mapping word -> inner boundary offsets",
                             code="bad_references")  # fmt: skip
    checked: dict[str, frozenset[int]] = {}
    for word, boundaries in references.items():
        if not isinstance(word, str) or not word or isinstance(boundaries, (str, bytes)):
            raise TokenizerError(f"bpe-knockout reference {word!r}: expected a word mapped to boundary offsets",
                                 code="bad_references", value=word)  # fmt: skip
        offsets = frozenset(boundaries)
        if not all(isinstance(b, int) and not isinstance(b, bool) and 0 < b < len(word) for b in offsets):
            raise TokenizerError(
                f"bpe-knockout reference {word!r}: boundaries must be character offsets inside the word "
                f"(1..{len(word) - 1}), got {sorted(offsets, key=str)}",
                code="bad_references",
                value=word,
            )
        checked[word] = offsets
    return checked
