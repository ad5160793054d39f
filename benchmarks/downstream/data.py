"""The ids a language model sees, built the same way for every tokenizer row.

* **Training text.**  The corpus's ``train`` documents in order, up to ``train_bytes`` UTF-8 bytes (the
  document that crosses the budget is cut at a character boundary), so every row of a language sees the
  very same bytes.  Each document is encoded alone; the stream is ``BOS d1 BOS d2 ...`` (``BOS`` is one
  extra class: it starts every sequence and is never a target).
* **Context in bytes.**  A row's context in tokens is ``ceil(context_bytes / b)``, ``b`` its bytes per
  token on the training text, clamped to ``[min_context_tokens, max_context_tokens]``: every model sees
  about the same text at once, whatever its vocabulary.  The stream is cut into windows of that many
  tokens (plus one target); the number of steps, ``ceil(epochs * train_bytes / (batch_size *
  context_bytes))``, is the same for every row.
* **Compact output classes.**  The output layer has one class per id that occurs in the training stream,
  plus ``BOS`` and one ``UNSEEN`` class that stands for every other id of the vocabulary: an id the model
  never saw in training gets ``P(UNSEEN) / n_unseen``.  That is a proper distribution over the whole
  vocabulary (so BPB stays a likelihood), and it keeps a 100k-id production vocabulary trainable on a CPU;
  an id that never occurs in training would only be pushed down anyway.  The report gives the parameters
  of the full vocabulary beside the trained ones.
* **Held-out items.**  Each document of a scored role (at most ``max_eval_items``), encoded alone, with
  its UTF-8 bytes and the bytes its ``<unk>`` tokens cover (charged at 8 bits per byte, ``bpb``).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from benchmarks.downstream.settings import Downstream
from bpe import Tokenizer


def training_texts(texts: Sequence[str], budget: int) -> list[str]:
    """The first documents of ``texts`` up to ``budget`` UTF-8 bytes; the one crossing it is cut at the
    last whole character that fits."""
    chosen, used = [], 0
    for text in texts:
        data = text.encode("utf-8")
        if used + len(data) <= budget:
            chosen.append(text)
            used += len(data)
            continue
        rest = data[: budget - used].decode("utf-8", errors="ignore")
        if rest:
            chosen.append(rest)
        break
    return chosen


@dataclass(frozen=True)
class EvalItems:
    """The held-out documents of one role: each one's token ids, UTF-8 bytes and bytes under ``<unk>``."""

    role: str
    ids: list[np.ndarray]
    text_bytes: np.ndarray  # int64, per item
    unk_bytes: np.ndarray  # int64, per item
    unk_tokens: np.ndarray  # int64, per item


@dataclass(frozen=True)
class ModelData:
    """Everything one row's language models are trained and scored on (``build``); plain numpy, so it
    pickles to a worker process and hashes into a cache key."""

    vocab_size: int  # the tokenizer's id space: every id is below it
    seen: np.ndarray  # sorted ids of the training stream: class i is seen[i]
    train: np.ndarray  # the training stream as classes, BOS-separated (int64)
    train_bytes: int
    context_tokens: int
    eval_sets: list[EvalItems] = field(default_factory=list)

    @property
    def bos(self) -> int:
        return len(self.seen)

    @property
    def unseen_class(self) -> int:
        return len(self.seen) + 1

    @property
    def classes(self) -> int:
        """Output classes: the seen ids, BOS and UNSEEN."""
        return len(self.seen) + 2

    @property
    def n_unseen(self) -> int:
        """Ids of the vocabulary that UNSEEN stands for."""
        return self.vocab_size - len(self.seen)

    def to_classes(self, ids: np.ndarray) -> np.ndarray:
        """Token ids as output classes: a seen id's index in ``seen``, any other id UNSEEN."""
        position = np.searchsorted(self.seen, ids)
        position = np.minimum(position, len(self.seen) - 1)
        return np.where(self.seen[position] == ids, position, self.unseen_class).astype(np.int64)

    def digest(self) -> str:
        """A hash of every id the models see and score: with the settings and the seed, a model's cache key."""
        hasher = hashlib.sha256()
        hasher.update(f"{self.vocab_size},{self.train_bytes},{self.context_tokens}".encode())
        for array in (self.seen, self.train):
            hasher.update(np.ascontiguousarray(array, dtype=np.int64).tobytes())
        for items in self.eval_sets:
            hasher.update(items.role.encode())
            for array in (items.text_bytes, items.unk_bytes, *items.ids):
                hasher.update(b"|" + np.ascontiguousarray(array, dtype=np.int64).tobytes())
        return hasher.hexdigest()


def build(tokenizer: Tokenizer, train_texts: Sequence[str], eval_texts: dict[str, Sequence[str]],
          settings: Downstream) -> ModelData:  # fmt: skip
    """One row's ``ModelData``: ``train_texts`` cut to the byte budget, ``eval_texts`` by role."""
    texts = training_texts(train_texts, settings.train_bytes)
    encoded = [np.asarray(encoding.ids, dtype=np.int64) for encoding in tokenizer.encode_texts(texts)]
    scored = {role: [np.asarray(encoding.ids, dtype=np.int64) for encoding in tokenizer.encode_texts(list(items))]
              for role, items in eval_texts.items()}  # fmt: skip
    largest = max((int(array.max()) for array in [*encoded, *(a for v in scored.values() for a in v)] if array.size),
                  default=-1)  # fmt: skip
    vocab_size = max(tokenizer.vocab_size, largest + 1)
    seen = np.unique(np.concatenate(encoded)) if encoded else np.zeros(0, dtype=np.int64)
    if seen.size == 0:
        raise ValueError("the training text encodes to no tokens")
    used_bytes = sum(len(text.encode("utf-8")) for text in texts)
    tokens = sum(len(array) for array in encoded)
    context = math.ceil(settings.context_bytes * tokens / used_bytes)
    context = min(max(context, settings.min_context_tokens), settings.max_context_tokens)
    data = ModelData(vocab_size, seen, np.zeros(0, dtype=np.int64), used_bytes, context)
    bos = np.array([data.bos], dtype=np.int64)
    stream = np.concatenate([part for array in encoded for part in (bos, data.to_classes(array))])
    eval_sets = [_eval_items(tokenizer, role, list(eval_texts[role]), scored[role]) for role in eval_texts]
    return ModelData(vocab_size, seen, stream, used_bytes, context, eval_sets)


def _eval_items(tokenizer: Tokenizer, role: str, texts: list[str], ids: list[np.ndarray]) -> EvalItems:
    unk_id = tokenizer.unk_id
    unk_bytes = np.zeros(len(texts), dtype=np.int64)
    unk_tokens = np.zeros(len(texts), dtype=np.int64)
    if unk_id is not None:
        for position, (text, array) in enumerate(zip(texts, ids, strict=True)):
            if np.any(array == unk_id):
                encoding = tokenizer.encode_with_spans(text)
                unk_bytes[position] = sum(end - start for token, (start, end)
                                          in zip(encoding.ids, encoding.spans, strict=True) if token == unk_id)
                unk_tokens[position] = int(np.count_nonzero(array == unk_id))
    text_bytes = np.array([len(text.encode("utf-8")) for text in texts], dtype=np.int64)
    return EvalItems(role, ids, text_bytes, unk_bytes, unk_tokens)


def steps(settings: Downstream) -> int:
    """Optimiser steps of every model: ``ceil(epochs * train_bytes / (batch_size * context_bytes))``."""
    return max(1, math.ceil(settings.epochs * settings.train_bytes / (settings.batch_size * settings.context_bytes)))


def training_windows(stream: np.ndarray, context: int) -> np.ndarray:
    """The training stream cut into consecutive windows of ``context + 1`` classes (inputs and their next
    class), each starting where the last one's inputs ended; a last partial window is dropped unless it is
    the only one (then the stream is padded by repeating it)."""
    size = context + 1
    if len(stream) < size:
        stream = np.resize(stream, size)
    count = (len(stream) - 1) // context
    return np.stack([stream[start * context : start * context + size] for start in range(count)])


def batch_order(count: int, total_steps: int, batch_size: int, seed: int) -> np.ndarray:
    """Which windows each step trains on: epoch after epoch, a permutation of the windows drawn by
    ``np.random.default_rng(seed)``, read ``batch_size`` at a time; shape (total_steps, batch_size)."""
    rng = np.random.default_rng(seed)
    needed = total_steps * batch_size
    order = np.concatenate([rng.permutation(count) for _ in range(math.ceil(needed / count))])
    return order[:needed].reshape(total_steps, batch_size)
