"""Bits per byte (BPB) of held-out text under a language model.

For one document of ``B`` UTF-8 bytes encoded as tokens ``t_1 .. t_n`` (each document encoded alone, the
model conditioned on ``BOS`` and the tokens before, ``windows``)::

    bits = -Σ_i log2 P(class(t_i) | BOS, t_<i)  +  u · log2(n_unseen)  +  8 · unk_bytes
    BPB  = Σ_documents bits / Σ_documents B

* ``class(t)`` is the output class of ``t`` (``data.ModelData``): an id never seen in training is the
  ``UNSEEN`` class, shared by the ``n_unseen`` such ids of the vocabulary, so each costs ``log2(n_unseen)``
  bits more (``u`` of them in the document): the model spreads ``P(UNSEEN)`` evenly over them.
* **The ``<unk>`` charge.**  A tokenizer that emits ``<unk>`` does not say which bytes it replaced: the
  model's bits for the ``<unk>`` token pay for "something unknown", not for the text.  Each byte under an
  ``<unk>`` token is charged 8 bits, an upper bound on the cost of sending it verbatim, so a degenerate
  word-level row cannot look better by hiding text.
* A document longer than the context is scored in windows of the context length that move by half of it
  (Hugging Face's strided perplexity): every token is scored once, with at least half a context before it
  (all of it in the first window).

BPB is Karpathy's nanochat ``evaluate_bpb`` quantity (summed loss over summed bytes) with the two additions
above; it is comparable across vocabularies, per-token loss is not.  Aggregation: a ratio of sums over
documents per seed, the mean over seeds, and a bootstrap CI resampling documents and seeds
(``benchmarks.measure.stats.seed_item_interval``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

#: bits charged per byte under an <unk> token (an upper bound: the byte sent verbatim)
UNK_BITS_PER_BYTE = 8.0


@dataclass(frozen=True)
class Window:
    """One model call on one document: ``inputs`` (BOS then tokens), the ``targets`` they predict, and
    the first target position that is scored (the earlier ones are context only)."""

    item: int
    inputs: np.ndarray
    targets: np.ndarray
    first_scored: int


def windows(items: list[np.ndarray], bos: int, context: int) -> list[Window]:
    """Every document of ``items`` (output classes) as scoring windows of at most ``context`` inputs."""
    stride = max(1, context // 2)
    cut: list[Window] = []
    for item, classes in enumerate(items):
        sequence = np.concatenate([[bos], classes]).astype(np.int64)
        n = len(classes)
        scored = 1  # the next position of ``sequence`` to score (position 0 is BOS)
        while scored <= n:
            end = min(n, scored - 1 + (context if scored == 1 else stride))
            start = max(0, end - context)
            cut.append(Window(item, sequence[start:end], sequence[start + 1 : end + 1], scored - 1 - start))
            scored = end + 1
    return cut


def item_bits(target_log_probs: list[np.ndarray], unseen_tokens: np.ndarray, n_unseen: int,
              unk_bytes: np.ndarray) -> np.ndarray:  # fmt: skip
    """Bits of each document: its targets' natural-log probabilities in bits, the unseen-id split and the
    ``<unk>`` charge (module docstring)."""
    model_bits = np.array([-float(np.sum(log_probs, dtype=np.float64)) / math.log(2) for log_probs in target_log_probs])
    split = np.asarray(unseen_tokens, dtype=np.float64) * (math.log2(n_unseen) if n_unseen > 1 else 0.0)
    return model_bits + split + UNK_BITS_PER_BYTE * np.asarray(unk_bytes, dtype=np.float64)


def bits_per_byte(bits: np.ndarray, text_bytes: np.ndarray) -> float:
    """Σ bits / Σ bytes over documents."""
    return float(np.sum(bits) / np.sum(text_bytes))
