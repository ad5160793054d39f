"""numba for the kernels, imported without importing SciPy.

When numba's CPU target starts (the first compiled function a process loads), it imports
``numba.np.arraymath``, which asks once whether SciPy's BLAS is available by importing
``scipy.linalg.cython_blas`` (``numba.np.arraymath._check_blas``).  No kernel uses linear algebra, yet
that import alone costs about 0.15 s and 20 to 30 MB of resident memory in every training process
(``scipy.linalg`` pulls in ``numpy.f2py``), a fixed cost that dominates training on a few megabytes.

So ``numba.np.arraymath`` is imported here with the ``scipy`` packages hidden, then told that BLAS is
available whenever SciPy is installed: its flag only chooses, when a function using ``np.dot`` is
compiled, between BLAS and a plain loop, and numba's ``ensure_blas``, which every linear-algebra
function calls while it compiles, imports SciPy itself then.  So numba behaves as without this module,
except that SciPy is imported when first needed instead of at start.  A process that imported SciPy
before is unaffected (its modules are found in ``sys.modules``, not through the finders).
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType


class _HideScipy:
    """A meta path finder that makes ``scipy`` and its submodules unimportable while it is installed."""

    def find_spec(
        self, name: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if name == "scipy" or name.startswith("scipy."):
            raise ModuleNotFoundError(f"{name} hidden while numba starts", name=name)
        return None


def _import_arraymath() -> None:
    if "numba.np.arraymath" in sys.modules:
        return
    finder = _HideScipy()
    sys.meta_path.insert(0, finder)
    try:
        import numba.np.arraymath as arraymath
    finally:
        sys.meta_path.remove(finder)
    if not arraymath._HAVE_BLAS and importlib.util.find_spec("scipy") is not None:
        arraymath._HAVE_BLAS = True


_import_arraymath()

from numba import njit, types  # noqa: E402  (after the import above, which must come first)

__all__ = ["njit", "types"]
