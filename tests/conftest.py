"""Shared test data: real text that ships with the repository, and the full data root when present.

Three sources, from always to sometimes available:

* the **embedded corpora** (``corpora/embedded-*.toml``): running text in all four languages, read
  at run time from installed pip packages. Training text for tokenizers (``embedded_text``);
* the **sample data root** ``tests/fixtures/data``: small excerpts of FLORES-200, Universal
  Dependencies and SIGMORPHON 2022 in the layout of a data root (its README states sources, licenses
  and how each file was cut). Evaluation text and reader input (``sample_data_root``, ``flores_sample``);
* the **full data root**: the offline mirror of FLORES-200, UD and morpheme gold (``$TOKBENCH_DATA``
  or ``../shared/data`` beside the checkout).

A test that checks a property of real text takes ``each_data_root`` / ``flores`` (or parameters from
``sample_and_full``): it runs on the sample and, when the full data root is present, once more on it
(parameter id ``full``, marker ``full_data``). Without a full data root those variants are
deselected: the sample variant already ran, and pytest's summary counts them. Tests that reproduce
paper-scale figures take ``data_root`` / ``flores_lines`` and skip with a stated reason when it is
absent.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
SAMPLE_DATA_ROOT = REPO_ROOT / "tests" / "fixtures" / "data"
FLORES_LANGUAGES = ("eng_Latn", "tur_Latn", "rus_Cyrl", "kor_Hang")
DATA_ROOT_ABSENT = "data root absent: set TOKBENCH_DATA or place shared/data beside the checkout"


def find_data_root() -> Path | None:
    candidates = [os.environ.get("TOKBENCH_DATA"), REPO_ROOT.parent / "shared" / "data"]
    for candidate in candidates:
        if candidate and (Path(candidate) / "flores").is_dir():
            return Path(candidate)
    return None


#: the full data root, looked up once at collection (None when absent)
FULL_DATA_ROOT = find_data_root()
FULL_DATA = pytest.mark.full_data


def sample_and_full(sample: Any, full: Any) -> list[Any]:
    """``parametrize`` values ``(root, expected)``: the sample data root with ``sample``, the full data
    root with ``full`` (a ``full_data`` variant, deselected when the full data root is absent)."""
    return [
        pytest.param(SAMPLE_DATA_ROOT, sample, id="sample"),
        pytest.param(FULL_DATA_ROOT, full, id="full", marks=FULL_DATA),
    ]


def pytest_report_header(config: pytest.Config) -> str:
    if FULL_DATA_ROOT is None:
        return f"tokbench data: shipped sample only ({DATA_ROOT_ABSENT}; full-data variants deselected)"
    return f"tokbench data: shipped sample and full data root {FULL_DATA_ROOT}"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if FULL_DATA_ROOT is not None:
        return
    deselected = [item for item in items if item.get_closest_marker("full_data")]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = [item for item in items if not item.get_closest_marker("full_data")]


def read_flores(root: Path) -> dict[str, list[str]]:
    return {
        language: (root / "flores" / f"{language}.txt").read_text(encoding="utf-8").splitlines()
        for language in FLORES_LANGUAGES
    }


def leading(texts: Iterable[str], chars: int) -> list[str]:
    """The first texts, in order, until they hold at least ``chars`` characters."""
    taken, total = [], 0
    for text in texts:
        if total >= chars:
            break
        taken.append(text)
        total += len(text)
    return taken


# -- full data root: paper-scale tests --------------------------------------------------------------


@pytest.fixture(scope="session")
def data_root() -> Path:
    if FULL_DATA_ROOT is None:
        pytest.skip(DATA_ROOT_ABSENT)
    return FULL_DATA_ROOT


@pytest.fixture(scope="session")
def flores_lines(data_root: Path) -> dict[str, list[str]]:
    """All 2,009 FLORES-200 dev+devtest lines per language (full data root)."""
    return read_flores(data_root)


# -- shipped data ---------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def sample_data_root() -> Path:
    return SAMPLE_DATA_ROOT


@pytest.fixture(scope="session")
def flores_sample() -> dict[str, list[str]]:
    """The first 100 FLORES-200 dev lines per language, aligned across languages (sample data root)."""
    return read_flores(SAMPLE_DATA_ROOT)


@pytest.fixture(
    scope="session",
    params=[pytest.param(SAMPLE_DATA_ROOT, id="sample"), pytest.param(FULL_DATA_ROOT, id="full", marks=FULL_DATA)],
)
def each_data_root(request: pytest.FixtureRequest) -> Path:
    """The sample data root, then the full one (a ``full_data`` variant)."""
    return request.param


@pytest.fixture(scope="session")
def flores(each_data_root: Path) -> dict[str, list[str]]:
    """FLORES-200 lines per language, aligned: the sample's 100, then the full data root's 2,009."""
    return read_flores(each_data_root)


@pytest.fixture(scope="session")
def embedded_text(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """Training documents of the embedded corpora per language (FLORES code), in corpus order: real
    running text that installs with tokbench (``corpora/embedded-*.toml``)."""
    from corpora import load_corpus

    cache = tmp_path_factory.mktemp("corpus-cache")
    texts = {}
    for language in FLORES_LANGUAGES:
        with warnings.catch_warnings():  # repairs of the package text are `tokbench corpora stats`' business
            warnings.simplefilter("ignore")
            corpus = load_corpus(f"embedded-{language[:3]}", cache_dir=cache)
        texts[language] = [document.text for document in corpus.documents("train")]
    return texts


@pytest.fixture(scope="session")
def embedded_training_text(embedded_text: dict[str, list[str]]) -> list[str]:
    """The first ~200k characters of embedded training text per language, all four languages in one list
    (keeps tokenizers trained for tests quick to train)."""
    return [text for texts in embedded_text.values() for text in leading(texts, 200_000)]
