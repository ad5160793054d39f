"""One small causal language model: built, trained and scored with PyTorch and ``transformers``.

The model is ``transformers``' Llama decoder (``LlamaForCausalLM``: RMSNorm, rotary positions, SwiGLU)
with a small config: ``layers`` × ``width`` with ``heads`` heads and an MLP of ``mlp_ratio`` × ``width``,
the input embedding tied to the output layer, whose size is the row's output classes (``data.ModelData``).
Only that layer differs between rows.

Training: AdamW (β = 0.9, 0.95) with ``weight_decay`` on the matrices, a linear warm-up over ``warmup`` of
the steps then cosine decay to 10% of ``learning_rate``, gradients clipped at norm 1, ``data.steps``
steps of ``batch_size`` windows (``data.batch_order``).  ``BOS`` is never a target.

Determinism: the seed sets the initialisation (``torch.manual_seed``) and the batch order; on the CPU the
model runs in float32 with deterministic algorithms on a fixed number of threads, so the same seed gives
the same bits.  On CUDA it runs under bf16 autocast, which is fast and not bit-reproducible.

FLOPs (Kaplan et al. 2020's count): a forward pass costs ``2·N + 2·width·classes + 2·layers·context·width``
per token, ``N`` the parameters outside the embedding; training is three times a forward pass.
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import transformers
from transformers import LlamaConfig, LlamaForCausalLM

from benchmarks.downstream import bpb, data
from benchmarks.downstream.settings import Downstream

#: windows scored per forward pass
SCORE_BATCH = 32


def resolve_device(device: str) -> str:
    """``auto``: ``cuda`` when PyTorch sees a GPU, else ``cpu``."""
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("--device cuda: PyTorch sees no CUDA device (torch.cuda.is_available() is False)")
    return device


def build_model(settings: Downstream, classes: int, context: int, seed: int) -> LlamaForCausalLM:
    transformers.logging.set_verbosity_error()
    config = LlamaConfig(vocab_size=classes, hidden_size=settings.width, intermediate_size=settings.mlp_ratio *
                         settings.width, num_hidden_layers=settings.layers, num_attention_heads=settings.heads,
                         num_key_value_heads=settings.heads, max_position_embeddings=context, tie_word_embeddings=True,
                         attention_dropout=0.0, use_cache=False, bos_token_id=None, eos_token_id=None,
                         pad_token_id=None, attn_implementation="sdpa")  # fmt: skip
    torch.manual_seed(seed)
    return LlamaForCausalLM(config)


@dataclass(frozen=True)
class Facts:
    """What a model costs: parameters (with and without the embedding, and as the full vocabulary would
    have them) and training FLOPs."""

    parameters: int
    embedding_parameters: int
    non_embedding_parameters: int
    full_vocabulary_parameters: int
    train_tokens: int
    train_flops: float


def facts(model: LlamaForCausalLM, model_data: data.ModelData, settings: Downstream, total_steps: int) -> Facts:
    parameters = sum(parameter.numel() for parameter in model.parameters())
    embedding = model_data.classes * settings.width
    body = parameters - embedding
    tokens = total_steps * settings.batch_size * model_data.context_tokens
    forward = 2 * body + 2 * settings.width * model_data.classes + 2 * settings.layers * model_data.context_tokens * \
        settings.width  # fmt: skip
    return Facts(parameters, embedding, body, body + (model_data.vocab_size + 2) * settings.width, tokens,
                 3.0 * forward * tokens)  # fmt: skip


def _autocast(device: str) -> contextlib.AbstractContextManager:
    """bf16 autocast on CUDA; float32 (nothing) on the CPU, where the bits must be reproducible."""
    return torch.autocast("cuda", dtype=torch.bfloat16) if device == "cuda" else contextlib.nullcontext()


def _schedule(settings: Downstream, total_steps: int) -> Callable[[int], float]:
    warm = max(1, round(settings.warmup * total_steps))

    def factor(step: int) -> float:
        if step < warm:
            return (step + 1) / warm
        progress = (step - warm) / max(1, total_steps - warm)
        return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, progress)))

    return factor


def _optimizer(model: LlamaForCausalLM, settings: Downstream) -> torch.optim.Optimizer:
    matrices = [p for p in model.parameters() if p.ndim >= 2]
    others = [p for p in model.parameters() if p.ndim < 2]
    return torch.optim.AdamW([{"params": matrices, "weight_decay": settings.weight_decay},
                              {"params": others, "weight_decay": 0.0}], lr=settings.learning_rate,
                             betas=(0.9, 0.95))  # fmt: skip


def train(model_data: data.ModelData, settings: Downstream, seed: int, device: str, checkpoint: Path | None = None,
          progress: Callable[[int, int], None] | None = None) -> LlamaForCausalLM:  # fmt: skip
    """Train one model; with ``checkpoint``, resume from that file when it holds this model's state, and
    save it every ``checkpoint_every`` steps (removed when training ends)."""
    context = model_data.context_tokens
    model = build_model(settings, model_data.classes, context, seed).to(device)
    optimizer = _optimizer(model, settings)
    total_steps = data.steps(settings)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, _schedule(settings, total_steps))
    cut = torch.from_numpy(data.training_windows(model_data.train, context))
    order = data.batch_order(len(cut), total_steps, settings.batch_size, seed)
    first = 0
    if checkpoint is not None and checkpoint.is_file():
        state = torch.load(checkpoint, map_location=device, weights_only=True)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        first = int(state["step"])
    model.train()
    for step in range(first, total_steps):
        batch = cut[order[step]].to(device)
        inputs, targets = batch[:, :-1], batch[:, 1:].clone()
        targets[targets == model_data.bos] = -100
        with _autocast(device):
            logits = model(input_ids=inputs).logits
        loss = torch.nn.functional.cross_entropy(logits.float().reshape(-1, model_data.classes), targets.reshape(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        if progress is not None:
            progress(step + 1, total_steps)
        if checkpoint is not None and (step + 1) % settings.checkpoint_every == 0 and step + 1 < total_steps:
            temporary = checkpoint.with_suffix(f".{os.getpid()}.tmp")
            torch.save({"step": step + 1, "model": model.state_dict(), "optimizer": optimizer.state_dict(),
                        "scheduler": scheduler.state_dict()}, temporary)  # fmt: skip
            os.replace(temporary, checkpoint)
    if checkpoint is not None:
        checkpoint.unlink(missing_ok=True)
    return model


@torch.no_grad()
def score(model: LlamaForCausalLM, model_data: data.ModelData, device: str) -> dict[str, np.ndarray]:
    """Bits of every held-out document, by role (``bpb.item_bits``)."""
    model.eval()
    scored = {}
    for items in model_data.eval_sets:
        classes = [model_data.to_classes(ids) for ids in items.ids]
        cut = bpb.windows(classes, model_data.bos, model_data.context_tokens)
        log_probs: list[list[np.ndarray]] = [[] for _ in classes]
        order = sorted(range(len(cut)), key=lambda index: len(cut[index].inputs))
        for first in range(0, len(order), SCORE_BATCH):
            chosen = [cut[index] for index in order[first : first + SCORE_BATCH]]
            width = max(len(window.inputs) for window in chosen)
            inputs = torch.zeros((len(chosen), width), dtype=torch.long)
            targets = torch.zeros((len(chosen), width), dtype=torch.long)
            for row, window in enumerate(chosen):  # right padding: causal attention never looks ahead to it
                inputs[row, : len(window.inputs)] = torch.from_numpy(window.inputs)
                targets[row, : len(window.targets)] = torch.from_numpy(window.targets)
            with _autocast(device):
                logits = model(input_ids=inputs.to(device)).logits
            # the log-probability of each target only (the full table of a large vocabulary is hundreds of MB)
            picked = -torch.nn.functional.cross_entropy(logits.float().transpose(1, 2), targets.to(device),
                                                        reduction="none").double().cpu().numpy()  # fmt: skip
            for row, window in enumerate(chosen):
                log_probs[window.item].append(picked[row, window.first_scored : len(window.targets)])
        joined = [np.concatenate(parts) if parts else np.zeros(0) for parts in log_probs]
        unseen = np.array([int(np.count_nonzero(c == model_data.unseen_class)) for c in classes])
        scored[items.role] = bpb.item_bits(joined, unseen, model_data.n_unseen, items.unk_bytes)
    return scored


@dataclass(frozen=True)
class Trained:
    """One model's outcome: bits per held-out document by role, its facts, and its wall-clock seconds."""

    bits: dict[str, np.ndarray]
    facts: Facts
    seconds: float


def train_and_score(model_data: data.ModelData, settings: Downstream, seed: int, device: str, threads: int,
                    checkpoint: Path | None = None) -> Trained:  # fmt: skip
    """Train one model and score it; on the CPU with ``threads`` threads and deterministic algorithms."""
    started = time.perf_counter()
    device = resolve_device(device)
    if device == "cpu":
        torch.set_num_threads(threads)
        torch.use_deterministic_algorithms(True)
    model = train(model_data, settings, seed, device, checkpoint)
    bits = score(model, model_data, device)
    return Trained(bits, facts(model, model_data, settings, data.steps(settings)), time.perf_counter() - started)
