"""Reference parity-aware BPE, used ONLY by the tests: the naive algorithm, slow and obviously right.

Foroutan et al. 2025 as ``bpe/models/parity_bpe.py`` states it, with nothing kept between steps: at every
step each language's dev token total is recounted from its dev pre-tokens as rewritten so far, the column
chosen (all languages summed for the first ``global_merges`` steps; else the language with the most dev
tokens, ties to the earlier language in name order; the window variant skips a language already chosen
``window_alpha * window_size / languages`` times or more of the last ``window_size`` parity-driven steps),
every pair of that column's training pre-tokens recounted, the best taken by byte-bpe's tie-break (count,
then smallest bytes of left and right, then smallest ids), and every pre-token of every language, training
and dev, rewritten left to right.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from itertools import pairwise

from bpe.pipeline.pretokenizers import get_pretokenizer
from tests.bpe.naive_bpe import merge_word


def pretoken_words(texts: Sequence[str], pretokenizer: str, first_byte: int) -> Counter[tuple[int, ...]]:
    """Every pre-token of ``texts`` as byte ids (byte ``b`` is ``first_byte + b``), with its count."""
    split = get_pretokenizer(pretokenizer).split
    words: Counter[tuple[int, ...]] = Counter()
    for text in texts:
        for pretoken in split(text):
            words[tuple(first_byte + value for value in pretoken.encode("utf-8"))] += 1
    return words


def naive_parity_train(
    texts_by_language: Mapping[str, Sequence[str]],
    dev_by_language: Mapping[str, Sequence[str]],
    max_merges: int,
    *,
    pretokenizer: str = "gpt2",
    first_byte: int = 4,
    min_frequency: int = 2,
    variant: str = "base",
    window_size: int = 100,
    window_alpha: int = 2,
    global_merges: int = 0,
) -> tuple[list[tuple[int, int]], list[str], dict[str, int]]:
    """(merges as (left id, right id), the column of each merge: a language or ``"*"`` for all summed,
    every language's dev tokens after all merges)."""
    languages = sorted(texts_by_language)
    train = {language: pretoken_words(texts_by_language[language], pretokenizer, first_byte) for language in languages}
    dev = {language: pretoken_words(dev_by_language[language], pretokenizer, first_byte) for language in languages}
    keys: list[bytes] = [b""] * first_byte + [bytes([value]) for value in range(256)]
    merges: list[tuple[int, int]] = []
    columns: list[str] = []
    history: list[str] = []  # the languages chosen by parity, in order

    def dev_tokens() -> dict[str, int]:
        return {language: sum(len(word) * count for word, count in dev[language].items()) for language in languages}

    while len(merges) < max_merges:
        if len(merges) < global_merges:
            column = "*"
            chosen = languages
        else:
            totals = dev_tokens()
            ranked = sorted(languages, key=lambda language: (-totals[language], languages.index(language)))
            column = ranked[0]
            if variant == "window":
                window = history[-window_size:]
                column = next(language for language in ranked
                              if window.count(language) * len(languages) <= window_alpha * window_size)  # fmt: skip
                history.append(column)
            chosen = [column]
        pair_counts: Counter[tuple[int, int]] = Counter()
        for language in chosen:
            for word, count in train[language].items():
                for pair in pairwise(word):
                    pair_counts[pair] += count
        if not pair_counts:
            break
        (left, right), count = min(pair_counts.items(),
                                   key=lambda kv: (-kv[1], keys[kv[0][0]], keys[kv[0][1]], kv[0]))  # fmt: skip
        if count < min_frequency:
            break
        new_id = len(keys)
        keys.append(keys[left] + keys[right])
        merges.append((left, right))
        columns.append(column)
        for table in (*train.values(), *dev.values()):
            rewritten: Counter[tuple[int, ...]] = Counter()
            for word, word_count in table.items():
                rewritten[tuple(merge_word(word, left, right, new_id))] += word_count
            table.clear()
            table.update(rewritten)
    return merges, columns, dev_tokens()
