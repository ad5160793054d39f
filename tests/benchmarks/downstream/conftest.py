"""PyTorch for the language-model tests: skipped with the reason without it, a failure on CI (``CI`` set),
which installs the ``downstream`` extra."""

from __future__ import annotations

import importlib.util
import os

import pytest

MISSING = [name for name in ("torch", "transformers") if importlib.util.find_spec(name) is None]


@pytest.fixture
def needs_torch() -> None:
    if not MISSING:
        return
    reason = (f"{' and '.join(MISSING)} not installed: the language-model tests need the downstream extra "
              "(pip install torch==2.13.0 && pip install -e '.[downstream]')")
    if os.environ.get("CI"):
        pytest.fail(f"on CI: {reason}")
    pytest.skip(reason)
