"""Bits per byte: the scoring windows, the <unk> charge and the unseen-id split against closed forms, and the
whole scoring path against a unigram model computed independently."""

from __future__ import annotations

import math

import numpy as np
import pytest

import bpe
from benchmarks.downstream import bpb, data
from benchmarks.downstream.settings import Downstream


def test_windows_score_every_token_once_with_its_context() -> None:
    items = [np.arange(1, n + 1) for n in (1, 5, 8, 9, 23)]
    for context in (4, 5, 8):
        scored: dict[int, list[int]] = {index: [] for index in range(len(items))}
        for window in bpb.windows(items, bos=0, context=context):
            assert 1 <= len(window.inputs) <= context
            assert len(window.inputs) == len(window.targets)
            sequence = np.concatenate([[0], items[window.item]])
            # each target is the token after its input: the window is a slice of BOS + item
            start = int(np.flatnonzero(sequence == window.targets[0])[0]) - 1
            assert list(window.inputs) == list(sequence[start : start + len(window.inputs)])
            fresh = window.targets[window.first_scored :]
            if window.first_scored:  # a later window keeps at least half a context before its scored tokens
                assert window.first_scored >= context // 2 or len(window.inputs) < context
            scored[window.item] += list(fresh)
        assert all(scored[index] == list(item) for index, item in enumerate(items))


def test_item_bits_adds_the_unseen_split_and_the_unk_charge() -> None:
    log_probs = [np.log([0.5, 0.25]), np.log([0.125])]
    bits = bpb.item_bits(log_probs, unseen_tokens=np.array([0, 2]), n_unseen=8, unk_bytes=np.array([3, 0]))
    assert bits == pytest.approx([1 + 2 + 8 * 3, 3 + 2 * 3])
    assert bpb.bits_per_byte(bits, np.array([10, 6])) == pytest.approx((27 + 9) / 16)


def test_training_text_is_the_same_bytes_for_every_tokenizer() -> None:
    texts = ["ab", "çöş", "xyz"]
    assert data.training_texts(texts, 4) == ["ab", "ç"]  # "ç" is 2 bytes; "ö" would cross the budget
    assert data.training_texts(texts, 5) == ["ab", "ç"]
    assert data.training_texts(texts, 100) == texts


def test_the_number_of_steps_depends_on_bytes_not_tokens() -> None:
    settings = Downstream(train_bytes=10_000, context_bytes=100, batch_size=4, epochs=2.0)
    assert data.steps(settings) == 50
    order = data.batch_order(7, 50, 4, seed=3)
    assert order.shape == (50, 4)
    assert sorted(order.reshape(-1)[:7]) == list(range(7))  # an epoch is a permutation of the windows


class Doubled(bpe.Tokenizer):
    """Every token of ``inner`` emitted twice: id t as 2t then 2t + 1 (the second copy covers no bytes)."""

    def __init__(self, inner: bpe.Tokenizer) -> None:
        self.inner = inner

    def encode_with_spans(self, text: str) -> bpe.Encoding:
        encoding = self.inner.encode_with_spans(text)
        ids = [copy for token in encoding.ids for copy in (2 * token, 2 * token + 1)]
        spans = [span for start, end in encoding.spans for span in ((start, end), (end, end))]
        return bpe.Encoding(ids, spans)

    def id_to_bytes(self, token_id: int) -> bytes:
        return self.inner.id_to_bytes(token_id // 2) if token_id % 2 == 0 else b""

    def id_to_piece(self, token_id: int) -> str:
        return self.inner.id_to_piece(token_id // 2) + ("" if token_id % 2 == 0 else "²")

    @property
    def vocab_size(self) -> int:
        return 2 * self.inner.vocab_size

    @property
    def unk_id(self) -> int | None:
        return None if self.inner.unk_id is None else 2 * self.inner.unk_id


class ClosedForm:
    """A language model with a closed form: unigram over the training frequencies of the first copies; after
    a first copy (an even id) its twin with probability 1 when ``twins``."""

    def __init__(self, model_data: data.ModelData, twins: bool) -> None:
        import torch

        counts = np.bincount(model_data.train, minlength=model_data.classes).astype(np.float64)
        counts[model_data.bos] = 0
        counts[model_data.unseen_class] = 0.5  # unseen ids keep some mass
        if twins:
            counts[[c for c in range(len(model_data.seen)) if model_data.seen[c] % 2 == 1]] = 0
        with np.errstate(divide="ignore"):  # a class that is never a target here: probability 0
            self.unigram = np.log(counts / counts.sum())
        self.model_data, self.twins, self.torch = model_data, twins, torch

    def log_probs(self, previous: int) -> np.ndarray:
        seen = self.model_data.seen
        if self.twins and previous < len(seen) and seen[previous] % 2 == 0:
            table = np.full(self.model_data.classes, -1e30)
            table[int(np.searchsorted(seen, seen[previous] + 1))] = 0.0
            return table
        return self.unigram

    def __call__(self, input_ids):  # as a transformers model: .logits of (batch, positions, classes)
        inputs = input_ids.numpy()
        logits = np.stack([[self.log_probs(int(token)) for token in row] for row in inputs])
        return type("Output", (), {"logits": self.torch.from_numpy(logits.astype(np.float32))})()

    def eval(self) -> None:
        return None


def closed_form_bits(model_data: data.ModelData, items: data.EvalItems, model: ClosedForm) -> float:
    """Σ bits / Σ bytes computed directly from the closed form, without windows or batches."""
    total = 0.0
    for ids, unk_bytes in zip(items.ids, items.unk_bytes, strict=True):
        previous = model_data.bos
        for token in model_data.to_classes(ids):
            total -= model.log_probs(previous)[token] / math.log(2)
            if token == model_data.unseen_class:
                total += math.log2(model_data.n_unseen)
            previous = token
        total += 8 * unk_bytes
    return total / items.text_bytes.sum()


@pytest.mark.parametrize("kind", ["byte-bpe", "word"])
def test_scoring_equals_a_unigram_model_computed_independently(kind: str, embedded_text: dict[str, list[str]],
                                                               needs_torch: None) -> None:  # fmt: skip
    from benchmarks.downstream import model

    text = embedded_text["tur_Latn"]
    tokenizer = bpe.train(kind, text[:2000], 500)
    settings = Downstream(train_bytes=20_000, context_bytes=64, max_eval_items=40)
    held_out = {"test": text[3000:3040]}
    model_data = data.build(tokenizer, text[:2000], held_out, settings)
    unigram = ClosedForm(model_data, twins=False)
    scored = model.score(unigram, model_data, "cpu")["test"]  # type: ignore[arg-type]
    items = model_data.eval_sets[0]
    if kind == "word":
        assert items.unk_bytes.sum() > 0  # the charge is exercised
    assert bpb.bits_per_byte(scored, items.text_bytes) == pytest.approx(closed_form_bits(model_data, items, unigram),
                                                                        rel=1e-5)


def test_doubling_every_token_leaves_bpb_unchanged_at_equal_likelihood(embedded_text: dict[str, list[str]],
                                                                        needs_torch: None) -> None:  # fmt: skip
    from benchmarks.downstream import model

    text = embedded_text["rus_Cyrl"]
    tokenizer = bpe.train("char-bpe", text[:2000], 600)
    settings = Downstream(train_bytes=10**7, context_bytes=48)
    # held-out documents from the training text: every id is seen, so only the twins differ
    held_out = {"test": text[:30]}
    plain = data.build(tokenizer, text[:2000], held_out, settings)
    doubled = data.build(Doubled(tokenizer), text[:2000], held_out, settings)
    assert sum(map(len, doubled.eval_sets[0].ids)) == 2 * sum(map(len, plain.eval_sets[0].ids))
    plain_bits = model.score(ClosedForm(plain, twins=False), plain, "cpu")["test"]  # type: ignore[arg-type]
    doubled_bits = model.score(ClosedForm(doubled, twins=True), doubled, "cpu")["test"]  # type: ignore[arg-type]
    assert doubled_bits == pytest.approx(plain_bits, rel=1e-5)
