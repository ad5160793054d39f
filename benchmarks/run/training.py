"""Training with the tokenizer cache: a trained tokenizer's cache key hashes the training text
fingerprint, the family, its training options, the vocab size, the ``bpe`` version and a hash of the
``bpe`` source code (``tokenizer_cache_paths``), so a second run (or another config sharing a unit)
retrains nothing and a change to the library retrains everything.  A sweep trains its largest size once
and derives the smaller ones (``train_sweep``); a damaged cached tokenizer is trained again.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import bpe
from benchmarks.errors import BenchmarkError, warn
from benchmarks.files import (
    atomic_write_text,
    inside,
    tokenizer_cache_dir,
)
from benchmarks.measure.evaluate import (
    TRAIN_ROLE,
)
from benchmarks.run.config import ExperimentConfig
from benchmarks.run.grid import (
    Sweep,
    max_chars_of,
    training_references,
    training_references_fingerprint,
    training_source,
    training_texts,
)
from benchmarks.run.multilingual import MixtureSource
from benchmarks.run.pretrained import PretrainedRow
from benchmarks.run.run_folder import code_fingerprint
from benchmarks.run.units import Unit
from corpora import Corpus


def tokenizer_cache_paths(unit: Unit, corpus: Corpus | MixtureSource,
                          config: ExperimentConfig) -> tuple[Path, Path, dict[str, Any]]:  # fmt: skip
    """Where a trained unit's tokenizer is cached (the tokenizer, its meta file) and the identity its key hashes:
    the training options only (the cached tokenizer encodes with its family's defaults; ``obtain_tokenizer``
    applies the unit's encode-time options), and for a family that trains on gold morphemes
    (bpe-knockout) the fingerprint of the ones it is given."""
    training = unit.training_options
    identity = {"corpus": corpus.fingerprint, "max_chars": max_chars_of(unit, config), "kind": unit.kind,
                "vocab_size": unit.vocab_size, "options": training, "bpe": bpe.__version__,
                "code": code_fingerprint("bpe")}  # fmt: skip
    if bpe.family_class(unit.kind).facts.trains_on_references:
        identity["references"] = training_references_fingerprint(corpus)
    key = hashlib.sha256(json.dumps(identity, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:24]
    cache = tokenizer_cache_dir()
    return inside(cache, f"{key}.json"), inside(cache, f"{key}.meta.json"), identity


def _cache_key_of(path: Path) -> str:
    """The key a cached tokenizer's file is named by (``<key>.json``)."""
    return path.name.removesuffix(".json")


def is_cached(unit: Unit, corpora: Mapping[str, Corpus], config: ExperimentConfig) -> bool:
    """Whether the unit's tokenizer is in the cache (not whether it reads back: ``_cached_tokenizer``); ``corpora``:
    the run's, by spec id."""
    path, meta_path, _ = tokenizer_cache_paths(unit, training_source(unit, corpora, config), config)
    return path.is_file() and meta_path.is_file()


def _cached_tokenizer(unit: Unit, path: Path, meta_path: Path) -> tuple[bpe.Tokenizer, float] | None:
    """The cached tokenizer and its training seconds; None when absent, or damaged (said on stderr)."""
    if not (path.is_file() and meta_path.is_file()):
        return None
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        seconds = meta["train_seconds"]
        if meta.get("key") != _cache_key_of(path):
            raise ValueError(f"its meta file names key {meta.get('key')!r}, not {_cache_key_of(path)!r}")
        if meta.get("sha256") != hashlib.sha256(path.read_bytes()).hexdigest():
            raise ValueError("the tokenizer file is not the one the entry recorded (its SHA-256 differs)")
        tokenizer = bpe.load(path)
        if tokenizer.family != unit.kind or not isinstance(seconds, (int, float)):
            raise ValueError(f"holds a {tokenizer.family} tokenizer, or no training time")
    except (OSError, ValueError, KeyError, TypeError) as exc:  # TokenizerError and JSONDecodeError are ValueErrors
        warn(f"cached tokenizer {path} is damaged ({exc}); training it again")
        return None
    return tokenizer, float(seconds)


def obtain_tokenizer(unit: Unit, corpora: Mapping[str, Corpus], config: ExperimentConfig,
                     pretrained: dict[str, PretrainedRow]) -> tuple[bpe.Tokenizer, float]:  # fmt: skip
    """Load the unit's tokenizer from the cache, or train it (a pretrained row: load it); returns it
    with its training seconds.  A run trains its sweeps first (``train_sweep``), so here a trained
    unit is normally cached."""
    if unit.row_type == "production":
        return pretrained[unit.tokenizer].load(), 0.0
    tokenizer, seconds = _vocabulary(unit, training_source(unit, corpora, config), config)
    return tokenizer.with_encode_options(**unit.encode_time_options), seconds


def _vocabulary(unit: Unit, corpus: Corpus | MixtureSource, config: ExperimentConfig) -> tuple[bpe.Tokenizer, float]:
    """The unit's trained tokenizer with its training options only (encode-time options at their
    defaults), from the cache or trained, with its training seconds."""
    path, meta_path, _ = tokenizer_cache_paths(unit, corpus, config)
    cached = _cached_tokenizer(unit, path, meta_path)
    if cached is not None:
        return cached
    training = unit.training_options
    if bpe.family_class(unit.kind).facts.trains_on_references:
        training["references"] = training_references(corpus)
    family = bpe.family_class(unit.kind)
    if family.facts.training_input == "parallel":  # each language's text apart, with its parallel dev sentences
        assert isinstance(corpus, MixtureSource), "the config admits such a family in [[multilingual]] tables only"
        arguments: tuple[Any, ...] = (corpus.texts_by_corpus(), corpus.parallel_dev())
        start = time.perf_counter()
        tokenizer = _trained(unit, family.train_parallel, *arguments, unit.vocab_size, **training)
    else:
        texts = _training_texts_of(unit, corpus, config)
        start = time.perf_counter()
        tokenizer = _trained(unit, bpe.train, unit.kind, texts, unit.vocab_size, **training)
    seconds = time.perf_counter() - start
    _cache_tokenizer(unit, corpus, config, tokenizer, seconds)
    return tokenizer, seconds


def train_sweep(sweep: Sweep, corpora: Mapping[str, Corpus], config: ExperimentConfig) -> None:
    """Put the tokenizer of every unit of ``sweep`` in the cache, training at most once: the largest
    size is trained (or taken from the cache) and each smaller size not yet cached is derived from
    it (``bpe.derive``).  Its ``train_seconds``: the training's time for the largest size, the time
    of the derivation for a derived size (docs/metrics.md).  ``corpora``: the run's, by spec id."""
    corpus = training_source(sweep.largest, corpora, config)  # every unit of a sweep trains on the same text
    missing = [unit for unit in sweep.units if not is_cached(unit, corpora, config)]
    if not missing:
        return
    largest = sweep.largest
    trained, _ = _vocabulary(largest, corpus, config)  # trained, unless it is cached
    for unit in missing:
        if unit.vocab_size == largest.vocab_size:
            continue
        start = time.perf_counter()
        derived = _trained(unit, bpe.derive, trained, unit.vocab_size, trained_vocab_size=largest.vocab_size)
        _cache_tokenizer(unit, corpus, config, derived, time.perf_counter() - start, derived_from=largest.vocab_size)


def _training_texts_of(unit: Unit, corpus: Corpus | MixtureSource, config: ExperimentConfig) -> list[str]:
    texts = training_texts(corpus, max_chars_of(unit, config))
    if not texts:
        raise BenchmarkError(f"corpus {unit.corpus!r} has no {TRAIN_ROLE!r} documents to train on")
    return texts


def _trained(unit: Unit, make: Callable[..., bpe.Tokenizer], *args: Any, **kwargs: Any) -> bpe.Tokenizer:
    """``make(*args, **kwargs)`` (``bpe.train``, ``bpe.derive``), its TokenizerError said as the unit's error."""
    try:
        return make(*args, **kwargs)
    except bpe.TokenizerError as exc:
        raise BenchmarkError(f"training {unit.tokenizer} (vocab {unit.vocab_size}) on {unit.corpus}: {exc}") from None


def _cache_tokenizer(unit: Unit, corpus: Corpus | MixtureSource, config: ExperimentConfig, tokenizer: bpe.Tokenizer,
                     seconds: float, derived_from: int | None = None) -> None:  # fmt: skip
    path, meta_path, identity = tokenizer_cache_paths(unit, corpus, config)
    tokenizer.save(path)
    # the key and the file's digest: an entry whose file was replaced (even by a valid tokenizer) is not trusted
    meta = {"train_seconds": seconds, "identity": identity, "key": _cache_key_of(path),
            "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}  # fmt: skip
    if derived_from is not None:
        meta["derived_from_vocab_size"] = derived_from
    atomic_write_text(meta_path, json.dumps(meta) + "\n")
