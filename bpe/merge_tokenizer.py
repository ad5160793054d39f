"""What char-bpe and byte-bpe share: base symbols + an ordered merge list.

Ids: specials, then the base symbols, then one id per merge in the order
learned (merge ``k`` creates id ``first_merge_id + k``, so a merge's id is
also its rank).  A family only says how a pre-token maps to base symbol ids
(``_base_symbols``) and what each base symbol is.

Encoding modes:

``merges`` (default)
    Per pre-token, repeatedly merge the adjacent pair with the lowest rank,
    every occurrence left to right.  This equals applying all merges in
    training order, one merge after another: a merge can only create pairs
    involving its new token, and those all rank later.
``greedy``
    An ablation: greedy longest match of the pre-token's base symbols against
    the whole vocabulary, left to right (like BERT's WordPiece encoder, here
    over a BPE vocabulary).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from itertools import pairwise
from typing import TYPE_CHECKING, Any

import numpy as np

from bpe.base import TokenizerError
from bpe.options import ByteBPEOptions, CharBPEOptions, body_field
from bpe.trained import TrainedTokenizer
from bpe.trainer import ProgressCallback, train_merges

if TYPE_CHECKING:
    from bpe.counts import PretokenCounts

_NO_RANK = 1 << 62


class MergeTokenizer(TrainedTokenizer):
    options: CharBPEOptions | ByteBPEOptions

    def __init__(
        self,
        *,
        special_tokens: Sequence[str],
        base_pieces: Sequence[str],
        base_bytes: Sequence[bytes],
        merges: Iterable[tuple[int, int]],
        options: CharBPEOptions | ByteBPEOptions,
    ) -> None:
        self.options = options
        pieces = [*special_tokens, *base_pieces]
        token_bytes = [*(token.encode("utf-8") for token in special_tokens), *base_bytes]
        self.first_merge_id = len(pieces)
        # number of base symbols under each token; a special (incl. <unk>) stands for one
        self._symbol_counts = [1] * len(pieces)
        self._ranks: dict[tuple[int, int], int] = {}
        self._merge_pairs: list[tuple[int, int]] = []
        for left, right in merges:
            new_id = len(pieces)
            self._check_merge(len(pieces) - self.first_merge_id, left, right, len(special_tokens), new_id)
            self._ranks[left, right] = new_id
            self._merge_pairs.append((left, right))
            pieces.append(pieces[left] + pieces[right])
            token_bytes.append(token_bytes[left] + token_bytes[right])
            self._symbol_counts.append(self._symbol_counts[left] + self._symbol_counts[right])
        super().__init__(pieces, token_bytes, special_tokens, options.pretokenizer)
        self._greedy_table: dict[tuple[int, ...], int] | None = None
        self._greedy_longest = 0

    def _check_merge(self, index: int, left: Any, right: Any, first_base: int, new_id: int) -> None:
        for part in (left, right):
            if isinstance(part, bool) or not isinstance(part, int) or not first_base <= part < new_id:
                raise TokenizerError(
                    f'tokenizer file: field "merges[{index}]" must join two earlier non-special ids '
                    f"(between {first_base} and {new_id - 1}), got {[left, right]!r}"
                )
        if (left, right) in self._ranks:
            raise TokenizerError(f'tokenizer file: field "merges[{index}]" repeats the merge {[left, right]!r}')

    @property
    def merges(self) -> list[tuple[int, int]]:
        """The merges as (left id, right id), in the order learned."""
        return list(self._merge_pairs)

    @property
    def encode_mode(self) -> str:
        return self.options.encode_mode

    def with_encode_mode(self, encode_mode: str) -> MergeTokenizer:
        """The same vocabulary and merges, encoding in ``encode_mode`` ("merges" or "greedy")."""
        clone = self._fresh_copy()
        clone.options = self.options.replaced(self.family, encode_mode=encode_mode)
        return clone

    # -- training ---------------------------------------------------------
    def _learn_merges(
        self, pretoken_counts: PretokenCounts, vocab_size: int, progress: ProgressCallback | None
    ) -> list[tuple[int, int]]:
        """Merges learned on the counted pre-tokens, called on this family's tokenizer with its
        base symbols but no merges yet."""
        merges = train_merges(
            self._training_words(pretoken_counts),
            self._merge_keys(),
            vocab_size - self.vocab_size,
            min_frequency=self.options.min_frequency,
            progress=progress,
        )
        return [(merge.left, merge.right) for merge in merges]

    @abstractmethod
    def _training_words(self, pretoken_counts: PretokenCounts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The counted pre-tokens as the merge kernel's words ``(symbols, offsets, counts)`` of base
        symbol ids.  A base ``<unk>`` (a character outside the alphabet) never takes part in a
        merge: pre-tokens are cut at it, and parts of fewer than two symbols are left out."""

    @abstractmethod
    def base_symbol_tables(self) -> tuple[int, np.ndarray, np.ndarray, int]:
        """How compiled code finds base symbols (``bpe.batch_encode``): ``(first byte id, plain, final,
        end)``, either UTF-8 bytes from the first id, or code point lookups plus an end-of-word id."""

    @abstractmethod
    def _merge_keys(self) -> list[str] | list[bytes]:
        """Tie-break key of every current id (see ``bpe.trainer``)."""

    # -- encoding ---------------------------------------------------------
    @abstractmethod
    def _base_symbols(self, pretoken: str) -> tuple[list[int], list[int]]:
        """Base symbol ids of ``pretoken`` (``<unk>`` for unknown ones) and the UTF-8 byte length of each."""

    def _encode_pretoken(self, pretoken: str) -> tuple[list[int], list[int]]:
        symbols, byte_lengths = self._base_symbols(pretoken)
        tokens = self._apply_merges(symbols) if self.encode_mode == "merges" else self._greedy(symbols)
        if len(tokens) == len(byte_lengths):  # nothing merged
            return tokens, byte_lengths
        lengths: list[int] = []
        position = 0
        for token in tokens:
            count = self._symbol_counts[token]
            lengths.append(sum(byte_lengths[position : position + count]))
            position += count
        return tokens, lengths

    def _apply_merges(self, symbols: list[int]) -> list[int]:
        """Merge the lowest-ranked adjacent pair, leftmost first, until none has a rank.

        Merging one occurrence at a time equals merging all occurrences left to
        right: the pairs a merge creates rank later than it, and an overlapping
        occurrence (``a a a``) is destroyed by the merge on its left.
        """
        ranks = self._ranks
        pair_ranks = [ranks.get(pair, _NO_RANK) for pair in pairwise(symbols)]
        while pair_ranks:
            best = min(pair_ranks)
            if best == _NO_RANK:
                break
            i = pair_ranks.index(best)
            symbols[i] = best
            del symbols[i + 1]
            del pair_ranks[i]
            if i > 0:
                pair_ranks[i - 1] = ranks.get((symbols[i - 1], best), _NO_RANK)
            if i < len(pair_ranks):
                pair_ranks[i] = ranks.get((best, symbols[i + 1]), _NO_RANK)
        return symbols

    def _greedy(self, symbols: list[int]) -> list[int]:
        if self._greedy_table is None:
            self._greedy_table, self._greedy_longest = self._build_greedy_table()
        table, longest = self._greedy_table, self._greedy_longest
        tokens: list[int] = []
        i, length = 0, len(symbols)
        while i < length:
            for end in range(min(length, i + longest), i, -1):
                token = table.get(tuple(symbols[i:end]))
                if token is not None:
                    tokens.append(token)
                    i = end
                    break
            else:  # <unk>: in no vocabulary entry
                tokens.append(symbols[i])
                i += 1
        return tokens

    def _build_greedy_table(self) -> tuple[dict[tuple[int, ...], int], int]:
        """Base-symbol sequence -> id for every non-special token (lowest id if two spell the same)."""
        first_base = len(self.special_tokens)
        expansions: list[tuple[int, ...]] = [(i,) for i in range(self.first_merge_id)]
        for left, right in self._merge_pairs:
            expansions.append(expansions[left] + expansions[right])
        table: dict[tuple[int, ...], int] = {}
        for token_id in range(first_base, len(expansions)):
            table.setdefault(expansions[token_id], token_id)
        return table, max(map(len, expansions))

    # -- persistence ------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "merges": [list(pair) for pair in self._merge_pairs]}

    @staticmethod
    def _read_merges(body: Mapping[str, Any]) -> list[tuple[int, int]]:
        merges = body_field(body, "merges", list)
        for index, pair in enumerate(merges):
            if not isinstance(pair, list) or len(pair) != 2:
                raise TokenizerError(f'tokenizer file: field "merges[{index}]" must be a pair of ids, got {pair!r}')
        return [tuple(pair) for pair in merges]

    def _check_saved_vocab(self, vocab: Sequence[str]) -> None:
        """The saved pieces must be the ones the merges rebuild (catches hand-edited files)."""
        for token_id, (saved, rebuilt) in enumerate(zip(vocab, self._pieces, strict=False)):
            if saved != rebuilt:
                raise TokenizerError(
                    f'tokenizer file: field "vocab[{token_id}]" is {saved!r} but its merge spells {rebuilt!r}'
                )
        if len(vocab) != len(self._pieces):
            raise TokenizerError(
                f'tokenizer file: field "vocab" has {len(vocab)} entries, the specials, base symbols and merges '
                f"make {len(self._pieces)}"
            )
