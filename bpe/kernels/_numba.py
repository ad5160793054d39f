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

``njit`` with signatures compiles (or, with ``cache=True``, loads from numba's cache) each declared
signature the first time the function is called or compiled into another one, not when its module
is imported: numba's own decorator loads every declared signature at import, about 10 ms each, and
a training process uses only a few of the kernels' functions (a cached caller carries the machine
code of the functions it calls, so their own cached code is not needed).  Loading from the cache skips
numba's refresh of the target context, which only compiling needs (``_CacheLoadingWithoutRefresh``).
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable, Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import Any


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

from llvmlite import ir  # noqa: E402
from numba import njit as _numba_njit  # noqa: E402  (after the import above, which must come first)
from numba import types  # noqa: E402
from numba.core import cgutils, typeinfer  # noqa: E402
from numba.core.caching import FunctionCache  # noqa: E402
from numba.core.compiler_lock import global_compiler_lock  # noqa: E402
from numba.core.registry import CPUDispatcher  # noqa: E402
from numba.core.runtime import rtsys  # noqa: E402
from numba.extending import intrinsic  # noqa: E402


class _CacheLoadingWithoutRefresh(FunctionCache):
    """numba's on-disk cache, loading without refreshing the target context first.

    numba refreshes the whole target context before a load: it imports and installs every lowering
    registry (about 0.05 s of a process's first load) and every typing template (another 0.05 s).
    Both serve only compiling, and every compile refreshes the context itself
    (``numba.core.compiler.CompilerBase``).  Rebuilding cached machine code only links it, so it
    needs the symbols it calls: numba's runtime (NRT, compiled once a process by
    ``rtsys.initialize``) and the C helpers and hash secrets that ``import numba`` registers."""

    def load_overload(self, sig: Any, target_context: Any) -> Any:
        rtsys.initialize(target_context)
        with self._guard_against_spurious_io_errors():
            return self._load_overload(sig, target_context)
        return None  # the guard swallowed an error reading the cache: compile instead


class _CompiledOnFirstUse(CPUDispatcher):
    """A dispatcher that compiles its declared signatures when first needed, then no others (as numba's
    dispatcher does with signatures given at import): on its first call from Python, or when a compiled
    function calling it is typed."""

    _declared: tuple[Any, ...] | None = None

    def _compile_declared(self) -> None:
        with global_compiler_lock:  # a second thread waits until every signature is there
            if self._declared is None:
                return
            with typeinfer.register_dispatcher(self):
                for signature in self._declared:
                    self.compile(signature)
            self.disable_compile()
            self._declared = None

    def _compile_for_args(self, *args: Any, **kws: Any) -> Any:
        # numba's C dispatch calls this when no compiled signature matches the arguments; what it returns,
        # when not machine code, it calls with the same arguments: this dispatcher again, which now either
        # matches a declared signature or, compiling disabled, raises numba's no-matching-definition error
        self._compile_declared()
        return self

    def get_call_template(self, args: Any, kws: Any) -> Any:
        self._compile_declared()
        return super().get_call_template(args, kws)


def njit(*args: Any, **options: Any) -> Any:
    """numba's ``njit``, except that signatures given are compiled (or, with ``cache=True``, loaded) on
    first use (see the module's note)."""
    if not args or callable(args[0]):
        return _numba_njit(*args, **options)
    signatures = tuple(args[0]) if isinstance(args[0], list) else (args[0],)
    cache = options.pop("cache", False)

    def decorate(function: Callable[..., Any]) -> _CompiledOnFirstUse:
        dispatcher = _CompiledOnFirstUse(
            py_func=function, locals={}, targetoptions={"nopython": True, "boundscheck": None, **options}
        )
        if cache:
            dispatcher._cache = _CacheLoadingWithoutRefresh(function)
        dispatcher._declared = signatures
        return dispatcher

    return decorate


@intrinsic
def prefetch(typingctx: object, array: types.Array, index: types.Integer) -> tuple[object, object]:
    """``prefetch(array, i)`` in a compiled function: ask the CPU to bring the cache line of
    ``array[i]`` in (LLVM's ``llvm.prefetch``: a hint that never faults, so ``i`` may lie outside the
    array, and changes no value).  A loop whose next visits are known (positions listed in advance)
    issues it a few iterations ahead, so that their cache misses overlap instead of stalling one by one."""

    def codegen(context, builder, signature, args):
        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        byte_pointer = ir.IntType(8).as_pointer()
        int32 = ir.IntType(32)
        function = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [byte_pointer, int32, int32, int32]), "llvm.prefetch.p0"
        )
        # read (0), keep in all cache levels (3), data cache (1)
        address = builder.bitcast(builder.gep(data, [args[1]]), byte_pointer)
        builder.call(function, [address, int32(0), int32(3), int32(1)])
        return context.get_dummy_value()

    return types.void(array, index), codegen


__all__ = ["njit", "prefetch", "types"]
