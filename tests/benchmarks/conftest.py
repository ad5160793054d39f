"""Fixtures shared by the command tests of tests/benchmarks."""

from __future__ import annotations

import io
import sys
from collections.abc import Callable

import pytest

from benchmarks.cli import main


@pytest.fixture
def tokbench(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Callable[..., tuple[int, str, str]]:
    """``tokbench ARGS...`` in this process, with an empty stdin: its exit status, stdout and stderr."""

    def run(*argv: object) -> tuple[int, str, str]:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b""), encoding="utf-8"))
        status = main([str(arg) for arg in argv])
        captured = capsys.readouterr()
        return status, captured.out, captured.err

    return run
