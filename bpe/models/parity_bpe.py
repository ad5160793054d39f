"""parity-bpe: parity-aware byte-level BPE (Foroutan et al. 2025).

Foroutan, Meister, Paul, Niklaus, Ahmadi, Bosselut and Sennrich 2025, "Parity-Aware Byte-Pair Encoding:
Improving Cross-lingual Fairness in Tokenization" (arXiv 2508.04796), as its reference code does it
(``parity_aware_learn_bpe.py`` of github.com/swiss-ai/parity-aware-bpe).  ONE byte-level vocabulary is
learned from several languages' training text, with a multi-parallel development set (the same sentences in
every language, line-aligned).  At every merge step:

1. the **worst-compressed language** is the one whose dev text is currently the most tokens.  The dev sets
   are parallel, so every language's dev text says the same thing and the raw token totals are comparable
   (the reference code's ``lengths``; no per-language normalisation).  Before any merge a language's total
   is its dev text's UTF-8 bytes;
2. the merge is the pair most frequent in **that language's** training pre-token counts (pairs never cross a
   pre-token), applied to every language's text and dev text alike;
3. training stops at ``vocab_size``, or when that language's best pair occurs fewer than ``min_frequency``
   times (as the reference code stops, even if other languages still have frequent pairs).

Options beyond byte-bpe's (the paper's variants, as its code defines them):

``global_merges`` (hybrid parity-aware BPE)
    the first ``global_merges`` merges are plain BPE on all languages' counts summed (byte-bpe on the
    concatenated training text), the parity-driven choice only after them.
``variant = "window"`` (moving-window balancing)
    a language may be chosen at most ``window_alpha / languages`` of the last ``window_size`` parity-driven
    steps: the languages are tried from the worst-compressed down, and the first under its share wins.

Tie-breaks, all deterministic: languages with the same dev total -> the one whose name sorts first (code
points); pairs with the same count -> byte-bpe's rule (``bpe.training.trainer``): the smallest
``(bytes of left, bytes of right)``, then the smallest ids.  (The reference code keeps the first language in
its input order and the largest pair string; the language names' order makes the result independent of the
mappings' order, and the pair rule makes one language give exactly byte-bpe's merges.)

The tokenizer trained is a byte-bpe tokenizer under another family name: the same encoding (merges in the
order learned), saving and loading.  ``train`` refuses plain text; ``train_parallel`` takes per-language text.
Training is incremental: pair counts per language over the distinct pre-tokens, updated after each merge
only where the merged pair occurs (an index pair -> pre-tokens), the best pair of each language from a
max-heap with lazy invalidation, and the dev pre-tokens merged alongside, so each language's dev total is a
running sum.  ``tests/bpe/naive_parity_bpe.py`` recounts everything at every step; the tests compare both.
"""

from __future__ import annotations

import heapq
from collections import Counter, defaultdict, deque
from collections.abc import Iterable, Mapping, Sequence
from itertools import pairwise
from typing import Annotated, Any, Literal, NamedTuple

from pydantic import Field, model_validator
from typing_extensions import Self

from bpe.base import FamilyFacts, TokenizerError
from bpe.models.byte_bpe import ByteBPEOptions, ByteBPETokenizer
from bpe.training.counts import PretokenCounts
from bpe.training.trainer import ProgressCallback, progress_callback
from bpe.validation import NonNegativeInt, PositiveInt, table_rule

#: the window options' defaults: the reference code's (``--window-size 100 --alpha 2``)
WINDOW_SIZE, WINDOW_ALPHA = 100, 2


class ParityBPEOptions(ByteBPEOptions):
    variant: Annotated[
        Literal["base", "window"],
        Field(description="parity-bpe: base (the worst-compressed language every step) or window (moving-window "
                          "balancing: no language above window_alpha/languages of the last window_size steps)"),
    ] = "base"  # fmt: skip
    window_size: Annotated[PositiveInt, Field(description="parity-bpe window variant: steps in the window")] = (
        WINDOW_SIZE
    )
    window_alpha: Annotated[
        PositiveInt,
        Field(description="parity-bpe window variant: a language's most steps in the window, in units of "
                          "window_size/languages"),
    ] = WINDOW_ALPHA  # fmt: skip
    global_merges: Annotated[
        NonNegativeInt,
        Field(description="parity-bpe: the first N merges by the frequency over all languages (hybrid variant)"),
    ] = 0

    @model_validator(mode="after")
    def _window_options_with_the_window_variant(self) -> Self:
        if self.variant != "window":
            for name, default in (("window_size", WINDOW_SIZE), ("window_alpha", WINDOW_ALPHA)):
                if getattr(self, name) != default:
                    raise table_rule(f"{name} applies to variant 'window' only, not {self.variant!r}", value=name)
        return self


class ParityMerges(NamedTuple):
    """What ``learn_parity_merges`` learned: the merges in order, the column each was chosen by (a language's
    index, or the number of languages for a global merge) and every language's dev tokens after them all."""

    merges: list[tuple[int, int]]
    columns: list[int]
    dev_tokens: list[int]


def _merged(word: list[int], left: int, right: int, new: int) -> list[int] | None:
    """``word`` with every ``left right``, left to right, replaced by ``new``; None when it holds none."""
    merged: list[int] | None = None
    copied = search = 0
    last = len(word) - 1
    while True:
        try:
            at = word.index(left, search, last)  # (C speed: most words hold the pair once, if at all)
        except ValueError:
            break
        if word[at + 1] != right:
            search = at + 1
            continue
        if merged is None:
            merged = word[:at]
        else:
            merged.extend(word[copied:at])
        merged.append(new)
        copied = search = at + 2
    if merged is not None:
        merged.extend(word[copied:])
    return merged


def learn_parity_merges(
    words: Sequence[Sequence[int]],
    train_counts: Sequence[Sequence[int]],
    dev_counts: Sequence[Sequence[int]],
    keys: Sequence[bytes],
    max_merges: int,
    *,
    min_frequency: int = 2,
    variant: str = "base",
    window_size: int = WINDOW_SIZE,
    window_alpha: int = WINDOW_ALPHA,
    global_merges: int = 0,
    progress: ProgressCallback | None = None,
) -> ParityMerges:
    """Up to ``max_merges`` parity-aware merges (module docstring) over distinct pre-tokens.

    ``words[w]``: pre-token ``w`` as base symbol ids (every pre-token of the training and the dev text);
    ``train_counts[w][l]`` / ``dev_counts[w][l]``: its count in language ``l``'s training / dev text, the
    languages in tie-break order; ``keys[i]``: the bytes of symbol ``i`` (merge ``k`` makes id
    ``len(keys) + k``).
    """
    languages = len(train_counts[0]) if train_counts else 0
    columns = languages + 1 if global_merges else languages  # the last: all languages summed
    symbols = [list(word) for word in words]
    # each pre-token's non-zero counts as (column, count) and (language, count): most are one language's
    weights: list[tuple[tuple[int, int], ...] | None] = []
    for counts in train_counts:
        weight = tuple(counts) + ((sum(counts),) if global_merges else ())
        weights.append(tuple((column, count) for column, count in enumerate(weight) if count) or None)
    dev = [tuple((language, count) for language, count in enumerate(counts) if count) or None for counts in dev_counts]
    keys = list(keys)
    pair_counts: list[dict[tuple[int, int], int]] = [{} for _ in range(columns)]
    where: defaultdict[tuple[int, int], set[int]] = defaultdict(set)
    dev_tokens = [0] * languages
    for index, word in enumerate(symbols):
        pairs = Counter(pairwise(word))
        for pair in pairs:
            where[pair].add(index)
        for column, count in weights[index] or ():
            table = pair_counts[column]
            for pair, times in pairs.items():
                table[pair] = table.get(pair, 0) + times * count
        for language, count in dev[index] or ():
            dev_tokens[language] += count * len(word)
    # a max-heap per column of (-count, key of left, key of right, left, right): the tie-break in the order
    heaps = [[(-count, keys[a], keys[b], a, b) for (a, b), count in table.items()] for table in pair_counts]
    for heap in heaps:
        heapq.heapify(heap)
    recent: deque[int] = deque()
    in_window: Counter[int] = Counter()
    merges: list[tuple[int, int]] = []
    chosen: list[int] = []
    while len(merges) < max_merges and languages:
        if len(merges) < global_merges:
            column = languages
        else:
            worst_first = sorted(range(languages), key=lambda language: (-dev_tokens[language], language))
            column = worst_first[0]
            if variant == "window":  # the first under its share of the window (one always is: alpha >= 1)
                column = next(language for language in worst_first
                              if in_window[language] * languages <= window_alpha * window_size)  # fmt: skip
                recent.append(column)
                in_window[column] += 1
                if len(recent) > window_size:
                    in_window[recent.popleft()] -= 1
        best, count = _best_pair(heaps[column], pair_counts[column], keys)
        if best is None or count < min_frequency:
            break
        left, right = best
        new = len(keys)
        keys.append(keys[left] + keys[right])
        merges.append(best)
        chosen.append(column)
        created: set[tuple[int, int]] = set()
        for index in where.pop(best):
            old = symbols[index]
            word = _merged(old, left, right, new)
            if word is None:  # the index is not pruned when a pair disappears from a word
                continue
            symbols[index] = word
            weight = weights[index]
            if weight is None:  # a pre-token of the dev text only: indexed, counted nowhere
                for pair in pairwise(word):
                    if new in pair:
                        where[pair].add(index)
            else:
                change = Counter(pairwise(word))
                change.subtract(pairwise(old))
                for pair, times in change.items():
                    if times:
                        for column_of, count_in in weight:
                            table = pair_counts[column_of]
                            table[pair] = table.get(pair, 0) + times * count_in
                        if times > 0:  # a pair holding the new id
                            where[pair].add(index)
                            created.add(pair)
            if dev[index] is not None:
                shrink = len(old) - len(word)
                for language, count_in in dev[index]:  # type: ignore[union-attr]
                    dev_tokens[language] -= shrink * count_in
        for table in pair_counts:
            table.pop(best, None)
        # a pair's count only grows in the merge that makes its newer symbol: pushed once, here
        for pair in created:
            a, b = pair
            for table, heap in zip(pair_counts, heaps, strict=True):
                count = table.get(pair, 0)
                if count > 0:
                    heapq.heappush(heap, (-count, keys[a], keys[b], a, b))
        if progress is not None:
            progress(len(merges), max_merges)
    return ParityMerges(merges, chosen, dev_tokens)


def _best_pair(
    heap: list[tuple[int, bytes, bytes, int, int]], counts: dict[tuple[int, int], int], keys: list[bytes]
) -> tuple[tuple[int, int] | None, int]:
    """The most frequent pair of one column (ties: the heap order) and its count; (None, 0) when none is left.
    Counts only fall after an entry is pushed, so a stale top is re-pushed with its count until one is current."""
    while heap:
        negative, _, _, a, b = heap[0]
        count = counts.get((a, b), 0)
        if count == -negative:
            return (a, b), count
        if count > 0:
            heapq.heapreplace(heap, (-count, keys[a], keys[b], a, b))
        else:
            heapq.heappop(heap)
    return None, 0


class ParityAwareBPETokenizer(ByteBPETokenizer):
    """A byte-bpe tokenizer whose merges were chosen for parity across languages (module docstring)."""

    family = "parity-bpe"
    options_model = ParityBPEOptions
    facts = FamilyFacts(derivable=True, floor=(256, "bytes"), training_input="parallel", variant_of="byte-bpe")

    @classmethod
    def train(cls, texts: Iterable[str] | PretokenCounts, vocab_size: int, **options: Any) -> Self:
        """Refused: parity-bpe learns from each language's text and a parallel dev set (``train_parallel``)."""
        raise TokenizerError(
            f"{cls.family} trains on per-language text and a line-aligned dev set per language, not on one list of "
            f"texts: call {cls.__name__}.train_parallel(texts_by_language, dev_by_language, vocab_size, ...)",
            code="needs_parallel_input",
            value=cls.family,
        )

    @classmethod
    def train_parallel(
        cls,
        texts_by_language: Mapping[str, Iterable[str] | PretokenCounts],
        dev_by_language: Mapping[str, Sequence[str]],
        vocab_size: int,
        *,
        special_tokens: Iterable[str] = (),
        progress: bool | ProgressCallback = False,
        workers: int | None = None,
        **options: Any,
    ) -> Self:
        """Learn a parity-aware vocabulary of at most ``vocab_size`` ids.

        ``texts_by_language``: language name -> its training texts (or their pre-token counts, made with the
        ``pretokenizer`` option's pre-tokenizer); ``dev_by_language``: the same language names -> the dev
        lines, line-aligned (every language the same number of lines, line ``i`` the same sentence);
        ``options``: ``ParityBPEOptions`` (byte-bpe's, ``variant``, ``window_size``, ``window_alpha``,
        ``global_merges``); the rest as ``TrainedTokenizer.train``.  Every argument is checked before any text
        is read.
        """
        request = cls.training_request(vocab_size, special_tokens, options, progress, workers)
        languages = _checked_languages(texts_by_language, dev_by_language)
        settings = request.options
        untrained = cls(special_tokens=request.extra_special_tokens, **settings.model_dump())
        table = _PretokenTable(len(languages))
        for number, language in enumerate(languages):
            table.add(number, _counted(language, "training text", texts_by_language[language], settings, workers))
            table.add(number, _counted(language, "dev set", dev_by_language[language], settings, workers), dev=True)
        first_byte = len(untrained.special_tokens)
        words = [[first_byte + value for value in pretoken.encode("utf-8")] for pretoken in table.pretokens]
        with progress_callback(request.progress, f"{cls.family} merges") as callback:
            learned = learn_parity_merges(
                words, table.train, table.dev, untrained._merge_keys(), request.vocab_size - untrained.vocab_size,
                min_frequency=settings.min_frequency, variant=settings.variant, window_size=settings.window_size,
                window_alpha=settings.window_alpha, global_merges=settings.global_merges, progress=callback,
            )  # fmt: skip
        return untrained.with_merges(learned.merges)


class _PretokenTable:
    """Every distinct pre-token of all languages' training and dev text, with its count in each."""

    def __init__(self, languages: int) -> None:
        self.languages = languages
        self.index: dict[str, int] = {}
        self.pretokens: list[str] = []
        self.train: list[list[int]] = []
        self.dev: list[list[int]] = []

    def add(self, language: int, counts: PretokenCounts, *, dev: bool = False) -> None:
        for pretoken, count in counts.items():
            index = self.index.get(pretoken)
            if index is None:
                index = self.index[pretoken] = len(self.pretokens)
                self.pretokens.append(pretoken)
                self.train.append([0] * self.languages)
                self.dev.append([0] * self.languages)
            (self.dev if dev else self.train)[index][language] += count


def _checked_languages(texts_by_language: Any, dev_by_language: Any) -> list[str]:
    """The language names in tie-break order (code points), once both mappings name the same languages and
    every dev set is a sequence of as many lines as the others."""
    for name, given in (("texts_by_language", texts_by_language), ("dev_by_language", dev_by_language)):
        if not isinstance(given, Mapping):
            raise TokenizerError(f"{name} must map each language's name to its texts, got {type(given).__name__}",
                                 code="bad_parallel_input", field=name)  # fmt: skip
    languages = list(texts_by_language)
    if not languages:
        raise TokenizerError("texts_by_language names no language", code="bad_parallel_input",
                             field="texts_by_language")  # fmt: skip
    for language in languages:
        if not isinstance(language, str) or not language:
            raise TokenizerError(f"a language's name must be a non-empty string, got {language!r}",
                                 code="bad_parallel_input", value=language, field="texts_by_language")  # fmt: skip
    if set(dev_by_language) != set(languages):
        missing = sorted(set(languages) - set(dev_by_language))
        extra = sorted(map(str, set(dev_by_language) - set(languages)))
        raise TokenizerError(
            f"dev_by_language must name the languages of texts_by_language; missing: {', '.join(missing) or '-'}, "
            f"not trained on: {', '.join(extra) or '-'}", code="bad_parallel_input",
            value=(missing or extra)[0], field="dev_by_language")  # fmt: skip
    lengths = {}
    for language in sorted(languages):
        lines = dev_by_language[language]
        if isinstance(lines, (str, bytes)) or not isinstance(lines, Sequence):
            raise TokenizerError(
                f"the dev set of {language!r} must be a sequence of lines (a list), got {type(lines).__name__}",
                code="bad_parallel_input", value=language, field=f"dev_by_language[{language!r}]")  # fmt: skip
        lengths[language] = len(lines)
    if len(set(lengths.values())) > 1:
        shortest, longest = min(lengths, key=lengths.__getitem__), max(lengths, key=lengths.__getitem__)
        raise TokenizerError(
            f"the dev sets must be line-aligned (the same sentences in every language), but {shortest!r} has "
            f"{lengths[shortest]} lines and {longest!r} {lengths[longest]}", code="misaligned_dev_set",
            value=longest, field=f"dev_by_language[{longest!r}]")  # fmt: skip
    return sorted(languages)


def _counted(language: str, what: str, texts: Iterable[str] | PretokenCounts, settings: ParityBPEOptions,
             workers: int | None) -> PretokenCounts:  # fmt: skip
    """The pre-token counts of one language's training text or dev set; an error names the language."""
    from bpe.training.counts import training_counts

    try:
        return training_counts(texts, settings.pretokenizer, workers=workers, normalizer=settings.normalizer)
    except TokenizerError as error:
        raise TokenizerError(f"{what} of language {language!r}: {error}", code=error.code, value=error.value,
                             field=error.field) from None  # fmt: skip
