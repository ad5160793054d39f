"""The grid of a run: its units, the trainings that serve them (``plan_sweeps``), the text each trains
on, and the checks of the whole grid that run once every corpus is loaded and before any training or
any write to the output directory.

One training per sweep: a BPE merge list is prefix-closed (the first k merges of a run are the run
stopped after k merges, given the trainer's deterministic tie-break) and a word vocabulary is cut
from one frequency ranking, so the units of one corpus, family, options and training text are served
by one training at their largest size; the smaller sizes are derived from it (``bpe.derive``, equal
to training them directly: tests/bpe/training/test_sweep.py).  The other families train each size.

``check_grid`` finds, in one pass, what would otherwise fail late or give an empty or partial
result: two config entries naming the same corpus, a corpus without training documents (when the
run trains) or without test/eval documents, two ``train_chars`` values that give a corpus the same
training text, a vocabulary size below a family's floor on the actual
training text (``bpe.Tokenizer.vocab_floor``: the alphabet of char-bpe, the covered characters of
sentencepiece), and a metric the config selects that no unit of the grid can compute.  What can be
checked without the corpora (names, duplicates, static floors) is checked earlier, by the config
model (``benchmarks.run.config``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import bpe
from benchmarks.errors import BenchmarkError
from benchmarks.measure.evaluate import TRAIN_ROLE
from benchmarks.measure.metrics import select_metrics
from benchmarks.measure.registry import Capability, Metric, Needs, capabilities_of
from benchmarks.run.config import ExperimentConfig
from benchmarks.run.multilingual import MixtureSource, mixture_source
from benchmarks.run.parallel import ENGLISH, ParallelPlan
from benchmarks.run.pretrained import PretrainedRow
from benchmarks.run.units import Unit
from corpora import Corpus

#: the roles a unit is evaluated on, in this order
EVAL_ROLES = ("test", "eval")
#: needs computed on the test or eval documents
_REFERENCE_NEEDS = (Needs.MORPHEME_REFERENCE, Needs.MORPHEME_REFERENCE_VOCABULARY, Needs.MORPHSCORE_REFERENCE,
                    Needs.MORPHSCORE_ROWS)  # fmt: skip
_PARITY = (Needs.ENGLISH_PARTNER, Needs.ENGLISH_PARTNER_DEV, Needs.ENGLISH_PARTNER_HELD_OUT,
           Needs.ENGLISH_PARTNER_JOINED)  # fmt: skip
_EVALUATION_TEXT = (Needs.RUNNING_TEXT, Needs.PERTURBED_TEXT, Needs.ISOLATED_WORDS, Needs.CHAR_BASELINE,
                    Needs.ENGLISH_PARTNER)  # fmt: skip


def plan_units(config: ExperimentConfig, corpora: dict[str, Corpus],
               pretrained: dict[str, PretrainedRow]) -> list[Unit]:  # fmt: skip
    """Every unit of the grid, corpus by corpus in the config's order (``corpora`` keeps it); trained
    rows (each size at each ``train_chars`` value), then pretrained rows (``pretrained``, in config order)."""
    units: list[Unit] = []
    for corpus_id, corpus in corpora.items():
        language = corpus.spec.language
        for entry in config.trained_entries:
            if entry.corpora is not None and corpus_id not in entry.corpora:
                continue
            for train_chars in config.train_chars or (None,):
                for size in entry.vocab_sizes:
                    options = tuple(sorted(entry.options.items()))
                    units.append(Unit(corpus_id, language, entry.label, entry.kind, entry.row_type, size, options,
                                      train_chars, entry.settings))  # fmt: skip
        for label, row in pretrained.items():
            units.append(Unit(corpus_id, language, label, row.kind, "production", None))
    return units


@dataclass(frozen=True)
class Sweep:
    """Trained units served by one training: the same corpus, family, options and training text.
    ``units`` are ordered by vocabulary size, largest first (the size trained; the others derived)."""

    units: tuple[Unit, ...]

    @property
    def largest(self) -> Unit:
        return self.units[0]


def plan_sweeps(units: list[Unit], config: ExperimentConfig) -> list[Sweep]:
    """The trainings that serve the trained units of ``units`` (pretrained rows need none), in the
    order of their first unit: one sweep per (corpus, family, options, training text) for a
    derivable family (``bpe.training.sweep``), one per unit for the others.  Two units of one size in a sweep
    (two labels of the same family and options) share one tokenizer.  A multilingual row trains once for all
    the corpora it is evaluated on: its units share one sweep (one per size when the family is not derivable)."""
    groups: dict[tuple, list[Unit]] = {}
    shared = {row.label for entry in config.multilingual for row in entry.rows()}
    for position, unit in enumerate(units):
        if unit.row_type == "production":
            continue
        # rows that differ only in encode-time options (``Unit.training_options``) share one vocabulary
        training = tuple(sorted(unit.training_options.items()))
        derivable = bpe.family_class(unit.kind).facts.derivable
        if unit.tokenizer in shared:
            key = ("multilingual", unit.tokenizer) if derivable else ("multilingual", unit.tokenizer, unit.vocab_size)
        else:
            key = (unit.corpus, unit.kind, training, unit.train_chars) if derivable else (position,)
        groups.setdefault(key, []).append(unit)
    return [Sweep(tuple(sorted(group, key=lambda unit: -(unit.vocab_size or 0)))) for group in groups.values()]


def max_chars_of(unit: Unit, config: ExperimentConfig) -> int | None:
    """The cap on the unit's training text: its ``train_chars`` value, else the config's ``max_train_chars``; none
    for a multilingual row, whose sample is already sized (``benchmarks.run.multilingual``)."""
    if config.mixture_of(unit.tokenizer) is not None:
        return None
    return unit.train_chars if unit.train_chars is not None else config.max_train_chars


def training_source(unit: Unit, corpora: Mapping[str, Corpus], config: ExperimentConfig) -> Corpus | MixtureSource:
    """What the unit's tokenizer trains on: its corpus, or for a multilingual row the sample of its corpora."""
    row = config.mixture_of(unit.tokenizer)
    return corpora[unit.corpus] if row is None else mixture_source(row, corpora, config.max_train_chars)


def training_texts(corpus: Corpus | MixtureSource, max_chars: int | None) -> list[str]:
    """The training documents' texts, in order, up to ``max_chars`` characters (the first documents kept)."""
    texts: list[str] = []
    total = 0
    for document in corpus.documents(TRAIN_ROLE):
        if max_chars is not None and total >= max_chars:
            break
        texts.append(document.text)
        total += len(document.text)
    return texts


def training_references(corpus: Corpus) -> dict[str, list[int]]:
    """The gold morphemes a morpheme-supervised family (bpe-knockout) trains on: every word of the
    corpus's ``role = "training"`` references (its first analysis, as inner character boundaries),
    except the words any evaluated reference of the corpus scores (gold or silver: silver references
    analyze the test words), so the boundary metrics never score a word the tokenizer was shown.
    Words in code point order; a word in several training references keeps the first one's analysis
    (references by name)."""
    scored = {word for reference in corpus.references().values() for word in reference.analyses}
    words: dict[str, list[int]] = {}
    for _, reference in sorted(corpus.training_references().items()):
        for word, alternatives in reference.analyses.items():
            if word not in scored and word not in words:
                words[word] = sorted(alternatives[0])
    return dict(sorted(words.items()))


def training_references_fingerprint(corpus: Corpus) -> str:
    """Hash of ``training_references``: part of a morpheme-supervised tokenizer's cache key."""
    blob = json.dumps(training_references(corpus), ensure_ascii=False, sort_keys=True).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def _check_training_references(config: ExperimentConfig, corpora: dict[str, Corpus]) -> None:
    """A morpheme-supervised row needs gold morphemes that no metric of the run scores on each corpus
    it runs on: refused, before any training, where the corpus has none."""
    for position, entry in enumerate(config.tokenizers):
        if not bpe.family_class(entry.kind).facts.trains_on_references:
            continue
        for corpus in corpora.values():
            if entry.corpora is not None and corpus.spec.id not in entry.corpora:
                continue
            if not training_references(corpus):
                raise BenchmarkError(
                    f"{config.source}: tokenizers[{position}] ({entry.label}): {entry.kind} trains on gold morphemes, "
                    f"and corpus {corpus.spec.id!r} has none that its metrics do not score (a [[references]] entry "
                    f"with role = \"training\" in the corpus spec, read from the data root; its words minus those "
                    f"of the evaluated references). Without one the row would be trained on the words it is scored "
                    f"on: restrict the entry with corpora = [...] to corpora that have one",
                    code="no_training_references",
                    value=corpus.spec.id,
                    field=f"tokenizers[{position}]",
                )


def check_grid(config: ExperimentConfig, corpora: dict[str, Corpus], pretrained: dict[str, PretrainedRow],
               parallel: ParallelPlan, trained_before: Callable[[Unit], bool]) -> None:
    """Raise a BenchmarkError naming the config, the entry and the corpus for the first problem of the
    grid.  ``corpora``: every loaded corpus by config entry, in the config's order; ``pretrained``: the
    pretrained rows by label; ``parallel``: the run's pairing of parallel evaluation sets;
    ``trained_before(unit)``: True when the unit's tokenizer is cached (it trained, so its size is
    above the floor, and its text needs no second look)."""
    where = config.source
    by_id: dict[str, str] = {}
    for entry, corpus in corpora.items():
        if corpus.spec.id in by_id:
            raise BenchmarkError(f"{where}: corpora: {by_id[corpus.spec.id]!r} and {entry!r} are the same corpus "
                                 f"({corpus.spec.id!r}); list it once", code="duplicate_corpus", value=corpus.spec.id,
                                 field="corpora")  # fmt: skip
        by_id[corpus.spec.id] = entry
    for table, entries in (("tokenizers", config.tokenizers), ("multilingual", config.multilingual)):
        for position, tokenizer in enumerate(entries):
            unknown = [corpus_id for corpus_id in tokenizer.corpora or () if corpus_id not in by_id]
            if unknown:
                raise BenchmarkError(f"{where}: {table}[{position}] ({tokenizer.label}): corpora: {unknown[0]!r} is "
                                     f"not a corpus of this config (its corpus ids: {', '.join(by_id)})",
                                     code="unknown_corpus", value=unknown[0],
                                     field=f"{table}[{position}].corpora")  # fmt: skip
    metrics = select_metrics(config.metrics, config.extra_metrics)
    for entry, corpus in corpora.items():
        name = f"corpus {corpus.spec.id!r}" + (f" ({entry})" if entry != corpus.spec.id else "")
        if config.trained_entries and not corpus.documents(TRAIN_ROLE):
            raise BenchmarkError(f"{where}: {name} has no training documents: give a source role = \"train\" or "
                                 f"\"all\"", code="no_training_documents", value=corpus.spec.id)  # fmt: skip
        _check_train_chars(config, name, corpus)
        if any(metric.needs in _EVALUATION_TEXT for metric in metrics) and not _evaluated(corpus):
            raise BenchmarkError(
                f"{where}: {name} has no test or eval documents to compute the metrics on: give a source "
                f"role = \"test\" or \"eval\", or more text to a role = \"all\" source (it keeps test_fraction "
                f"= {corpus.spec.test_fraction} of the documents for test)",
                code="no_evaluation_documents",
                value=corpus.spec.id,
            )
    # every metric a config selects (optional metrics only by name), the ones it names first
    named = set(config.metrics or ()) | set(config.extra_metrics)
    selected = metrics if config.metrics is not None else [metric for metric in metrics if metric.optional]
    for metric in sorted(selected, key=lambda metric: metric.name not in named):
        missing = _missing_for(metric, config, corpora, pretrained, parallel)
        if missing:
            key = "extra_metrics" if metric.name in config.extra_metrics else "metrics"
            raise BenchmarkError(f"{where}: {key}: {metric.name!r} cannot be computed by this run: {missing}",
                                 code="metric_not_computable", value=metric.name, field=key)  # fmt: skip
    _check_training_references(config, corpora)
    _check_parallel_training(config, {corpus.spec.id: corpus for corpus in corpora.values()})
    _check_vocab_floors(config, {corpus.spec.id: corpus for corpus in corpora.values()}, trained_before)


def _evaluated(corpus: Corpus) -> bool:
    return any(corpus.documents(role) for role in EVAL_ROLES)


def _has_reference(corpus: Corpus, morphscore: bool) -> bool:
    """Whether ``corpus.references()`` holds a MorphScore reference (``morphscore``) or another one, known
    without running the silver analyzers: a silver reference always exists and is never MorphScore."""
    return (not morphscore and bool(corpus.silver_analyzers())) or any(
        reference.is_morphscore == morphscore for reference in corpus.gold_references().values())  # fmt: skip


def _missing_for(metric: Metric, config: ExperimentConfig, corpora: dict[str, Corpus],
                 pretrained: dict[str, PretrainedRow], parallel: ParallelPlan) -> str:
    """What the grid lacks for ``metric`` to have a single value (empty when nothing is missing)."""
    kinds = [entry.kind for entry in config.trained_entries] + [row.kind for row in pretrained.values()]
    if not any(metric.applies_to(capabilities_of(kind)) for kind in kinds):
        needed = ", ".join(capability.value for capability in metric.requires)
        return f"it applies only to tokenizers where {needed}, and the config has none"
    if metric.needs is Needs.CHAR_BASELINE and not any(Capability.CHARACTER_TOKENS in capabilities_of(kind)
                                                        for kind in kinds):  # fmt: skip
        return 'it compares each row with a char-level row: add a [[tokenizers]] entry of kind = "char"'
    if metric.needs in _PARITY and not parallel.pairs:
        notes = "; ".join(parallel.notes) or "no corpus has a parallel evaluation set"
        return (f"it pairs the parallel sentences of a corpus with those of an English ({ENGLISH}) corpus of the "
                f"same parallel set, and this run has no such pair ({notes})")
    if metric.needs in _REFERENCE_NEEDS:
        morphscore = metric.needs in (Needs.MORPHSCORE_REFERENCE, Needs.MORPHSCORE_ROWS)
        if not any(_has_reference(corpus, morphscore) for corpus in corpora.values()):
            kind = "MorphScore" if morphscore else "morpheme segmentation"
            return f"no corpus has a {kind} reference (the spec's [[references]]; gold files need a data root)"
    if metric.name == "train_seconds" and not config.trained_entries:
        return "the config trains no tokenizer"
    return ""


def _check_parallel_training(config: ExperimentConfig, corpora: dict[str, Corpus]) -> None:
    """A multilingual row of a family that trains on parallel text needs the parallel dev sentences of every corpus
    of its sample (``MixtureSource.parallel_dev`` raises, naming the corpus, where one has none)."""
    for table in config.multilingual:
        if bpe.family_class(table.kind).facts.training_input == "parallel":
            mixture_source(table.rows()[0], corpora, config.max_train_chars).parallel_dev()


def _check_vocab_floors(config: ExperimentConfig, corpora: dict[str, Corpus],
                        trained_before: Callable[[Unit], bool]) -> None:  # fmt: skip
    """Every vocabulary size against its family's floor on each training text (a corpus's, or a multilingual
    row's sample): the smallest size of each entry on each, unless that unit's tokenizer is cached."""
    fields = {entry.label: (f"tokenizers[{position}]", entry) for position, entry in enumerate(config.tokenizers)}
    for position, table in enumerate(config.multilingual):
        fields.update({row.label: (f"multilingual[{position}]", row) for row in table.rows()})
    smallest: dict[tuple[str, str, int | None], Unit] = {}
    for unit in plan_units(config, corpora, {}):  # trained units only
        if unit.row_type != "production":
            shared = config.mixture_of(unit.tokenizer) is not None
            key = ("" if shared else unit.corpus, unit.tokenizer, unit.train_chars)
            if key not in smallest or unit.vocab_size < smallest[key].vocab_size:
                smallest[key] = unit
    texts: dict[tuple[str, str, int | None], list[str]] = {}
    for (corpus_id, label, train_chars), unit in smallest.items():
        if trained_before(unit):
            continue
        # one text per corpus and cap; a multilingual row's sample is its own
        text_key = (corpus_id, label if not corpus_id else "", max_chars_of(unit, config))
        if text_key not in texts:
            texts[text_key] = training_texts(training_source(unit, corpora, config), text_key[2])
        field, entry = fields[label]
        floor = bpe.family_class(entry.kind).vocab_floor(texts[text_key], **entry.options)
        if unit.vocab_size < floor.minimum:
            text = f"corpus {corpus_id!r}" if corpus_id else "its multilingual sample"
            text += f" (train_chars = {train_chars})" if train_chars is not None else ""
            raise BenchmarkError(
                f"{config.source}: {field} ({label}): vocab_size {unit.vocab_size} is below the "
                f"minimum {floor.minimum} for {entry.kind} on {text} ({floor.parts}){floor.hint}",
                code="vocab_below_floor",
                value=unit.vocab_size,
                field=field,
            )


def _check_train_chars(config: ExperimentConfig, name: str, corpus: Corpus) -> None:
    """Two ``train_chars`` values that give one corpus the same training text (the same first documents:
    the corpus has too little training text, or its documents are longer than the step) would be two
    rows of one tokenizer."""
    documents = {}
    for train_chars in sorted(config.train_chars or ()):
        texts = training_texts(corpus, train_chars)
        count = len(texts)
        if count in documents:
            raise BenchmarkError(
                f"{config.source}: train_chars = {documents[count]} and {train_chars} give {name} the same training "
                f"text (its first {count} training documents, {sum(map(len, texts)):,} characters): drop one, or "
                "choose values further apart",
                code="same_training_text",
                value=train_chars,
                field="train_chars",
            )
        documents[count] = train_chars
