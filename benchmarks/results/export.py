"""``tokbench export-results``: a run's results as a folder in the Hugging Face datasets layout.

The folder holds ``results.parquet`` (the tidy rows of ``files.RESULTS_SCHEMA`` plus a
``schema_version`` column), the run's ``manifest.json`` unchanged, and a dataset card ``README.md``
whose YAML header declares the one configuration (``configs: [{config_name: default, data_files:
results.parquet}]``), so ``datasets.load_dataset(FOLDER)`` loads it and ``huggingface-cli upload
REPO FOLDER --repo-type dataset`` publishes it as it is.  ``tokbench compare`` reads such a folder as
it reads a run directory.  The export is deterministic: the same run gives byte-identical files.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from benchmarks import files
from benchmarks.errors import BenchmarkError
from benchmarks.files import RESULTS_SCHEMA_VERSION, atomic_path, atomic_write_text, read_results, read_run_manifest

EXPORT_FILES = ("README.md", "manifest.json", "results.parquet")
#: the temporary file an export killed mid-write leaves beside one of its files (``atomic_path``'s name)
_LEFT_BY_A_KILLED_EXPORT = re.compile(r"^\.(README\.md|manifest\.json|results\.parquet)\..+\.tmp$")
#: the line of the dataset card that says tokbench wrote it
_CARD_MARK = "- tokbench"


def _manifest(run_dir: Path) -> dict[str, Any]:
    """The run's manifest (``files.read_run_manifest``), with the run name its dataset card is titled by."""
    manifest = read_run_manifest(run_dir)
    if not isinstance(manifest.get("run"), str):
        raise BenchmarkError(f'{run_dir / "manifest.json"}: not a tokbench run manifest (expected a "run" name)')
    return manifest


def _yaml_string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a JSON string is a YAML double-quoted scalar


def dataset_card(manifest: dict[str, Any], rows: int) -> str:
    """The dataset card: YAML header (configs, license, tags), then what the rows are and where they come from."""
    name = manifest["run"]
    corpora = manifest.get("corpora", {})
    languages = sorted({info.get("language", "")[:3] for info in corpora.values() if info.get("language")})
    header = ["---", "license: other", "license_name: per-corpus-licenses",
              f"pretty_name: {_yaml_string(f'tokbench results: {name}')}", "tags:", "- tokenization", "- tokbench"]
    if languages:
        header += ["language:", *(f"- {language}" for language in languages)]
    header += ["configs:", "- config_name: default", "  data_files: results.parquet", "---"]
    licenses = [f"| `{corpus}` | {info.get('language', '')} | {info.get('license', 'not recorded')} | "
                f"`{str(info.get('fingerprint', ''))[:16]}` |" for corpus, info in sorted(corpora.items())]  # fmt: skip
    packages = ", ".join(f"{package} {version}" for package, version in sorted(manifest.get("packages", {}).items()))
    body = [
        "", f"# tokbench results: {name}", "",
        f"{rows} metric values of the tokbench run `{name}`, one tidy row each (results schema version "
        f"{RESULTS_SCHEMA_VERSION}; the columns are described in tokbench's docs/formats.md, \"Results dataset\").",
        "", "```python", "import datasets", 'rows = datasets.load_dataset("THIS_FOLDER_OR_REPO", split="train")', "```",
        "", "Compare it with another run: `tokbench compare THIS_FOLDER runs/mine --out comparison`.",
        "", "## Corpora and licenses", "",
        "The values are measurements on these corpora; each corpus keeps its own license.", "",
        "| corpus | language | license | content fingerprint |", "|---|---|---|---|", *licenses,
        "", "## Provenance", "",
        f"- config fingerprint: `{manifest.get('config_fingerprint', 'not recorded')}`",
        f"- tokbench git revision: `{manifest.get('git_revision', 'not recorded')}`",
        f"- packages: {packages or 'not recorded'}",
        "- `manifest.json` beside this card is the run's full manifest (corpora, references, pretrained rows).",
        "", "## Config", "", "```json", json.dumps(manifest.get("config", {}), indent=1, ensure_ascii=False), "```",
    ]  # fmt: skip
    return "\n".join(header + body) + "\n"


def _check_earlier_export(out_dir: Path) -> None:
    """``out_dir`` may be overwritten: it is empty, or an earlier export (``EXPORT_FILES`` only, with its
    ``results.parquet``, and a README that is tokbench's dataset card).  The temporary files of an export
    that was killed are removed.  Anything else is the user's, and refused."""
    names = {path.name for path in out_dir.iterdir()}
    for name in sorted(name for name in names if _LEFT_BY_A_KILLED_EXPORT.match(name)):
        (out_dir / name).unlink(missing_ok=True)
        names.discard(name)
    foreign = sorted(names - set(EXPORT_FILES))
    if not foreign and names and "results.parquet" not in names:
        foreign = sorted(names)  # a README.md or manifest.json alone is not an export of ours
    readme = out_dir / "README.md"
    if not foreign and readme.is_file() and _CARD_MARK not in readme.read_text(encoding="utf-8", errors="replace"):
        foreign = ["README.md"]
    if foreign:
        raise BenchmarkError(f"{out_dir}: holds {foreign[0]!r}, not an earlier export: choose a new or empty --out")


def export_results(run_dir: Path, out_dir: Path) -> Path:
    """Write the dataset folder; every file is checked and written atomically.  ``out_dir`` must be new,
    empty or an earlier export (only ``EXPORT_FILES``): nothing else is ever overwritten."""
    if not run_dir.is_dir():
        raise BenchmarkError(f"{run_dir}: no such run directory")
    frame = read_results(run_dir)
    manifest = _manifest(run_dir)
    files.check_writable_dir(out_dir, "export folder (--out)")
    if out_dir.resolve() == run_dir.resolve():
        raise BenchmarkError(f"{out_dir}: --out is the run directory itself: choose another folder")
    if out_dir.is_dir():
        _check_earlier_export(out_dir)
    table = files.results_table(frame)
    with atomic_path(out_dir / "results.parquet") as tmp:
        pq.write_table(table, tmp, compression="zstd")
    atomic_write_text(out_dir / "manifest.json", json.dumps(manifest, indent=1, ensure_ascii=False) + "\n")
    atomic_write_text(out_dir / "README.md", dataset_card(manifest, len(frame)))
    return out_dir
