"""bpe.kernels._numba: the kernels start numba without importing SciPy, and numba still uses BLAS."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

SCRIPT = """
import sys
import numpy as np
from bpe.kernels.merge_kernel import learn_merges
assert learn_merges({(0, 1, 0, 1): 3}, ["a", "b"], 5) == [(0, 1, 6), (2, 2, 3)]
assert "scipy" not in sys.modules, sorted(name for name in sys.modules if name.startswith("scipy"))
import numba.np.arraymath
print(numba.np.arraymath._HAVE_BLAS)
from numba import njit
dot = njit(lambda a, b: np.dot(a, b))
assert dot(np.arange(3.0), np.arange(3.0)) == 5.0
print("scipy.linalg.cython_blas" in sys.modules)
"""


def test_kernels_start_numba_without_scipy_and_blas_stays_available() -> None:
    pytest.importorskip("scipy")
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, cwd=ROOT, env={"PYTHONPATH": str(ROOT)}
    )
    assert done.returncode == 0, done.stderr
    # BLAS flagged available, and SciPy's BLAS imported once a compiled function used np.dot
    assert done.stdout.split() == ["True", "True"]
