"""What every silver analyzer declares about itself (``SilverAnalyzer``), the agreement figures it was
measured at (``MeasuredAgreement``), and the error said when its package is missing.  Each analyzer's
module (``zemberek``, ``kiwi``, ``pymorphy``, ``lemminflect``) declares one ``ANALYZER``; ``registry.SILVER``
lists them."""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from corpora.errors import CorpusError
from corpora.silver.store import Segmentation


@dataclass(frozen=True)
class MeasuredAgreement:
    """An agreement figure measured once with ``tokbench corpora agreement`` on the full data root and
    written down, so that a run without gold (the embedded corpora) can still say how far to trust the
    analyzer.  A test recomputes every figure when the data root is present."""

    gold: str  # the gold reference's reader name
    words: int  # gold words the analyzer segmented
    gold_words: int
    precision: float
    recall: float
    f1: float


@dataclass(frozen=True)
class SilverAnalyzer:
    name: str
    language: str
    distribution: str  # the PyPI distribution that carries the analyzer (reported with its version)
    method: str  # one line: what its boundaries mean
    segment: Callable[[list[str]], list[Segmentation]]
    label: str = ""  # short name for headings: "pymorphy3 stem|ending"
    measured: tuple[MeasuredAgreement, ...] = ()  # against the gold references of the data root
    measured_with: str = ""  # the analyzer version the figures were measured with
    #: relative time per word, to start the slow analyzers first (``Prefetch``): zemberek ~3.8 ms, the others
    #: well under 0.5 ms
    cost_per_word: float = 1.0
    #: a loaded analyzer holds no threads (pure Python), so a forked copy of a process that loaded it works:
    #: ``Prefetch`` then loads it once for several fresh analyses
    fork_safe: bool = False
    #: its answers depend on Python's set iteration order, so on the hash seed: it runs on a process started
    #: with ``PYTHONHASHSEED=HASH_SEED`` (``segment_seeded``)
    hash_order_dependent: bool = False
    #: loads the analyzer once per process (a ``functools.cache`` function): ``analyzers_loaded`` asks its cache
    #: whether this process has loaded it
    loader: Callable[[], Any] | None = None

    def version(self) -> str:
        try:
            return importlib.metadata.version(self.distribution)
        except importlib.metadata.PackageNotFoundError:
            return "not installed"


def missing(analyzer: str, distribution: str) -> CorpusError:
    """The analyzers are tokbench dependencies, so this means a broken or partial installation."""
    return CorpusError(
        f"silver analyzer {analyzer!r} needs the package {distribution}, a dependency of tokbench that is not "
        f"installed in this environment: pip install {distribution} (or reinstall tokbench)",
        code="missing_package",
        value=distribution,
    )
