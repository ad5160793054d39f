"""docs/architecture.md against the code: the layout table is the folders of ``bpe/`` and
``benchmarks/``, every module, name and path the doc cites exists, every registry of "Where to add
things" exists in the module named, the section table is ``SECTIONS``, the command table is the
parser's, and the README and docs/reproductions.md name what the registries hold.  (The family
table is checked by tests/bpe/test_family_registry.py, the formats by
tests/bpe/pretrained/test_formats.py, the metrics by tests/benchmarks/measure/test_metrics.py.)"""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.util
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ARCHITECTURE = REPO / "docs" / "architecture.md"
PACKAGES = ("bpe", "benchmarks")
CODE_SPAN = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
PATH_ROOTS = ("bpe/", "benchmarks/", "corpora/", "docs/", "tests/")
DOTTED_ROOTS = ("bpe.", "benchmarks.", "corpora.")


def doc_text() -> str:
    return ARCHITECTURE.read_text(encoding="utf-8")


def section(text: str, heading: str) -> str:
    """The text under ``heading`` up to the next heading of the same or a higher level."""
    level = heading.split(" ", 1)[0]
    _, found, rest = text.partition(heading + "\n")
    assert found, f"docs/architecture.md has no heading {heading!r}"
    stop = re.search(rf"^#{{1,{len(level)}}} ", rest, re.MULTILINE)
    return rest[: stop.start()] if stop else rest


def table_rows(text: str) -> list[list[str]]:
    """The body rows of the first Markdown table in ``text``, as cells (header and rule rows left out)."""
    rows = []
    all_lines = text.splitlines()
    first = next((index for index, line in enumerate(all_lines) if line.startswith("|")), len(all_lines))
    lines = []
    for line in all_lines[first:]:
        if not line.startswith("|"):
            break
        lines.append(line)
    for index, line in enumerate(lines):
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        is_rule = all(set(cell) <= set("-: ") for cell in cells)
        next_is_rule = index + 1 < len(lines) and set(lines[index + 1]) <= set("|-: ")
        if not is_rule and not next_is_rule:
            rows.append(cells)
    return rows


def spans(cell: str) -> list[str]:
    return CODE_SPAN.findall(cell)


# ------------------------------------------------------------------------------------------ layout
def folders_on_disk(root: Path = REPO) -> set[str]:
    """``bpe/``, ``benchmarks/`` and the folders directly inside them."""
    found = {f"{package}/" for package in PACKAGES}
    for package in PACKAGES:
        for child in (root / package).iterdir():
            if child.is_dir() and not child.name.startswith((".", "__")):
                found.add(f"{package}/{child.name}/")
    return found


def documented_folders(text: str) -> list[str]:
    return [spans(row[0])[0] for row in table_rows(section(text, "## Layout")) if spans(row[0])]


def layout_disagreement(text: str, root: Path = REPO) -> tuple[set[str], set[str]]:
    """(folders without a row, rows without a folder)."""
    documented = set(documented_folders(text))
    on_disk = folders_on_disk(root)
    return on_disk - documented, documented - on_disk


def test_the_layout_table_is_the_folders() -> None:
    missing, extra = layout_disagreement(doc_text())
    assert not missing, f"folders not in the layout table of docs/architecture.md: {sorted(missing)}"
    assert not extra, f"rows of the layout table that are no folder: {sorted(extra)}"


def test_a_folder_missing_from_the_table_is_found(tmp_path: Path) -> None:
    """The check itself: a new folder, and a row whose folder is gone, are both reported."""
    for package in PACKAGES:
        (tmp_path / package / "models").mkdir(parents=True)
    (tmp_path / "bpe" / "newjob").mkdir()
    text = "## Layout\n\n| folder | job |\n|---|---|\n| `bpe/` | a |\n| `benchmarks/` | b |\n| `bpe/models/` | c |\n" \
           "| `benchmarks/models/` | d |\n| `bpe/gone/` | e |\n"
    assert layout_disagreement(text, tmp_path) == ({"bpe/newjob/"}, {"bpe/gone/"})


def test_every_nested_package_is_named() -> None:
    """A package inside a job's folder (``bpe/pretrained/formats/``) is named in the doc, as a path or
    a dotted name."""
    text = doc_text()
    unnamed = []
    for package in PACKAGES:
        for init in sorted((REPO / package).glob("*/*/**/__init__.py")):
            folder = init.parent.relative_to(REPO).as_posix()
            if f"`{folder}/`" not in text and f"`{folder.replace('/', '.')}`" not in text and "/perf/" not in folder:
                unnamed.append(folder)
    assert not unnamed, f"packages docs/architecture.md does not name: {unnamed}"


# ------------------------------------------------------------------------------ names and paths
def resolves(name: str) -> bool:
    """A dotted name (``bpe.base.FamilyFacts``, ``bpe.models.word:WordTokenizer``, ``bpe.derive``)
    is a module, or attributes of the longest importable module prefix."""
    name = name.split("(", 1)[0].replace(":", ".")
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        module_name = ".".join(parts[:cut])
        try:
            if importlib.util.find_spec(module_name) is None:
                continue
        except ModuleNotFoundError:
            continue
        value = importlib.import_module(module_name)
        for attribute in parts[cut:]:
            if not hasattr(value, attribute):
                return False
            value = getattr(value, attribute)
        return True
    return False


def cited_names(text: str) -> tuple[list[str], list[str]]:
    """(dotted names, repository paths) in the doc's code spans; spans with placeholders are left out."""
    names, paths = [], []
    for span in CODE_SPAN.findall(text):
        if any(char in span for char in " <>*{}|"):
            continue
        if span.startswith(DOTTED_ROOTS):
            names.append(span)
        elif span.startswith(PATH_ROOTS):
            paths.append(span)
    return names, paths


def test_every_cited_module_and_name_exists() -> None:
    names, _ = cited_names(doc_text())
    assert names
    missing = sorted({name for name in names if not resolves(name)})
    assert not missing, f"docs/architecture.md names what the code lacks: {missing}"


def test_every_cited_path_exists() -> None:
    _, paths = cited_names(doc_text())
    assert paths
    missing = sorted({path for path in paths if not (REPO / path).exists()})
    assert not missing, f"docs/architecture.md names paths that do not exist: {missing}"


def test_a_wrong_name_is_found() -> None:
    assert resolves("bpe.base.FamilyFacts") and resolves("bpe.derive") and resolves("benchmarks.cli:main")
    assert not resolves("bpe.base.NO_SUCH_NAME")
    assert not resolves("bpe.no_such_module")


# ------------------------------------------------------------------------------------ registries
def registries(text: str) -> list[tuple[str, str]]:
    """(name, module) of the "one line in" column of "Where to add things"."""
    found = []
    for row in table_rows(section(text, "## Where to add things")):
        match = re.match(r"`(\w+)` of `([\w.]+)`", row[1])
        if match:
            found.append((match[1], match[2]))
        else:
            assert row[1].startswith("nothing"), f"'one line in' of {row[0]!r}: expected `NAME` of `module` or nothing"
    return found


def test_every_registry_of_where_to_add_exists() -> None:
    found = registries(doc_text())
    assert len(found) >= 8
    for name, module in found:
        assert hasattr(importlib.import_module(module), name), f"{module} has no {name} (docs/architecture.md)"


def test_the_section_table_is_SECTIONS() -> None:
    from benchmarks.report.sections import SECTIONS

    rows = table_rows(section(doc_text(), "### The report sections"))
    documented = [(spans(row[1])[0], spans(row[2])[0]) for row in rows]
    assert documented == [(function.__name__, function.__module__) for function in SECTIONS]


def registered_commands() -> dict[str, list[str]]:
    """Each module of ``COMMAND_MODULES`` -> the subcommands it registers, in order."""
    from benchmarks.cli import COMMAND_MODULES

    commands = {}
    for name in COMMAND_MODULES:
        subparsers = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(name).register(subparsers)
        commands[name] = list(subparsers.choices)
    return commands


def test_the_command_table_is_the_parser() -> None:
    rows = table_rows(section(doc_text(), "### The commands"))
    documented = {spans(row[0])[0]: spans(row[1]) for row in rows}
    registered = registered_commands()
    assert list(documented) == list(registered)
    assert documented == registered


def test_the_readme_layout_names_every_command() -> None:
    """The README's layout block lists the subcommands under ``commands/``, exactly the parser's."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = readme.split("## Layout", 1)[1].split("```", 2)[1]
    lines = block.splitlines()
    start = next(index for index, line in enumerate(lines) if line.strip().startswith("commands/"))
    text = lines[start].split(":", 1)[1]
    for line in lines[start + 1 :]:
        if re.match(r"^\s*\S+/\s", line) or not line.startswith(" "):
            break
        text += " " + line
    listed = [name.strip() for name in text.split(",")]
    assert sorted(listed) == sorted(name for names in registered_commands().values() for name in names)


def test_docs_reproductions_has_a_section_per_reproduction() -> None:
    from benchmarks.reproductions import REPRODUCTIONS

    text = (REPO / "docs" / "reproductions.md").read_text(encoding="utf-8")
    documented = re.findall(r"^## `([^`]+)`", text, re.MULTILINE)
    assert documented == list(REPRODUCTIONS)


def test_perf_is_imported_only_by_its_command() -> None:
    """benchmarks/perf/ measures the rest and is imported by nothing but `tokbench bench` and its test."""
    allowed = {"benchmarks/commands/bench.py", "tests/benchmarks/test_bench.py"}
    importers = []
    for path in sorted(REPO.glob("**/*.py")):
        relative = path.relative_to(REPO).as_posix()
        if relative.startswith(("benchmarks/perf/", ".venv/", "build/")) or relative in allowed:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            modules = [alias.name for alias in node.names] if isinstance(node, ast.Import) else (
                [node.module] if isinstance(node, ast.ImportFrom) and node.module else [])
            if any(module == "benchmarks.perf" or module.startswith("benchmarks.perf.") for module in modules):
                importers.append(relative)
    assert not importers, f"benchmarks.perf imported outside it: {importers}"


@pytest.mark.parametrize("package", PACKAGES)
def test_every_module_imports(package: str) -> None:
    """Every module of the package imports (a move that left an old import behind fails here)."""
    for path in sorted((REPO / package).rglob("*.py")):
        relative = path.relative_to(REPO).with_suffix("")
        if "perf" in relative.parts or relative.name == "__main__":
            continue
        parts = relative.parts[:-1] if relative.name == "__init__" else relative.parts
        importlib.import_module(".".join(parts))


# ---------------------------------------------------------------------------------- module size
#: the most lines a module of ``bpe/``, ``corpora/`` or ``benchmarks/`` may have (docs/architecture.md, "Layout")
MAX_MODULE_LINES = 500
#: the stated exception: the numba-compiled kernels, each kept whole so that it compiles as one unit
LONG_MODULES = {"bpe/kernels/merge_kernel.py", "bpe/kernels/encode_kernel.py"}


def long_modules(root: Path = REPO) -> list[str]:
    """The modules of ``bpe/``, ``corpora/`` and ``benchmarks/`` over ``MAX_MODULE_LINES`` lines, with their length."""
    found = []
    for package in ("bpe", "corpora", "benchmarks"):
        for path in sorted((root / package).rglob("*.py")):
            lines = len(path.read_text(encoding="utf-8").splitlines())
            relative = path.relative_to(root).as_posix()
            if lines > MAX_MODULE_LINES and relative not in LONG_MODULES:
                found.append(f"{relative} ({lines} lines)")
    return found


def test_no_module_is_over_500_lines_but_the_kernels() -> None:
    assert all((REPO / path).is_file() for path in LONG_MODULES), "an exception names a module that is gone"
    assert not long_modules(), f"modules over {MAX_MODULE_LINES} lines (split them by job): {long_modules()}"


def test_a_long_module_is_found(tmp_path: Path) -> None:
    """The check itself: a module one line over the limit is reported, a kernel named as the exception is not."""
    (tmp_path / "bpe" / "kernels").mkdir(parents=True)
    (tmp_path / "corpora").mkdir()
    (tmp_path / "benchmarks").mkdir()
    (tmp_path / "corpora" / "big.py").write_text("x = 1\n" * (MAX_MODULE_LINES + 1))
    (tmp_path / "corpora" / "fits.py").write_text("x = 1\n" * MAX_MODULE_LINES)
    (tmp_path / "bpe" / "kernels" / "merge_kernel.py").write_text("x = 1\n" * 2 * MAX_MODULE_LINES)
    assert long_modules(tmp_path) == [f"corpora/big.py ({MAX_MODULE_LINES + 1} lines)"]


# ------------------------------------------------------------------------------ one family, one module
#: where a family's options may be parsed from written values: the library's public API (a family's
#: module and the options it builds on) and the places options enter a run (a config, the CLI, a unit
#: file read back)
OPTION_ENTRY_POINTS = (
    "bpe/options.py",
    "bpe/models/",
    "benchmarks/run/config.py",
    "benchmarks/run/entries.py",
    "benchmarks/run/units.py",
    "benchmarks/commands/",
)
#: the code that may compare a value with a family name: the families themselves
FAMILY_NAMING_CODE = ("bpe/models/", "bpe/families.py")


def python_modules(*roots: str) -> list[Path]:
    return sorted(path for root in roots for path in (REPO / root).rglob("*.py"))


def family_name_branches(path: Path, families: set[str]) -> list[str]:
    """``x == "<family>"`` / ``x in ("<family>", ...)`` comparisons in ``path`` (file:line each).  A family
    name that is also a plain word (``word``, ``char``: a text shape, a unit) counts only when compared
    with something named after a kind or a family."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Compare):
            continue
        operands = [node.left, *node.comparators]
        about_families = any(word in ast.unparse(operand) for operand in operands for word in ("kind", "family"))
        for operand in operands:
            values = operand.elts if isinstance(operand, (ast.Tuple, ast.List, ast.Set)) else [operand]
            names = {value.value for value in values if isinstance(value, ast.Constant) and value.value in families}
            if names and (about_families or any(not name.isalpha() or name == "morfessor" for name in names)):
                found.append(f"{path.relative_to(REPO)}:{node.lineno}")
                break
    return found


def option_parses(path: Path) -> list[str]:
    """Calls of ``<options model>.parse(...)`` in ``path`` (file:line each)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "parse":
            owner = ast.unparse(node.func.value)
            if owner.endswith("options_model") or owner.endswith("Options"):
                found.append(f"{path.relative_to(REPO)}:{node.lineno}")
    return found


def test_no_code_outside_the_family_modules_branches_on_a_family_name() -> None:
    import bpe

    families = set(bpe.FAMILIES)
    branches = [
        branch
        for path in python_modules("bpe", "corpora", "benchmarks")
        if not str(path.relative_to(REPO)).startswith(FAMILY_NAMING_CODE)
        for branch in family_name_branches(path, families)
    ]
    assert branches == [], "declare it as a family fact (bpe.base.FamilyFacts) or an option instead"


def test_options_are_parsed_only_where_they_enter() -> None:
    parses = [
        parse
        for path in python_modules("bpe", "corpora", "benchmarks")
        if not str(path.relative_to(REPO)).startswith(OPTION_ENTRY_POINTS)
        for parse in option_parses(path)
    ]
    assert parses == [], "hand on the parsed options (TokenizerEntry.settings, Unit.settings) instead"


def test_the_checks_find_a_branch_and_a_parse() -> None:
    module = REPO / "tests" / "fixtures" / "architecture_violations.py"
    assert [branch.rsplit(":", 1)[1] for branch in family_name_branches(module, {"char", "word"})] == ["5"]
    assert option_parses(module)
