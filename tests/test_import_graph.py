"""No import circle inside ``bpe/``, ``corpora/`` or ``benchmarks/``, and no import running back up the
layering ``bpe`` <- ``corpora`` <- ``benchmarks``: every import statement (top-level or inside a function, as
Python's ``ast`` finds it) is an edge from the importing module to the module it names, and the
graph must have no cycle.  ``from bpe import x`` is an edge to ``bpe.x`` when that is a module
(the package's ``__init__`` is then already imported), else to ``bpe``.  Inside ``benchmarks``, measurement
(``benchmarks/measure/``) imports nothing of a run (``benchmarks/run/``)."""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "bpe"
#: each package and the packages below it, which it may import
LAYERS = {"bpe": set(), "corpora": {"bpe"}, "benchmarks": {"bpe", "corpora"}}


def module_name(path: Path, package: Path) -> str:
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(package: Path) -> dict[str, set[str]]:
    """Module -> the modules of ``package`` it imports."""
    sources = {module_name(path, package): path for path in sorted(package.rglob("*.py"))}
    graph: dict[str, set[str]] = {}
    for name, path in sources.items():
        imported: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    submodule = f"{node.module}.{alias.name}"
                    imported.add(submodule if submodule in sources else node.module)
        graph[name] = {target for target in imported if target in sources and target != name}
    return graph


def test_bpe_has_no_import_circle() -> None:
    graph = import_graph(PACKAGE)
    assert "bpe.pretrained.formats" in graph and "bpe.pretrained.base" in graph  # the walk sees the package's modules
    try:
        tuple(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as error:
        pytest.fail(f"import circle inside bpe/: {' -> '.join(error.args[1])}")


@pytest.mark.parametrize("package", ["corpora", "benchmarks"])
def test_corpora_and_benchmarks_have_no_import_circle(package: str) -> None:
    graph = import_graph(ROOT / package)
    assert len(graph) > 10
    try:
        tuple(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as error:
        pytest.fail(f"import circle inside {package}/: {' -> '.join(error.args[1])}")


@pytest.mark.parametrize("package", sorted(LAYERS))
def test_no_import_runs_back_up_the_layers(package: str) -> None:
    """``bpe`` knows no corpus or experiment, ``corpora`` no experiment (every import statement, as ``ast``
    finds it)."""
    upper = set(LAYERS) - LAYERS[package] - {package}
    found = []
    for path in sorted((ROOT / package).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else (
                [node.module] if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 else [])
            found += [f"{path.relative_to(ROOT)} imports {name}" for name in names if name.split(".")[0] in upper]
    assert not found, found


def imported_names(path: Path) -> list[str]:
    """The modules every import statement of ``path`` names (top-level, inside a function or under
    ``TYPE_CHECKING``, as ``ast`` finds them)."""
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names += [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
    return names


def test_measure_does_not_import_run() -> None:
    """``benchmarks/measure/`` computes numbers about tokenizers and knows no run: the units, configs and the
    pairing of units are ``benchmarks/run/``'s, which imports measure, never the other way."""
    found = [f"{path.relative_to(ROOT)} imports {name}"
             for path in sorted((ROOT / "benchmarks" / "measure").rglob("*.py"))
             for name in imported_names(path)
             if name == "benchmarks.run" or name.startswith("benchmarks.run.")]  # fmt: skip
    assert not found, found


def test_an_import_of_run_is_found(tmp_path: Path) -> None:
    """The check itself: ``from benchmarks import run`` and an import under ``TYPE_CHECKING`` are both seen."""
    module = tmp_path / "m.py"
    module.write_text("from typing import TYPE_CHECKING\nfrom benchmarks import run\nif TYPE_CHECKING:\n"
                      "    from benchmarks.run.units import Unit\n")  # fmt: skip
    assert {"benchmarks.run", "benchmarks.run.units"} <= set(imported_names(module))


def test_a_circle_is_found(tmp_path: Path) -> None:
    """The check itself: two modules that import each other (one inside a function) are a cycle."""
    package = tmp_path / "bpe"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from bpe.b import f\n")
    (package / "b.py").write_text("def f():\n    from bpe import a\n")
    graph = import_graph(package)
    assert graph == {"bpe": set(), "bpe.a": {"bpe.b"}, "bpe.b": {"bpe.a"}}
    with pytest.raises(graphlib.CycleError):
        tuple(graphlib.TopologicalSorter(graph).static_order())
