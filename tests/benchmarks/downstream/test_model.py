"""One small language model: deterministic on the CPU for a seed, resumable from its checkpoint, and its
parameters and FLOPs counted as documented."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import bpe
from benchmarks.downstream import data
from benchmarks.downstream.settings import Downstream
from corpora.spec import load_spec

TINY = Downstream(train_bytes=6_000, context_bytes=64, epochs=1.0, batch_size=4, layers=1, width=16, heads=2,
                  max_eval_items=20, checkpoint_every=2)  # fmt: skip


@pytest.fixture(scope="module")
def model_data(embedded_text: dict[str, list[str]]) -> data.ModelData:
    text = embedded_text["kor_Hang"]
    tokenizer = bpe.train("byte-bpe", text[:1500], 400)
    return data.build(tokenizer, text[:1500], {"test": text[2000:2020]}, TINY)


def test_the_same_seed_gives_the_same_bits_on_the_cpu(model_data: data.ModelData, needs_torch: None) -> None:
    from benchmarks.downstream import model

    first = model.train_and_score(model_data, TINY, 0, "cpu", threads=1)
    again = model.train_and_score(model_data, TINY, 0, "cpu", threads=1)
    other = model.train_and_score(model_data, TINY, 1, "cpu", threads=1)
    assert np.array_equal(first.bits["test"], again.bits["test"])
    assert not np.array_equal(first.bits["test"], other.bits["test"])
    assert np.all(first.bits["test"] > 0)


def test_an_interrupted_training_resumes_from_its_checkpoint(model_data: data.ModelData, tmp_path: Path,
                                                              needs_torch: None) -> None:  # fmt: skip
    import torch

    from benchmarks.downstream import model

    checkpoint = tmp_path / "model.ckpt"

    def interrupt(step: int, total: int) -> None:
        if step == 3:
            raise KeyboardInterrupt

    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    with pytest.raises(KeyboardInterrupt):
        model.train(model_data, TINY, 0, "cpu", checkpoint, progress=interrupt)
    assert checkpoint.is_file()  # saved after step 2
    resumed = model.train(model_data, TINY, 0, "cpu", checkpoint)
    assert not checkpoint.exists()  # removed when training ends
    straight = model.train(model_data, TINY, 0, "cpu")
    for a, b in zip(resumed.parameters(), straight.parameters(), strict=True):
        assert torch.equal(a, b)


def test_parameters_and_flops_follow_the_documented_count(model_data: data.ModelData, needs_torch: None) -> None:
    from benchmarks.downstream import model

    built = model.build_model(TINY, model_data.classes, model_data.context_tokens, seed=0)
    facts = model.facts(built, model_data, TINY, data.steps(TINY))
    width = TINY.width
    # one layer: attention q, k, v, o (width² each), SwiGLU (3 · width · 4 width), two RMSNorms, the final norm
    body = 4 * width * width + 3 * width * 4 * width + 2 * width + width
    assert facts.non_embedding_parameters == body
    assert facts.embedding_parameters == model_data.classes * width
    assert facts.parameters == body + model_data.classes * width  # the output layer is the tied embedding
    assert facts.full_vocabulary_parameters == body + (model_data.vocab_size + 2) * width
    tokens = data.steps(TINY) * TINY.batch_size * model_data.context_tokens
    assert facts.train_tokens == tokens
    forward = 2 * body + 2 * width * model_data.classes + 2 * TINY.layers * model_data.context_tokens * width
    assert facts.train_flops == pytest.approx(3 * forward * tokens)


def test_the_gpu_config_has_10_to_20m_parameters_outside_the_embedding_and_50_mb_a_language(needs_torch: None) -> None:
    from benchmarks.downstream import model
    from benchmarks.run.config import load_config

    config = load_config("downstream-gpu")
    settings = config.downstream
    assert settings is not None and settings.train_bytes >= 50_000_000 and len(settings.seeds) >= 3
    built = model.build_model(settings, classes=100, context=settings.max_context_tokens, seed=0)
    body = sum(parameter.numel() for parameter in built.parameters()) - 100 * settings.width
    assert 10_000_000 <= body <= 20_000_000
    # the training text streams from the hub (tests/corpora/test_hub_fineweb.py reads those sources offline)
    train_kinds = {source.kind for entry in config.corpora for source in load_spec(entry).sources
                   if source.role == "train"}  # fmt: skip
    assert train_kinds == {"hf"}
