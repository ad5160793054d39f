"""Shared test data: real text that ships with the repository, and the full data root when present.

Three sources, from always to sometimes available:

* the **embedded corpora** (``corpora/embedded-*.toml``): running text in all four languages, read
  at run time from installed pip packages. Training text for tokenizers (``embedded_text``);
* the **sample data root** ``tests/fixtures/data``: small excerpts of FLORES-200, Universal
  Dependencies and SIGMORPHON 2022, and a few entries in the published format of each morpheme gold
  file that states no license, in the layout of a data root (its README states sources, licenses and
  how each file was made). Evaluation text and reader input (``sample_data_root``, ``flores_sample``);
* the **full data root**: FLORES-200, UD and morpheme gold (``$TOKBENCH_DATA``, else the one
  ``tokbench data fetch`` filled in the cache, else a ``shared/data`` folder beside the checkout).

A test that checks a property of real text runs once, on the data root in use: the full one when present,
else the shipped sample (``DATA_ROOT``, ``flores``; the pytest header says which). Expected values
that depend on the data come from ``by_data(sample=..., full=...)``. Tests that reproduce paper-scale figures
take ``data_root`` / ``flores_lines`` and skip with a stated reason when the full data root is absent.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import TypeVar

import pytest

# the headless Chromium fixture of the HTML tests (`browser`)
pytest_plugins = ["tests.browser"]

REPO_ROOT = Path(__file__).resolve().parent.parent
SAMPLE_DATA_ROOT = REPO_ROOT / "tests" / "fixtures" / "data"
FLORES_LANGUAGES = ("eng_Latn", "tur_Latn", "rus_Cyrl", "kor_Hang")
T = TypeVar("T")
DATA_ROOT_ABSENT = "no full data root: `tokbench data fetch` fetches one, or set TOKBENCH_DATA=DIR"


def find_data_root() -> tuple[Path | None, str]:
    """The full data root as tokbench finds one ($TOKBENCH_DATA, then the one `tokbench data fetch` filled in
    the cache), else a ``shared/data`` folder beside the checkout (how CI provides it); and where it came from."""
    from corpora.sources import fetched_data_root

    candidates = [(os.environ.get("TOKBENCH_DATA"), "from TOKBENCH_DATA"),
                  (fetched_data_root(), "fetched by `tokbench data fetch`"),
                  (REPO_ROOT.parent / "shared" / "data", "beside the checkout")]  # fmt: skip
    for candidate, origin in candidates:
        if candidate and (Path(candidate) / "flores").is_dir():
            return Path(candidate), origin
    return None, ""


#: the full data root, looked up once at collection (None when absent)
FULL_DATA_ROOT, FULL_DATA_ROOT_ORIGIN = find_data_root()
#: the data root tests of real text read: the full one when present, else the shipped sample
DATA_ROOT = FULL_DATA_ROOT or SAMPLE_DATA_ROOT


def by_data(sample: T, full: T) -> T:
    """An expected value that depends on the data: ``full`` on the full data root, ``sample`` on the shipped one."""
    return sample if FULL_DATA_ROOT is None else full


def pytest_report_header(config: pytest.Config) -> str:
    if FULL_DATA_ROOT is None:
        return (
            f"tokbench data: the shipped sample {SAMPLE_DATA_ROOT.relative_to(REPO_ROOT)} "
            f"({DATA_ROOT_ABSENT}: tests of paper-scale figures skip)"
        )
    return f"tokbench data: the full data root {FULL_DATA_ROOT} ({FULL_DATA_ROOT_ORIGIN})"


def read_flores(root: Path) -> dict[str, list[str]]:
    return {
        language: (root / "flores" / f"{language}.txt").read_text(encoding="utf-8").splitlines()
        for language in FLORES_LANGUAGES
    }


#: char-bpe and byte-bpe options whose encodings take different paths: pre-tokenizers, end-of-word markers,
#: a limited alphabet (``<unk>``)
MERGE_FAMILY_CASES = [
    ("byte-bpe", {}),
    ("byte-bpe", {"pretokenizer": "whitespace"}),
    ("char-bpe", {}),
    ("char-bpe", {"end_of_word": "attached", "limit_alphabet": 60}),
    ("char-bpe", {"end_of_word": "none", "pretokenizer": "whitespace"}),
]


def same_word_arrays(arrays: object, encodings: list) -> bool:
    """Whether ``arrays`` (``Tokenizer.encode_word_arrays``) holds exactly ``encodings`` (``encode_words``):
    the same ids and spans, word by word."""
    import numpy as np

    from bpe.base import WordEncodings

    expected = WordEncodings.of(encodings)
    return all(np.array_equal(got, want) and got.dtype == np.int64 for got, want in
               ((arrays.ids, expected.ids), (arrays.spans, expected.spans), (arrays.counts, expected.counts)))  # type: ignore[attr-defined]


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


@pytest.fixture(scope="session")
def flores() -> dict[str, list[str]]:
    """FLORES-200 lines per language, aligned: the full data root's 2,009, else the sample's 100."""
    return read_flores(DATA_ROOT)


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
