"""Shared fixtures: where the data root and the seed documents live.

The data root is the offline mirror of FLORES-200, UD and morpheme gold
(``../shared/data`` beside the checkout, or ``$TOKBENCH_DATA``).  Tests that
need it skip with a stated reason when it is absent.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
FLORES_LANGUAGES = ("eng_Latn", "tur_Latn", "rus_Cyrl", "kor_Hang")


def find_data_root() -> Path | None:
    candidates = [os.environ.get("TOKBENCH_DATA"), REPO_ROOT.parent / "shared" / "data"]
    for candidate in candidates:
        if candidate and (Path(candidate) / "flores").is_dir():
            return Path(candidate)
    return None


@pytest.fixture(scope="session")
def data_root() -> Path:
    root = find_data_root()
    if root is None:
        pytest.skip("data root absent: set TOKBENCH_DATA or place shared/data beside the checkout")
    return root


@pytest.fixture(scope="session")
def flores_lines(data_root: Path) -> dict[str, list[str]]:
    """All 2,009 FLORES-200 dev+devtest lines per language."""
    return {
        lang: (data_root / "flores" / f"{lang}.txt").read_text(encoding="utf-8").splitlines()
        for lang in FLORES_LANGUAGES
    }
