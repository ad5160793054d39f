"""bpe.kernels._numba: the kernels start numba without importing SciPy, numba still uses BLAS, and declared
signatures are compiled on first use."""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from numba import types

ROOT = Path(__file__).resolve().parents[3]


def _python(script: str) -> subprocess.CompletedProcess[str]:
    """``script`` run by a fresh interpreter from the checkout (numba and its cache start from scratch)."""
    return subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, env={"PYTHONPATH": str(ROOT)}
    )

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
    done = _python(SCRIPT)
    assert done.returncode == 0, done.stderr
    # BLAS flagged available, and SciPy's BLAS imported once a compiled function used np.dot
    assert done.stdout.split() == ["True", "True"]


LAZY_SCRIPT = """
import bpe.kernels.count_kernel as count_kernel
import bpe.kernels.merge_kernel as merge_kernel
from numba.core.registry import CPUDispatcher
kernels = [value for module in (count_kernel, merge_kernel) for value in vars(module).values()
           if isinstance(value, CPUDispatcher)]
assert len(kernels) > 10, kernels
print(sum(len(kernel.overloads) for kernel in kernels))
assert merge_kernel.learn_merges({(0, 1, 0, 1): 3}, ["a", "b"], 5) == [(0, 1, 6), (2, 2, 3)]
# the entry point's declared signature only; the functions it calls were compiled into it
print(len(merge_kernel._learn.overloads), len(merge_kernel._heap_push.overloads))
"""


def test_kernels_compile_their_signatures_on_first_use_not_at_import() -> None:
    done = _python(LAZY_SCRIPT)
    assert done.returncode == 0, done.stderr
    loaded_at_import, learn, heap_push = map(int, done.stdout.split())
    assert loaded_at_import == 0
    assert learn == 1
    assert heap_push in (0, 1)  # 0 when _learn came from numba's cache, 1 when it was compiled here


def test_a_first_use_signature_casts_like_numba_and_rejects_other_types() -> None:
    from bpe.kernels._numba import njit

    @njit("int64(int64, int64)")
    def add(a, b):
        return a + b

    @njit("int64(int32)")
    def twice(a):
        return add(a, a)  # typed against add's declared signature: int32 arguments cast to int64

    assert add.overloads == {}
    assert twice(np.int32(2**30)) == 2**31  # no int32 overflow: add works in int64
    assert list(add.overloads) == [(types.int64, types.int64)]
    assert add(True, 2) == 3  # a bool casts to int64, as with numba's own decorator
    with pytest.raises(TypeError, match="No matching definition"):
        add("a", 2)
    assert len(add.overloads) == 1


def test_a_first_use_signature_compiles_once_when_threads_call_it_together() -> None:
    from bpe.kernels._numba import njit

    @njit("float64[::1](float64[::1])", nogil=True)
    def doubled(values):
        return values * 2

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: doubled(np.arange(3.0)).tolist(), range(8)))
    assert results == [[0.0, 2.0, 4.0]] * 8
    assert len(doubled.overloads) == 1


LOADED_THEN_COMPILED_SCRIPT = """
import sys
import numpy as np
from numba import njit
from bpe.kernels.merge_kernel import _learn, learn_merges
assert learn_merges({(0, 1, 0, 1): 3}, ["a", "b"], 5) == [(0, 1, 6), (2, 2, 3)]
print(sum(_learn.stats.cache_hits.values()))
print("numba.np.polynomial.polynomial_core" in sys.modules)  # a lowering registry numba's refresh imports
# loading skipped the target context's refresh: a compile after it still types and lowers numpy calls and dicts
@njit
def summary(values):
    seen = {values[0]: 0}
    for value in values:
        seen[value] = seen.get(value, 0) + 1
    return np.sum(values), len(seen)
print(*summary(np.array([3, 1, 3])))
"""


def test_a_kernel_loaded_from_the_cache_leaves_later_compiles_working() -> None:
    first = _python(LOADED_THEN_COMPILED_SCRIPT)
    assert first.returncode == 0, first.stderr  # (fills numba's cache if it was empty)
    second = _python(LOADED_THEN_COMPILED_SCRIPT)
    assert second.returncode == 0, second.stderr
    # _learn came from the cache without numba's lowering registries, which the compile then loaded
    assert second.stdout.split() == ["1", "False", "7", "2"]
