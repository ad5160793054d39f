"""Parallel evaluation sets: which sentences of two corpora are translations of each other.

A corpus's evaluation source may declare the parallel set its sentences belong to and the key that
names each sentence in it (``[sources.parallel]`` of the corpus spec: FLORES-200 by line number, UD
PUD by ``sent_id``; ``Document.key``).  Parity against English pairs a corpus's sentences with those
of its English partner by that key, never by position:

* the partner of a corpus is the run's English corpus of the same set (the first by corpus id);
* the pairs are the keys both hold, in the corpus's own reading order.  When either side holds
  sentences the other lacks, parity is computed over the common ones: ``n`` of the rows says how
  many, a ``BenchmarkWarning`` and the manifest's ``parallel`` notes say what was left out;
* keys are compared as text, whatever way each spec reads them (a FLORES line number, a key column
  holding line numbers); two corpora of one set that share no key, or that declare different dev
  splits, are an error, raised before any tokenizer is trained.

``plan_parallel`` makes the plan once per run from the loaded corpora; the evaluator reads it to
pair unit results (``benchmarks.run.evaluate``) and to build each unit's joined text (Petrov et al.'s
single string per language, ``corpora.flores.petrov_join``).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from benchmarks.errors import BenchmarkError, BenchmarkWarning
from corpora import Corpus
from corpora.flores import REFERENCE_LANGUAGE, petrov_join

PARALLEL_ROLE = "eval"  # the role a parallel source feeds (corpus specs allow [sources.parallel] there only)
ENGLISH = REFERENCE_LANGUAGE  # the English partner of every parallel corpus


@dataclass(frozen=True)
class ParallelPair:
    """The sentences a corpus shares with its English partner, matched by key."""

    corpus: str
    partner: str  # the English corpus
    set: str  # the parallel set both declare (e.g. flores-200)
    keys: tuple[str, ...]  # keys held by both, in the corpus's reading order
    ids: tuple[str, ...]  # the corpus's document of each key
    partner_ids: tuple[str, ...]  # the partner's document of each key
    dev: tuple[bool, ...] | None  # per key: in the set's dev split (None: the set declares no dev split)

    @property
    def n(self) -> int:
        return len(self.keys)

    def parts(self) -> list[list[int]]:
        """Positions of the pairs in the files Petrov et al. join: the dev split, then the other
        sentences (one part when no dev split is declared); empty parts are left out."""
        if self.dev is None:
            return [list(range(self.n))]
        dev = [i for i, in_dev in enumerate(self.dev) if in_dev]
        rest = [i for i, in_dev in enumerate(self.dev) if not in_dev]
        return [part for part in (dev, rest) if part]


@dataclass(frozen=True)
class ParallelPlan:
    pairs: dict[str, ParallelPair] = field(default_factory=dict)  # by (non-English) corpus id
    notes: tuple[str, ...] = ()  # what is not paired, or paired only in part, and why

    def joined_texts(self, corpora: Mapping[str, Corpus]) -> dict[str, dict[str, str]]:
        """Per corpus, Petrov et al.'s joined text of each pair it belongs to, by the pair's corpus:
        a non-English corpus has its own; its English partner one per corpus it is paired with (the
        sentences in common differ when the sets overlap only in part)."""
        joined: dict[str, dict[str, str]] = {}
        for pair in self.pairs.values():
            for corpus_id, ids in ((pair.corpus, pair.ids), (pair.partner, pair.partner_ids)):
                texts = {document.id: document.text for document in corpora[corpus_id].documents(PARALLEL_ROLE)}
                files = [[texts[ids[i]] for i in part] for part in pair.parts()]
                joined.setdefault(corpus_id, {})[pair.corpus] = petrov_join(files)
        return joined

    def why_no_parity(self) -> str | None:
        """Why the run has no parity rows (None when some corpus is paired with English)."""
        return why_no_parity(self.to_json())

    def to_json(self) -> dict[str, object]:
        """The manifest's ``parallel`` entry: every pair's size and the notes."""
        pairs = {
            corpus: {"partner": pair.partner, "set": pair.set, "sentences": pair.n,
                     "dev_sentences": None if pair.dev is None else sum(pair.dev)}
            for corpus, pair in sorted(self.pairs.items())
        }  # fmt: skip
        return {"pairs": pairs, "notes": list(self.notes)}


def why_no_parity(entry: Mapping[str, object] | None) -> str | None:
    """From a manifest's ``parallel`` entry (``ParallelPlan.to_json``): why no corpus has parity rows,
    or None when some corpus is paired with English."""
    if entry is None or entry.get("pairs"):
        return None
    notes = list(entry.get("notes") or [])  # type: ignore[call-overload]
    return "; ".join(notes) if notes else (
        "no non-English corpus of the run declares a parallel set ([sources.parallel] in its corpus spec) that "
        "an English corpus of the run also declares"
    )


def _keyed(corpus: Corpus) -> dict[str, str]:
    """Key -> document id of the corpus's parallel sentences, in reading order."""
    return {document.key: document.id for document in corpus.documents(PARALLEL_ROLE) if document.key is not None}


def plan_parallel(corpora: Mapping[str, Corpus]) -> ParallelPlan:
    """Pair every non-English corpus with a parallel evaluation set with its English partner (see
    the module docstring); warns about partial overlaps and raises on disjoint sets."""
    english = sorted(cid for cid, corpus in corpora.items() if corpus.spec.language == ENGLISH)
    pairs: dict[str, ParallelPair] = {}
    notes: list[str] = []
    for corpus_id, corpus in corpora.items():
        if corpus.spec.language == ENGLISH or not corpus.documents(PARALLEL_ROLE):
            continue
        parallel = corpus.spec.parallel
        if parallel is None:
            notes.append(f"{corpus_id}: its eval set declares no parallel set ([sources.parallel] in the corpus "
                         "spec), so it has no parity rows")  # fmt: skip
            continue
        partner = next((cid for cid in english if _same_set(corpora[cid], parallel.name)), None)
        if partner is None:
            notes.append(f"{corpus_id}: no English corpus of the run has parallel set {parallel.name!r}, "
                         "so it has no parity rows")  # fmt: skip
            continue
        pair = _pair(corpus_id, corpus, partner, corpora[partner])
        misaligned = _misalignment(pair, corpus, corpora[partner])
        if misaligned is not None:
            if parallel.on_misaligned == "fail":
                raise BenchmarkError(f"{misaligned}; refused (on_misaligned = \"fail\" in its [sources.parallel])",
                                     code="misaligned_parallel_set", value=corpus_id)  # fmt: skip
            warnings.warn(misaligned, BenchmarkWarning, stacklevel=2)
            notes.append(misaligned)
        pairs[corpus_id] = pair
        own, theirs = len(_keyed(corpus)), len(_keyed(corpora[partner]))
        if pair.n < own or pair.n < theirs:
            note = (f"{corpus_id}: {pair.n:,} of its {own:,} {parallel.name} sentences and of the {theirs:,} of "
                    f"{partner} share a {parallel.key} key: parity against English is computed over those "
                    f"{pair.n:,}")  # fmt: skip
            warnings.warn(note, BenchmarkWarning, stacklevel=2)
            notes.append(note)
        if pair.dev is None or not any(pair.dev):
            why = "declares no dev split" if pair.dev is None else "has none of these sentences in its dev split"
            notes.append(f"{corpus_id}: parallel set {parallel.name!r} {why}, so it has no "
                         "parity_mean_ratio_vs_eng rows (TokSuite's definition reads the dev split)")  # fmt: skip
    return ParallelPlan(pairs, tuple(notes))


#: below this Pearson r of the paired sentences' character lengths a pairing is called misaligned:
#: real parallel sets give 0.86-0.92 (FLORES-200, English against Turkish, Russian, Korean), the same
#: files paired 1,500 lines apart about 0
MIN_LENGTH_CORRELATION = 0.5
#: fewer pairs than this are not checked (r of a handful of lengths says little)
MIN_PAIRS_CHECKED = 30


def length_correlation(pair: ParallelPair, corpus: Corpus, partner: Corpus) -> float | None:
    """Pearson r of the character lengths of the paired sentences; None when it is undefined (fewer
    than ``MIN_PAIRS_CHECKED`` pairs, or lengths all equal on one side)."""
    if pair.n < MIN_PAIRS_CHECKED:
        return None
    mine = {document.id: len(document.text) for document in corpus.documents(PARALLEL_ROLE)}
    theirs = {document.id: len(document.text) for document in partner.documents(PARALLEL_ROLE)}
    x = np.array([mine[i] for i in pair.ids], dtype=np.float64)
    y = np.array([theirs[i] for i in pair.partner_ids], dtype=np.float64)
    if x.std() == 0 or y.std() == 0:
        return None
    return float(np.corrcoef(x, y)[0, 1])


def _misalignment(pair: ParallelPair, corpus: Corpus, partner: Corpus) -> str | None:
    """A message when the pairing looks wrong (``length_correlation`` below the threshold), else None."""
    r = length_correlation(pair, corpus, partner)
    if r is None or r >= MIN_LENGTH_CORRELATION:
        return None
    texts = {document.id: document.text for document in corpus.documents(PARALLEL_ROLE)}
    partner_texts = {document.id: document.text for document in partner.documents(PARALLEL_ROLE)}
    first = "; ".join(f"{key}: {texts[a][:40]!r} ~ {partner_texts[b][:40]!r}"
                      for key, a, b in list(zip(pair.keys, pair.ids, pair.partner_ids, strict=True))[:2])  # fmt: skip
    return (f"{pair.corpus}: its sentences paired with {pair.partner} by {pair.set} key do not look like "
            f"translations: Pearson r of their character lengths is {r:.2f} over {pair.n:,} pairs (a real parallel "
            f"set gives above {MIN_LENGTH_CORRELATION}); check the 'key' of [sources.parallel]; first pairs: {first}")


def _same_set(corpus: Corpus, name: str) -> bool:
    return corpus.spec.parallel is not None and corpus.spec.parallel.name == name


def _pair(corpus_id: str, corpus: Corpus, partner_id: str, partner: Corpus) -> ParallelPair:
    parallel, partner_parallel = corpus.spec.parallel, partner.spec.parallel
    assert parallel is not None and partner_parallel is not None
    mine, theirs = _keyed(corpus), _keyed(partner)
    keys = [key for key in mine if key in theirs]
    if not keys:
        raise BenchmarkError(
            f"parity of {corpus_id} against {partner_id}: both declare parallel set {parallel.name!r}, but no "
            f"sentence key is in both ({corpus_id}: {_sample(mine)}; {partner_id}: {_sample(theirs)}); check the "
            "'key' of [sources.parallel] in the two corpus specs",
            code="no_common_keys",
            value=parallel.name,
        )
    if parallel.dev is not None and partner_parallel.dev is not None and parallel.dev != partner_parallel.dev:
        raise BenchmarkError(
            f"parity of {corpus_id} against {partner_id}: parallel set {parallel.name!r} has dev split "
            f"{list(parallel.dev)} in one spec and {list(partner_parallel.dev)} in the other",
            code="dev_split_mismatch",
            value=parallel.name,
        )
    declared = parallel if parallel.dev is not None else partner_parallel
    dev = tuple(declared.in_dev(key) for key in keys) if declared.dev is not None else None
    return ParallelPair(corpus_id, partner_id, parallel.name, tuple(keys), tuple(mine[key] for key in keys),
                        tuple(theirs[key] for key in keys), dev)  # fmt: skip


def _sample(keyed: Sequence[str]) -> str:
    keys = list(keyed)
    return f"{len(keys):,} keys, e.g. {', '.join(map(repr, keys[:3]))}"
