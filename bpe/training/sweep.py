"""One training per vocabulary sweep: smaller tokenizers derived from a larger one.

For four families the tokenizer trained at size N is a part of the one trained, on the same text
with the same options, at a size M > N:

* **char-bpe, byte-bpe**: BPE is greedy and its tie-break is deterministic (``bpe.training.trainer``), so
  the first k merges of a run are the merges of a run stopped after k; the base symbols do not
  depend on the size.  Size N keeps the first ``N - specials - base symbols`` merges.
* **word**: the vocabulary is the most frequent pre-tokens in rank order (count, then code point
  order), filtered by ``min_frequency`` before it is cut: size N keeps the first N entries.
* **char**: the alphabet is the most frequent characters, cut to size, then saved in code point
  order.  The cut needs the frequency ranks, which a saved char tokenizer no longer has:
  ``train_sweep`` derives every size from the character counts instead.

When derivation is exact (``derive`` refuses otherwise, with a TokenizerError saying why):

* N no larger than the size the larger tokenizer reached (its ``vocab_size``): always for
  char-bpe, byte-bpe and word (the result is identical, merges, vocabulary, ids and saved JSON, to
  training at N directly, tested on four languages); for char only when N equals it;
* N larger than the reached size: only when the training is known to have stopped early, i.e.
  ``trained_vocab_size`` (the size it was asked for) is larger than the size reached: the text had
  nothing more to learn (no pair left at ``min_frequency``, every word or character already in), so
  a training at any N at least the reached size stops at the same place;
* N below the family's minimum (specials + base symbols) raises the error training would raise.

sentencepiece rows are not derivable (a unigram vocabulary is pruned from a larger seed, and BPE
pieces are scored against a size-dependent budget): ``train_sweep`` trains them once per size, and
so it does morfessor and bpe-knockout, for which derivation is not established.

Options travel with the tokenizer: a derived tokenizer keeps the normalizer, pre-tokenizer and
encode-time options (inference method, dropout, seed) of the larger one, as training at that size
with the same options would give.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from bpe.base import Tokenizer, TokenizerError
from bpe.families import FAMILIES, family_class
from bpe.options import checked_vocab_size


def derive(tokenizer: Tokenizer, vocab_size: int, *, trained_vocab_size: int | None = None) -> Tokenizer:
    """The tokenizer that training at ``vocab_size`` would give, on the text and with the options
    ``tokenizer`` was trained with (see the module docstring for when this is exact).

    ``trained_vocab_size``: the size ``tokenizer`` was asked for, when known; it lets a size above
    the one reached be derived when training stopped early.
    """
    vocab_size = checked_vocab_size(vocab_size)
    family = tokenizer.family
    reached = tokenizer.vocab_size
    if vocab_size >= reached:
        stopped_early = trained_vocab_size is not None and trained_vocab_size > reached
        if vocab_size == reached or stopped_early:
            return tokenizer
        raise TokenizerError(
            f"cannot derive vocab_size {vocab_size} from a {family} tokenizer of {reached} entries: training at "
            f"{vocab_size} may learn more (derive only smaller sizes, or pass the size it was trained at when "
            "training stopped early)",
            code="cannot_derive_larger",
            value=vocab_size,
        )
    if family not in FAMILIES or not family_class(family).facts.derivable:
        derivable = ", ".join(kind for kind in FAMILIES if family_class(kind).facts.derivable)
        raise TokenizerError(
            f"{family} tokenizers cannot be derived from a larger one (only {derivable}): train each size, "
            "or use bpe.train_sweep (it counts the text once)",
            code="not_derivable",
            value=family,
        )
    return tokenizer.derived(vocab_size)


def train_sweep(kind: str, texts: Iterable[str], vocab_sizes: Sequence[int], **options: Any) -> dict[int, Tokenizer]:
    """Tokenizers of family ``kind`` at every size of ``vocab_sizes``, as if each were trained on
    ``texts`` with ``options``: the text is read and counted once where the family can (the largest size
    trained and the others derived, or a char alphabet ranked once), each size trained otherwise
    (sentencepiece).  Returns ``{vocab_size: tokenizer}``."""
    family = family_class(kind)
    sizes = sorted({checked_vocab_size(size) for size in vocab_sizes}, reverse=True)
    if not sizes:
        raise TokenizerError("vocab_sizes is empty", code="too_short", field="vocab_sizes")
    return family.train_sweep(texts, sizes, **options)
