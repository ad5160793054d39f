"""Inference methods: segmenting a pre-token with a fixed vocabulary, whatever built it.

Uzan et al. 2024 ("Greed is All You Need: An Evaluation of Tokenizer Inference
Methods", ACL) separate a tokenizer's *vocabulary* from its *inference method*,
the rule that picks one segmentation of a word among those the vocabulary
allows.  Besides applying a BPE vocabulary's merges (``bpe.models.merge_tokenizer``),
they evaluate these methods, implemented here over a trie of the vocabulary:

``longest-prefix``
    Take the longest vocabulary entry that starts the remaining symbols, then
    repeat on the rest: greedy longest match, WordPiece's rule (Wu et al.
    2016).  Files saved with the older name ``greedy`` load as this.
``longest-suffix``
    The mirror image: the longest entry that ends the remaining symbols,
    right to left.
``longest-token``
    Take the longest entry found anywhere in the symbols (the leftmost one if
    several are equally long), then segment what lies left and right of it
    the same way.
``fewest-tokens``
    A segmentation with the fewest tokens (Uzan et al.'s "least tokens"),
    found by dynamic programming over the trie.  **Tie-break** (``tie_break``,
    one of :data:`TIE_BREAKS`) among the segmentations with the fewest tokens:

    ``longest-first`` (default)
        the one whose first token is longest, then whose second token is
        longest, and so on (token lengths lexicographically largest read left
        to right);
    ``longest-last``
        the mirror image: the longest last token, then the longest one before
        it, and so on.  This is the tie-break of Uzan et al.'s implementation
        (github.com/MeLeLBGU/tokenizers_intrinsic_benchmark): its least-tokens
        models (``*_equal_like``) are Hugging Face ``tokenizers`` ``Unigram``
        models whose tokens all have the same score, and that Viterbi search
        (as sentencepiece's) scans start positions left to right and replaces
        the best path into a position only by a strictly better one, so among
        equally short paths into a position the one whose last token starts
        earliest, i.e. is longest, is kept.

"Symbols" are whatever a family's vocabulary is spelled in: base symbol ids
for char-bpe and byte-bpe (characters or bytes, end-of-word markers
included), characters for sentencepiece pieces.  Length is counted in
symbols.  A symbol that is not itself a vocabulary entry (an unknown
character) and starts no longer entry becomes a segment of its own with
token :data:`UNMATCHED`; the family maps it as it always does (``<unk>``,
byte-fallback pieces).  Every method works on one pre-token at a time, so
no token crosses a pre-token boundary.

``covered_first`` (``fewest-tokens`` only): a family that refuses a word it
cannot cover with entries (WordPiece's ``<unk>`` for the whole word) needs
the fewest tokens among the segmentations made of entries alone, whenever
one exists.  With it, an unmatched symbol counts as more tokens than the
symbols are long, so any segmentation into entries beats any with an
unmatched symbol; the greedy methods never choose, so it does not apply to them.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence

INFERENCE_METHODS = ("longest-prefix", "longest-suffix", "longest-token", "fewest-tokens")
#: tie-breaks of ``fewest-tokens`` among its segmentations with equally few tokens (module docstring)
TIE_BREAKS = ("longest-first", "longest-last")
#: token of a one-symbol segment that no vocabulary entry covers
UNMATCHED = -1

#: a segmentation: (token id or UNMATCHED, number of symbols it covers), in order
Segmentation = list[tuple[int, int]]


class VocabularyTrie:
    """Every vocabulary entry (a sequence of symbols -> token id) in a forward and a backward trie.

    Nodes are indices into ``_children`` (symbol -> child node) and ``_tokens``
    (the token ending at that node, or UNMATCHED).  When two entries spell the
    same symbols, the first one given wins.
    """

    def __init__(self, entries: Iterable[tuple[Sequence[Hashable], int]]) -> None:
        self._forward: list[dict[Hashable, int]] = [{}]
        self._forward_tokens = [UNMATCHED]
        self._backward: list[dict[Hashable, int]] = [{}]
        self._backward_tokens = [UNMATCHED]
        for symbols, token in entries:
            if symbols:
                _insert(self._forward, self._forward_tokens, symbols, token)
                _insert(self._backward, self._backward_tokens, symbols[::-1], token)

    def matches_from(self, symbols: Sequence[Hashable], start: int, stop: int) -> list[tuple[int, int]]:
        """Every entry spelled by ``symbols[start:end]`` with ``end <= stop``, as (end, token), shortest first."""
        children, tokens = self._forward, self._forward_tokens
        found: list[tuple[int, int]] = []
        node = 0
        for position in range(start, stop):
            node = children[node].get(symbols[position], -1)
            if node < 0:
                break
            if tokens[node] != UNMATCHED:
                found.append((position + 1, tokens[node]))
        return found

    def longest_ending_at(self, symbols: Sequence[Hashable], end: int) -> tuple[int, int]:
        """The longest entry spelled by ``symbols[start:end]``, as (start, token); (end - 1, UNMATCHED) if none."""
        children, tokens = self._backward, self._backward_tokens
        best = (end - 1, UNMATCHED)
        node = 0
        for position in range(end - 1, -1, -1):
            node = children[node].get(symbols[position], -1)
            if node < 0:
                break
            if tokens[node] != UNMATCHED:
                best = (position, tokens[node])
        return best

    # -- the methods --------------------------------------------------------
    def segment(
        self, symbols: Sequence[Hashable], method: str, tie_break: str = "longest-first", *, covered_first: bool = False
    ) -> Segmentation:
        """Segment ``symbols`` with one of :data:`INFERENCE_METHODS` (``tie_break``, ``covered_first``: of
        ``fewest-tokens``, module docstring)."""
        if method == "longest-prefix":
            return self.longest_prefix(symbols)
        if method == "longest-suffix":
            return self.longest_suffix(symbols)
        if method == "longest-token":
            return self.longest_token(symbols)
        if method == "fewest-tokens":
            if tie_break == "longest-first":
                return self.fewest_tokens(symbols, covered_first=covered_first)
            return self.fewest_tokens_last(symbols, covered_first=covered_first)
        raise ValueError(f"unknown inference method {method!r}")

    def longest_prefix(self, symbols: Sequence[Hashable]) -> Segmentation:
        segments: Segmentation = []
        start, length = 0, len(symbols)
        while start < length:
            matches = self.matches_from(symbols, start, length)
            end, token = matches[-1] if matches else (start + 1, UNMATCHED)
            segments.append((token, end - start))
            start = end
        return segments

    def longest_suffix(self, symbols: Sequence[Hashable]) -> Segmentation:
        segments: Segmentation = []
        end = len(symbols)
        while end > 0:
            start, token = self.longest_ending_at(symbols, end)
            segments.append((token, end - start))
            end = start
        segments.reverse()
        return segments

    def longest_token(self, symbols: Sequence[Hashable]) -> Segmentation:
        # the longest match starting at each position, over the whole pre-token; a sub-range
        # [low, high) may only use matches ending by `high`, so all matches are kept
        matches = [self.matches_from(symbols, start, len(symbols)) for start in range(len(symbols))]
        pieces: dict[int, tuple[int, int]] = {}  # start -> (token, length)
        pending = [(0, len(symbols))]
        while pending:
            low, high = pending.pop()
            best_start, best_end, best_token = low, low + 1, UNMATCHED
            for start in range(low, high):
                for end, token in reversed(matches[start]):
                    if end <= high:
                        if end - start > best_end - best_start or best_token == UNMATCHED:
                            best_start, best_end, best_token = start, end, token
                        break
            if best_token == UNMATCHED:  # no entry at all in [low, high): every symbol is unknown
                pieces.update((start, (UNMATCHED, 1)) for start in range(low, high))
                continue
            pieces[best_start] = (best_token, best_end - best_start)
            pending.extend(part for part in ((low, best_start), (best_end, high)) if part[0] < part[1])
        return [pieces[start] for start in sorted(pieces)]

    def fewest_tokens(self, symbols: Sequence[Hashable], *, covered_first: bool = False) -> Segmentation:
        length = len(symbols)
        unmatched_cost = length + 1 if covered_first else 1
        matches = [self.matches_from(symbols, start, length) for start in range(length)]
        # fewest[i]: the fewest tokens covering symbols[i:]; a symbol that is no entry may stand alone
        fewest = [0] * (length + 1)
        for start in range(length - 1, -1, -1):
            options = [1 + fewest[end] for end, _ in matches[start]]
            if not matches[start] or matches[start][0][0] != start + 1:
                options.append(unmatched_cost + fewest[start + 1])
            fewest[start] = min(options)
        segments: Segmentation = []
        start = 0
        while start < length:
            # the longest first token that still allows the fewest tokens
            chosen = next(((end, token) for end, token in reversed(matches[start]) if fewest[end] == fewest[start] - 1),
                          (start + 1, UNMATCHED))  # fmt: skip
            segments.append((chosen[1], chosen[0] - start))
            start = chosen[0]
        return segments

    def fewest_tokens_last(self, symbols: Sequence[Hashable], *, covered_first: bool = False) -> Segmentation:
        """``fewest-tokens`` with the ``longest-last`` tie-break: the fewest tokens covering each prefix,
        then back from the end, the longest last token that still allows the fewest tokens."""
        length = len(symbols)
        costs = {UNMATCHED: length + 1 if covered_first else 1}  # any other token counts 1
        # fewest[i]: the fewest tokens covering symbols[:i]; ending[i]: (start, token) of each entry ending at i
        ending: list[list[tuple[int, int]]] = [[] for _ in range(length + 1)]
        for start in range(length):
            matches = self.matches_from(symbols, start, length)
            if not matches or matches[0][0] != start + 1:  # a symbol that is no entry may stand alone
                ending[start + 1].append((start, UNMATCHED))
            for end, token in matches:
                ending[end].append((start, token))
        fewest = [0] * (length + 1)
        for end in range(1, length + 1):
            fewest[end] = min(fewest[start] + costs.get(token, 1) for start, token in ending[end])
        segments: Segmentation = []
        end = length
        while end > 0:
            # ending[end] is in order of start, so the first that allows the fewest tokens is the longest
            start, token = next((start, token) for start, token in ending[end]
                                if fewest[start] == fewest[end] - costs.get(token, 1))  # fmt: skip
            segments.append((token, end - start))
            end = start
        segments.reverse()
        return segments


def _insert(children: list[dict[Hashable, int]], tokens: list[int], symbols: Sequence[Hashable], token: int) -> None:
    node = 0
    for symbol in symbols:
        child = children[node].get(symbol)
        if child is None:
            child = children[node][symbol] = len(children)
            children.append({})
            tokens.append(UNMATCHED)
        node = child
    if tokens[node] == UNMATCHED:
        tokens[node] = token
