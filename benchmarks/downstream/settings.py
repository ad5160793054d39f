"""The ``[downstream]`` table of an experiment config: which rows get a language model, and how it is trained.

Declared here, apart from the training code, so that reading a config never imports PyTorch.  Every field
is part of the run's identity (``ExperimentConfig.to_json``) and of each language model's cache key.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field, Strict, model_validator

from bpe.validation import (
    NonNegativeInt,
    NonNegativeNumber,
    PositiveInt,
    PositiveNumber,
    Table,
    distinct,
    in_interval,
    table_rule,
)

#: the evaluation roles a language model can be scored on (``corpora``: FLORES-style eval, UD-style test)
SCORED_ROLES = ("eval", "test")


class Downstream(Table):
    """A small causal language model per tokenizer row and seed, scored in bits per byte.

    Fair by construction (``benchmarks.downstream``): every model of a language sees the same training
    bytes (``train_bytes``), the same context in bytes (``context_bytes``: each row's context in tokens is
    that many bytes at its own bytes per token), the same body (``layers``, ``width``, ``heads``,
    ``mlp_ratio``), the same optimiser, schedule and number of steps, and the same seeds; only the
    embedding and output layer follow the vocabulary."""

    #: trained rows at these vocabulary sizes get a model (default: the report size); pretrained rows always
    vocab_sizes: Annotated[tuple[PositiveInt, ...], Strict(False), Field(min_length=1),
                           AfterValidator(distinct)] | None = None  # fmt: skip
    #: one model per seed: its initialisation and the order of its training batches
    seeds: Annotated[tuple[NonNegativeInt, ...], Strict(False), Field(min_length=1), AfterValidator(distinct)] = (
        0, 1, 2,
    )
    #: UTF-8 bytes of training text per language (the first training documents up to this many bytes)
    train_bytes: PositiveInt = 300_000
    #: the context of a training sequence in bytes; a row's context in tokens is ceil(context_bytes / its
    #: bytes per token on the training text), within [min_context_tokens, max_context_tokens]
    context_bytes: PositiveInt = 512
    min_context_tokens: PositiveInt = 16
    max_context_tokens: PositiveInt = 1024
    #: passes over the training bytes; the number of steps is the same for every row:
    #: ceil(epochs * train_bytes / (batch_size * context_bytes))
    epochs: PositiveNumber = 2.0
    batch_size: PositiveInt = 8
    #: the transformer body (a Llama decoder from Hugging Face ``transformers``), the same for every row
    layers: PositiveInt = 2
    width: PositiveInt = 64
    heads: PositiveInt = 4
    mlp_ratio: PositiveInt = 4
    #: AdamW, linear warm-up over ``warmup`` of the steps, then cosine decay to 10% of ``learning_rate``
    learning_rate: PositiveNumber = 6e-3
    warmup: in_interval(0, 1, closed_low=True) = 0.1  # type: ignore[valid-type]
    weight_decay: NonNegativeNumber = 0.1
    #: the evaluation roles scored (each that the corpus has); at most ``max_eval_items`` documents each
    eval_sets: Annotated[tuple[Literal[SCORED_ROLES], ...], Strict(False), Field(min_length=1),  # type: ignore[valid-type]
                         AfterValidator(distinct)] = SCORED_ROLES  # fmt: skip
    max_eval_items: PositiveInt | None = None
    #: a training checkpoint every this many steps (an interrupted run resumes from it)
    checkpoint_every: PositiveInt = 500

    @model_validator(mode="after")
    def _heads_divide_width(self) -> Downstream:
        if self.width % self.heads:
            raise table_rule(f"heads = {self.heads} must divide width = {self.width}", value=self.heads)
        if self.min_context_tokens > self.max_context_tokens:
            raise table_rule(f"min_context_tokens = {self.min_context_tokens} is above max_context_tokens = "
                             f"{self.max_context_tokens}", value=self.min_context_tokens)  # fmt: skip
        return self
