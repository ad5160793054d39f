"""The training sample of a shared multilingual tokenizer (a ``[[multilingual]]`` row of a config).

Temperature sampling over languages, as XLM-R (Conneau et al. 2020, "Unsupervised Cross-lingual
Representation Learning at Scale") and mT5 (Xue et al. 2021) sample their pre-training text: with ``n_i`` the
characters of corpus ``i``'s training text (capped by the config's ``max_train_chars``), language ``i`` is drawn
with probability

    q_i = n_i^alpha / sum_j n_j^alpha

so ``alpha = 1`` keeps the corpora's proportions, ``alpha = 0`` gives every language the same share, and the
values in between (XLM-R and mT5 use 0.3) raise the share of the smaller corpora.  The sample holds
``T = train_chars`` characters (default: ``sum_i n_i``), of which language ``i`` gets ``t_i = q_i * T``:

- its training documents in corpus order, from the first, until at least ``t_i`` characters are taken (the
  last document whole);
- started again from its first document when ``t_i > n_i``: a document repeated k times is one sampled k
  times, as a sampler with replacement gives it in expectation.

No random draw is made: the sample is a function of the corpora, ``alpha`` and ``T`` alone.  The documents of
the sample are the languages' documents in the config's corpus order (``MixtureSource.documents``).

A family that trains on parallel text (``FamilyFacts.training_input == "parallel"``: parity-aware BPE) also gets
each language's sample apart, with its parallel dev sentences (``MixtureSource.parallel_dev``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchmarks.errors import BenchmarkError
from benchmarks.run.entries import MultilingualEntry
from corpora import Corpus, Document

TRAIN_ROLE = "train"


def language_shares(sizes: Sequence[int], alpha: float) -> list[float]:
    """``q_i = n_i^alpha / sum_j n_j^alpha`` for the corpus sizes ``n_i`` (module docstring)."""
    weights = [float(size) ** alpha if size > 0 else 0.0 for size in sizes]
    total = sum(weights)
    return [weight / total for weight in weights]


def sample_documents(documents: Sequence[Document], target: int) -> list[Document]:
    """``documents`` in order, started again from the first as often as needed, until at least ``target``
    characters are taken (the last document whole); [] for a target of 0 or no text."""
    if target <= 0 or not any(document.text for document in documents):
        return []
    taken: list[Document] = []
    total = 0
    while total < target:
        for document in documents:
            if total >= target:
                break
            taken.append(document)
            total += len(document.text)
    return taken


@dataclass(frozen=True)
class MixtureSource:
    """The training text of one multilingual row: each corpus's sample, in the row's corpus order.  It stands
    where a ``Corpus`` is the training source (``benchmarks.run.training``): ``fingerprint``, ``documents``."""

    corpora: tuple[Corpus, ...]
    alpha: float
    train_chars: int | None  # None: the corpora's training texts together
    max_chars: int | None  # the config's cap on each corpus's training text
    _samples: dict[str, list[Document]] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        texts = [_capped(corpus.documents(TRAIN_ROLE), self.max_chars) for corpus in self.corpora]
        sizes = [sum(len(document.text) for document in documents) for documents in texts]
        if not sum(sizes):
            raise BenchmarkError(f"multilingual sample of {', '.join(self.ids)}: none of these corpora has training "
                                 "text", code="no_training_documents", value=self.ids[0])  # fmt: skip
        total = self.train_chars if self.train_chars is not None else sum(sizes)
        for corpus, documents, share in zip(self.corpora, texts, language_shares(sizes, self.alpha), strict=True):
            self._samples[corpus.spec.id] = sample_documents(documents, round(share * total))

    @property
    def ids(self) -> list[str]:
        return [corpus.spec.id for corpus in self.corpora]

    @property
    def fingerprint(self) -> str:
        """Hash of what the sample is drawn from and how: each corpus's content fingerprint, alpha, the sizes."""
        identity = {"corpora": [corpus.fingerprint for corpus in self.corpora], "alpha": self.alpha,
                    "train_chars": self.train_chars, "max_chars": self.max_chars}  # fmt: skip
        return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()

    def documents(self, role: str) -> list[Document]:
        """The sample (role ``train``), every language's documents in corpus order; a sample has no other role."""
        if role != TRAIN_ROLE:
            return []
        return [document for corpus_id in self.ids for document in self._samples[corpus_id]]

    def texts_by_corpus(self) -> dict[str, list[str]]:
        """Each corpus's sampled training texts, by corpus id."""
        return {corpus_id: [document.text for document in self._samples[corpus_id]] for corpus_id in self.ids}

    def sampled_chars(self) -> dict[str, int]:
        """Characters of each corpus's sample, by corpus id (the manifest and the report state them)."""
        return {corpus_id: sum(len(document.text) for document in self._samples[corpus_id]) for corpus_id in self.ids}

    def parallel_dev(self) -> dict[str, list[str]]:
        """Each corpus's parallel dev sentences (its ``[sources.parallel]`` dev split), by corpus id, on the keys
        every corpus of the sample has, in key order: line-aligned across languages.  A BenchmarkError naming the
        corpus when one declares no parallel set with a dev split, or when they share no key."""
        keyed: list[dict[str, str]] = []
        for corpus in self.corpora:
            parallel = corpus.spec.parallel
            if parallel is None or parallel.dev is None:
                raise BenchmarkError(
                    f"corpus {corpus.spec.id!r}: a tokenizer trained for parity across languages needs the parallel "
                    "dev sentences of every corpus it trains on (a [sources.parallel] table with a dev split in the "
                    "corpus spec), and this corpus declares none",
                    code="no_parallel_dev",
                    value=corpus.spec.id,
                )
            keyed.append({document.key: document.text for document in corpus.documents("eval")
                          if document.key is not None and parallel.in_dev(document.key)})  # fmt: skip
        shared = [key for key in keyed[0] if all(key in others for others in keyed[1:])]
        if not shared:
            raise BenchmarkError(f"multilingual sample of {', '.join(self.ids)}: the corpora share no parallel dev "
                                 "sentence key", code="no_parallel_dev", value=self.ids[0])  # fmt: skip
        return {corpus_id: [texts[key] for key in shared] for corpus_id, texts in zip(self.ids, keyed, strict=True)}


def mixture_source(row: MultilingualEntry, corpora: Mapping[str, Corpus], max_chars: int | None) -> MixtureSource:
    """The sample of a multilingual row (one ``alpha``) from the run's ``corpora`` (by spec id, in config order):
    its ``corpora``, else every corpus of the run."""
    ids = row.corpora or tuple(corpora)
    return MixtureSource(tuple(corpora[corpus_id] for corpus_id in ids), row.alpha[0], row.train_chars, max_chars)


def sample_facts(tables: Sequence[MultilingualEntry], corpora: Mapping[str, Corpus],
                 max_chars: int | None) -> dict[str, dict[str, Any]]:  # fmt: skip
    """What the manifest records of each multilingual row's sample, by row label: alpha and each corpus's
    characters in the sample."""
    rows = [row for table in tables for row in table.rows()]
    return {row.label: {"alpha": row.alpha[0], "characters": mixture_source(row, corpora, max_chars).sampled_chars()}
            for row in rows}  # fmt: skip


def _capped(documents: list[Document], max_chars: int | None) -> list[Document]:
    """The first documents up to ``max_chars`` characters, as ``grid.training_texts`` caps a corpus."""
    taken: list[Document] = []
    total = 0
    for document in documents:
        if max_chars is not None and total >= max_chars:
            break
        taken.append(document)
        total += len(document.text)
    return taken
