"""What char-bpe and byte-bpe share: base symbols + an ordered merge list.

Ids: specials, then the base symbols, then one id per merge in the order
learned (merge ``k`` creates id ``first_merge_id + k``, so a merge's id is
also its rank).  A family only says how a pre-token maps to base symbol ids
(``_base_symbols``) and what each base symbol is.

Encoding modes (``encode_mode``), each applied to one pre-token's base symbols:

``merges`` (default)
    Repeatedly merge the adjacent pair with the lowest rank, every occurrence
    left to right.  This equals applying all merges in training order
    (Sennrich et al. 2016): a merge can only create pairs involving its new
    token, and those all rank later.
``longest-prefix``, ``longest-suffix``, ``longest-token``, ``fewest-tokens``
    The vocabulary-only inference methods of Uzan et al. 2024 over the same
    vocabulary (``bpe.models.inference``); symbols are base symbol ids, so an
    end-of-word marker is matched like any symbol and ``<unk>`` stands alone.
    ``greedy``, this mode's earlier name, is read as ``longest-prefix``.

BPE-dropout (Provilkov et al. 2020, "BPE-Dropout: Simple and Effective
Subword Regularization"), off unless ``dropout`` > 0, stochastic ``merges``
encoding with the vocabulary and training unchanged: at every merge step each
applicable pair occurrence is dropped with probability ``dropout``, the
lowest-ranked remaining one (leftmost on ties) is merged, and the word is
finished when every occurrence was dropped (``dropout = 1`` leaves base
symbols).  Each encode call draws from its own random stream, seeded by
``seed`` and the text, so the same text, seed and tokenizer always give the
same tokens, in any order and process; the occurrences of a pre-token inside
one text are sampled independently; another ``seed`` gives another sample.
"""

from __future__ import annotations

import hashlib
import heapq
import random
from abc import abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from itertools import chain, pairwise
from typing import TYPE_CHECKING, Any

import numpy as np
from typing_extensions import Self

from bpe.base import UNK, TokenizerError
from bpe.models.inference import VocabularyTrie
from bpe.models.trained import EncodedPretoken, TrainedTokenizer, TrainingRequest
from bpe.options import SamplingOptions, body_field
from bpe.training.trainer import ProgressCallback, progress_callback, train_merges

if TYPE_CHECKING:
    from bpe.training.counts import PretokenCounts

_NO_RANK = 1 << 62
# above this many base symbols a pre-token is merged with a heap (see ``_apply_merges``)
_HEAP_FROM = 48
# from this many new pre-tokens in one batch (``encode_texts``, ``encode_words``) on, they are merged in compiled
# code (see ``_encode_pretokens``)
_COMPILED_FROM = 1000


def token_byte_lengths(tokens: list[int], byte_lengths: list[int], symbol_counts: Sequence[int]) -> list[int]:
    """The byte length of each token, from the byte lengths of the base symbols it covers
    (``symbol_counts[token]`` of them)."""
    if len(tokens) == len(byte_lengths):  # nothing merged
        return byte_lengths
    lengths: list[int] = []
    position = 0
    for token in tokens:
        count = symbol_counts[token]
        lengths.append(sum(byte_lengths[position : position + count]))
        position += count
    return lengths


class MergeTokenizer(TrainedTokenizer):
    options: SamplingOptions

    def __init__(
        self,
        *,
        special_tokens: Sequence[str],
        base_pieces: Sequence[str],
        base_bytes: Sequence[bytes],
        merges: Iterable[tuple[int, int]],
        options: SamplingOptions,
    ) -> None:
        self.options = options
        pieces = [*special_tokens, *base_pieces]
        token_bytes = [*(token.encode("utf-8") for token in special_tokens), *base_bytes]
        self.first_merge_id = first_merge = len(pieces)
        first_base = len(special_tokens)
        # number of base symbols under each token; a special (incl. <unk>) stands for one
        self._symbol_counts = symbol_counts = [1] * len(pieces)
        self._ranks: dict[tuple[int, int], int] = {}
        self._merge_pairs: list[tuple[int, int]] = []
        ranks, pairs = self._ranks, self._merge_pairs
        # one pass over tens of thousands of merges: the common case (plain ints in range, new) is
        # tested inline, and only a merge failing it goes to ``_check_merge`` for the exact error
        for new_id, (left, right) in enumerate(merges, first_merge):
            pair = (left, right)
            if not (
                type(left) is int and type(right) is int and first_base <= left < new_id
                and first_base <= right < new_id and pair not in ranks
            ):  # fmt: skip
                self._check_merge(new_id - first_merge, left, right, first_base, new_id)
            ranks[pair] = new_id
            pairs.append(pair)
            pieces.append(pieces[left] + pieces[right])
            token_bytes.append(token_bytes[left] + token_bytes[right])
            symbol_counts.append(symbol_counts[left] + symbol_counts[right])
        super().__init__(pieces, token_bytes, special_tokens, options.pretokenizer, options.normalizer)
        self._trie: VocabularyTrie | None = None
        self._rank_table: tuple[np.ndarray, np.ndarray] | None = None  # ``compiled_ranks``, built on first use

    def _check_merge(self, index: int, left: Any, right: Any, first_base: int, new_id: int) -> None:
        for part in (left, right):
            if isinstance(part, bool) or not isinstance(part, int) or not first_base <= part < new_id:
                raise TokenizerError(
                    f'tokenizer file: field "merges[{index}]" must join two earlier non-special ids '
                    f"(between {first_base} and {new_id - 1}), got {[left, right]!r}",
                    code="bad_tokenizer_file",
                    value=[left, right],
                    field=f"merges[{index}]",
                )
        if (left, right) in self._ranks:
            raise TokenizerError(f'tokenizer file: field "merges[{index}]" repeats the merge {[left, right]!r}',
                                 code="bad_tokenizer_file", value=[left, right], field=f"merges[{index}]")  # fmt: skip

    @property
    def merges(self) -> list[tuple[int, int]]:
        """The merges as (left id, right id), in the order learned."""
        return list(self._merge_pairs)

    @property
    def encode_mode(self) -> str:
        return self.options.encode_mode

    # -- training ---------------------------------------------------------
    @classmethod
    def _train(cls, texts: Iterable[str] | PretokenCounts, request: TrainingRequest) -> Self:
        """Learn merges until the vocabulary (specials + base symbols + merges) has ``vocab_size``
        entries or no pair occurs ``min_frequency`` times.  The options' ``normalizer`` rewrites the
        text before training and encoding (``bpe.pipeline.normalizers``); the encode-time options
        (``encode_mode``, ``dropout``, ``seed``) only change encoding."""
        from bpe.training.counts import training_counts

        settings = request.options
        counts = training_counts(texts, settings.pretokenizer, workers=request.workers, normalizer=settings.normalizer)
        untrained = cls.untrained(counts, request)
        with progress_callback(request.progress, f"{cls.family} merges") as callback:
            merges = untrained._learn_merges(counts, request.vocab_size, callback)
        return untrained.with_merges(merges)

    @classmethod
    @abstractmethod
    def untrained(cls, counts: PretokenCounts, request: TrainingRequest) -> Self:
        """The family's tokenizer with the base symbols training on ``counts`` starts from and no merges
        (a family whose base symbols come from the text checks its vocabulary floor here)."""

    @abstractmethod
    def with_merges(self, merges: Iterable[tuple[int, int]]) -> Self:
        """This tokenizer's specials, base symbols and options, with ``merges``."""

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
            overwrite_words=True,  # the words are made for this call only
        )
        return [(merge.left, merge.right) for merge in merges]

    @abstractmethod
    def _training_words(self, pretoken_counts: PretokenCounts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The counted pre-tokens as the merge kernel's words ``(symbols, offsets, counts)`` of base
        symbol ids.  A base ``<unk>`` (a character outside the alphabet) never takes part in a
        merge: pre-tokens are cut at it, and parts of fewer than two symbols are left out."""

    @abstractmethod
    def base_symbol_tables(self) -> tuple[int, np.ndarray, np.ndarray, int]:
        """How compiled code finds base symbols (``bpe.models.batch_encode``): ``(first byte id, plain, final,
        end)``, either UTF-8 bytes from the first id, or code point lookups plus an end-of-word id."""

    @abstractmethod
    def _merge_keys(self) -> list[str] | list[bytes]:
        """Tie-break key of every current id (see ``bpe.training.trainer``)."""

    # -- encoding ---------------------------------------------------------
    @abstractmethod
    def _base_symbols(self, pretoken: str) -> tuple[list[int], list[int]]:
        """Base symbol ids of ``pretoken`` (``<unk>`` for unknown ones) and the UTF-8 byte length of each."""

    def _encode_pretoken(self, pretoken: str) -> tuple[list[int], list[int]]:
        symbols, byte_lengths = self._base_symbols(pretoken)
        tokens = self._apply_merges(symbols) if self.encode_mode == "merges" else self._segment(symbols)
        return tokens, token_byte_lengths(tokens, byte_lengths, self._symbol_counts)

    def _encode_pretokens(self, pretokens: Sequence[str]) -> list[tuple[list[int], list[int]]]:
        """``_encode_pretoken`` of every pre-token; by merge rank and from ``_COMPILED_FROM`` pre-tokens on, all
        merged in one compiled call (``encode_kernel.merge_words``, the same merges as ``_apply_merges``),
        each token's byte length summed over the base symbols it covers."""
        if self.encode_mode != "merges" or len(pretokens) < _COMPILED_FROM:
            return super()._encode_pretokens(pretokens)
        from bpe.kernels import encode_kernel

        symbols, offsets, symbol_bytes = self._base_symbol_arrays(pretokens)
        tokens, token_offsets = encode_kernel.merge_words(symbols, offsets, *self.compiled_ranks())
        return self._kernel_encodings(tokens, token_offsets, symbol_bytes)

    def _kernel_encodings(self, tokens: np.ndarray, token_offsets: np.ndarray,
                          symbol_bytes: np.ndarray) -> list[EncodedPretoken]:  # fmt: skip
        """(ids, byte lengths) of every pre-token from a kernel's tokens end to end, where each pre-token's start
        (``token_offsets``), and the byte length of every base symbol they cover (``_base_symbol_arrays``)."""
        # the tokens of all pre-tokens cover the base symbols in order: each ends where the running count of
        # base symbols under the tokens so far ends
        ends = np.cumsum(np.asarray(self._symbol_counts, dtype=np.int64)[tokens])
        byte_ends = np.concatenate([[0], np.cumsum(symbol_bytes)])
        byte_lengths = np.diff(byte_ends[ends], prepend=0).tolist()
        ids = tokens.tolist()
        bounds = token_offsets.tolist()
        return [(ids[start:end], byte_lengths[start:end]) for start, end in pairwise(bounds)]

    def compiled_ranks(self) -> tuple[np.ndarray, np.ndarray]:
        """The merges as the compiled kernels' rank table (``encode_kernel.rank_table``), built once."""
        if self._rank_table is None:
            from bpe.kernels import encode_kernel

            merges = np.asarray(self._merge_pairs, dtype=np.int32).reshape(-1, 2)
            self._rank_table = encode_kernel.rank_table(
                np.ascontiguousarray(merges[:, 0]), np.ascontiguousarray(merges[:, 1]), self.first_merge_id
            )
        return self._rank_table

    def _base_symbol_arrays(self, pretokens: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``_base_symbols`` of all ``pretokens`` end to end: the ids (int32), the offsets where the pre-tokens
        start (one more than pre-tokens) and each symbol's UTF-8 byte length."""
        bases = [self._base_symbols(pretoken) for pretoken in pretokens]
        symbols = np.fromiter(chain.from_iterable(ids for ids, _ in bases), dtype=np.int32)
        offsets = np.zeros(len(bases) + 1, dtype=np.int64)
        np.cumsum([len(ids) for ids, _ in bases], out=offsets[1:])
        lengths = np.fromiter(chain.from_iterable(lengths for _, lengths in bases), dtype=np.int64, count=len(symbols))
        return symbols, offsets, lengths

    def _apply_merges(self, symbols: list[int], junctions: list[tuple[int, int]] | None = None) -> list[int]:
        """Merge the lowest-ranked adjacent pair, leftmost first, until none has a rank.

        Merging one occurrence at a time equals merging all occurrences left to
        right: the pairs a merge creates rank later than it, and an overlapping
        occurrence (``a a a``) is destroyed by the merge on its left.  With
        ``junctions``, every merge appends (new id, index of the base symbol
        where its right part starts) to it.  Short pre-tokens are merged by
        scanning the pair list (fastest for a few symbols); long ones with a heap
        of pair ranks over a linked list of symbols, O(n log n) (as Hugging Face
        tokenizers' ``Word::merge_all``); both pick the same pair at every step.
        """
        if len(symbols) > _HEAP_FROM:
            return self._apply_merges_heap(symbols, junctions)
        ranks = self._ranks
        pair_ranks = [ranks.get(pair, _NO_RANK) for pair in pairwise(symbols)]
        starts = list(range(len(symbols))) if junctions is not None else []
        while pair_ranks:
            best = min(pair_ranks)
            if best == _NO_RANK:
                break
            i = pair_ranks.index(best)
            if junctions is not None:
                junctions.append((best, starts.pop(i + 1)))
            symbols[i] = best
            del symbols[i + 1]
            del pair_ranks[i]
            if i > 0:
                pair_ranks[i - 1] = ranks.get((symbols[i - 1], best), _NO_RANK)
            if i < len(pair_ranks):
                pair_ranks[i] = ranks.get((best, symbols[i + 1]), _NO_RANK)
        return symbols

    def _apply_merges_heap(self, symbols: list[int], junctions: list[tuple[int, int]] | None = None) -> list[int]:
        """``_apply_merges`` in O(n log n): a heap of (rank, position of the pair's left symbol).

        A symbol keeps the position of its first base symbol, so the smallest position among
        equal ranks is the leftmost pair.  Entries made stale by a merge stay in the heap and are
        skipped when popped: the symbol at the position is gone or its pair has another rank.
        """
        ranks = self._ranks
        n = len(symbols)
        following = list(range(1, n + 1))  # n: no next symbol
        preceding = list(range(-1, n - 1))
        alive = [True] * n
        # an entry is rank << 32 | position: one int compares faster than a tuple
        heap = [rank << 32 | p for p in range(n - 1) if (rank := ranks.get((symbols[p], symbols[p + 1]))) is not None]
        heapq.heapify(heap)
        while heap:
            entry = heapq.heappop(heap)
            rank, p = entry >> 32, entry & 0xFFFFFFFF
            q = following[p]
            if not alive[p] or q >= n or ranks.get((symbols[p], symbols[q])) != rank:
                continue
            if junctions is not None:
                junctions.append((rank, q))
            symbols[p] = rank
            alive[q] = False
            after = following[q]
            following[p] = after
            if after < n:
                preceding[after] = p
                right_rank = ranks.get((rank, symbols[after]))
                if right_rank is not None:
                    heapq.heappush(heap, right_rank << 32 | p)
            before = preceding[p]
            if before >= 0:
                left_rank = ranks.get((symbols[before], rank))
                if left_rank is not None:
                    heapq.heappush(heap, left_rank << 32 | before)
        return [symbol for symbol, kept in zip(symbols, alive, strict=True) if kept]

    def _segment(self, symbols: list[int]) -> list[int]:
        """One of the vocabulary-only inference methods (``bpe.models.inference``) over base symbol ids."""
        if self._trie is None:
            self._trie = self._build_trie()
        # <unk> is in the trie as a one-symbol entry, so no segment is ever UNMATCHED
        return [token for token, _ in self._trie.segment(symbols, self.encode_mode, self.options.tie_break)]

    def _build_trie(self) -> VocabularyTrie:
        """Base-symbol sequence -> id for every non-special token and ``<unk>`` (lowest id if two spell the same)."""
        expansions: list[tuple[int, ...]] = [(i,) for i in range(self.first_merge_id)]
        for left, right in self._merge_pairs:
            expansions.append(expansions[left] + expansions[right])
        unk = self._special_ids[UNK]
        first_base = len(self.special_tokens)
        return VocabularyTrie([((unk,), unk), *((expansions[i], i) for i in range(first_base, len(expansions)))])

    # -- BPE-dropout ------------------------------------------------------
    def _sampling_stream(self, text: str) -> random.Random | None:
        # a str seed is hashed with SHA-512 by `random`: the same on every platform and run
        return random.Random(self._sampling_seed(text)) if self.samples else None

    def _sampling_seed(self, text: str) -> str:
        return f"{self.options.seed}\x00{text}"

    def _sample_texts(self, texts: Sequence[str], pretokens: Sequence[list[str]]) -> list[list[EncodedPretoken]]:
        """``_sample_pretoken`` of every pre-token of every text; from ``_COMPILED_FROM`` pre-tokens on, all in one
        compiled call (``encode_kernel.sample_words``, the same draws from the same Mersenne Twister streams)."""
        flat = list(chain.from_iterable(pretokens))
        if len(flat) < _COMPILED_FROM:
            return super()._sample_texts(texts, pretokens)
        from bpe.kernels import encode_kernel

        symbols, offsets, symbol_bytes = self._base_symbol_arrays(flat)
        text_offsets = np.zeros(len(texts) + 1, dtype=np.int64)
        np.cumsum([len(pieces) for pieces in pretokens], out=text_offsets[1:])
        # the integer ``random.Random(seed_string)`` seeds with: the string's UTF-8 bytes, then their SHA-512
        keys = [seed.encode() for seed in map(self._sampling_seed, texts)]
        seeds = np.frombuffer(b"".join(key + hashlib.sha512(key).digest() for key in keys), dtype=np.uint8).copy()
        seed_offsets = np.zeros(len(texts) + 1, dtype=np.int64)
        np.cumsum([len(key) + hashlib.sha512().digest_size for key in keys], out=seed_offsets[1:])
        dropout = float(self.options.dropout)
        tokens, token_offsets = encode_kernel.sample_words(symbols, offsets, text_offsets, seeds, seed_offsets,
                                                           *self.compiled_ranks(), dropout)  # fmt: skip
        encoded = self._kernel_encodings(tokens, token_offsets, symbol_bytes)
        return [encoded[start:end] for start, end in pairwise(text_offsets.tolist())]

    def _sample_pretoken(self, pretoken: str, stream: random.Random) -> tuple[list[int], list[int]]:
        symbols, byte_lengths = self._base_symbols(pretoken)
        ranks, dropout = self._ranks, self.options.dropout
        while len(symbols) > 1:
            best, best_index = _NO_RANK, -1
            for i, pair in enumerate(pairwise(symbols)):
                rank = ranks.get(pair, _NO_RANK)
                # every applicable occurrence draws once per step, whether or not it could win
                if rank != _NO_RANK and stream.random() >= dropout and rank < best:
                    best, best_index = rank, i
            if best_index < 0:
                break
            symbols[best_index : best_index + 2] = [best]
        return symbols, token_byte_lengths(symbols, byte_lengths, self._symbol_counts)

    # -- persistence ------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "merges": [list(pair) for pair in self._merge_pairs]}

    @staticmethod
    def _read_merges(body: Mapping[str, Any]) -> list[tuple[int, int]]:
        merges = body_field(body, "merges", list)
        for index, pair in enumerate(merges):
            if not isinstance(pair, list) or len(pair) != 2:
                raise TokenizerError(f'tokenizer file: field "merges[{index}]" must be a pair of ids, got {pair!r}',
                                     code="bad_tokenizer_file", value=pair, field=f"merges[{index}]")  # fmt: skip
        return [tuple(pair) for pair in merges]

    def _check_saved_vocab(self, vocab: Sequence[str]) -> None:
        """The saved pieces must be the ones the merges rebuild (catches hand-edited files)."""
        for token_id, (saved, rebuilt) in enumerate(zip(vocab, self._pieces, strict=False)):
            if saved != rebuilt:
                raise TokenizerError(
                    f'tokenizer file: field "vocab[{token_id}]" is {saved!r} but its merge spells {rebuilt!r}',
                    code="bad_tokenizer_file",
                    value=saved,
                    field=f"vocab[{token_id}]",
                )
        if len(vocab) != len(self._pieces):
            raise TokenizerError(
                f'tokenizer file: field "vocab" has {len(vocab)} entries, the specials, base symbols and merges '
                f"make {len(self._pieces)}",
                code="bad_tokenizer_file",
                value=len(vocab),
                field="vocab",
            )
