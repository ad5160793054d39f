"""`tokbench data fetch` and `tokbench data verify`: the data root from the manifest shipped with tokbench."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from benchmarks.data import fetch as datafetch

FETCH_VARIABLE = "TOKBENCH_FETCH"


def register(subparsers: argparse._SubParsersAction) -> None:
    data = subparsers.add_parser(
        "data", help="download (fetch) or check (verify) the data root the paper configs read",
        description="The data root (FLORES-200, UD treebanks, morpheme gold, published tokenizer files and tables), "
        "rebuilt byte for byte from raw files at pinned commits listed in benchmarks/data/manifest.tsv.",
    )
    commands = data.add_subparsers(dest="data_command", metavar="ACTION", required=True)
    fetch = commands.add_parser(
        "fetch",
        help="download the data root; files already present and verified are skipped",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Download every file of the manifest into DIR, check its sha256 before moving it into place,\n"
            "skip files already present and verified, resume an interrupted download, retry transient\n"
            "failures with backoff, and write DIR/SOURCES.tsv (origin and licence of every file).\n\n"
            f"{datafetch.MIRROR_VARIABLE}=http://HOST:PORT fetches every URL https://H/P as http://HOST:PORT/H/P.\n"
            "Exit status: 0 = every file fetched or already there, 1 = a file failed (404, sha256 mismatch,\n"
            "retries exhausted; the others are still fetched), 2 = no network, bad input, disk full or permission."
        ),
        epilog="examples:\n  tokbench data fetch\n  tokbench data fetch DIR --only flores tokenizers\n"
        "  tokbench data fetch --languages fin_Latn kaz_Cyrl\n  tokbench data fetch --only flores --languages all",
    )
    fetch.add_argument("dir", nargs="?", type=Path, default=None, metavar="DIR",
                       help="data root to fill (default: $TOKBENCH_CACHE/data, i.e. ~/.cache/tokbench/data)")
    fetch.add_argument("--only", nargs="+", choices=datafetch.GROUPS, metavar="GROUP",
                       help=f"fetch only these groups: {' '.join(datafetch.GROUPS)}")
    fetch.add_argument("--languages", nargs="+", metavar="LANG",
                       help="FLORES-200 languages to fetch instead of the manifest's four (any code of Petrov "
                       "et al.'s repository, e.g. fin_Latn; `all`: the 204 languages of their published "
                       "table)")  # fmt: skip
    fetch.add_argument("--ud", nargs="+", metavar="UD_LANG-TREEBANK",
                       help="also fetch these Universal Dependencies treebanks (train/dev/test) from their "
                       f"repositories at a release tag, e.g. UD_Finnish-TDT or UD_Finnish-TDT@r2.15 "
                       f"(default tag {datafetch.UD_DEFAULT_TAG})")  # fmt: skip
    fetch.add_argument("--quiet", action="store_true", help="no progress bar")
    fetch.set_defaults(handler=handle_fetch)

    verify = commands.add_parser(
        "verify", help="check every manifest file of a data root; exit 1 on a missing or differing file",
        description="Compare every file of DIR with the manifest's sha256 and size; list missing, differing and "
        "extra files. Exit status: 0 = all present and matching, 1 = a file missing or differing, 2 = bad input.",
    )
    verify.add_argument("dir", type=Path, metavar="DIR")
    verify.add_argument("--only", nargs="+", choices=datafetch.GROUPS, metavar="GROUP", help="check only these groups")
    verify.set_defaults(handler=handle_verify)


def handle_fetch(args: argparse.Namespace) -> int:
    from benchmarks.errors import BenchmarkError

    root = args.dir or datafetch.default_data_dir()
    languages = args.languages
    if languages is not None and "all" in languages:
        if len(languages) > 1:
            raise BenchmarkError("--languages all means every language of Petrov et al.'s published table: give it "
                                 "alone")  # fmt: skip
        from benchmarks.reproductions import get_reproduction
        from benchmarks.reproductions.engine import published

        languages = sorted(published(get_reproduction("petrov2023")).languages)
    print(f"data root: {root}")
    result = run_fetch(root, only=args.only, languages=languages, treebanks=args.ud, progress=not args.quiet)
    return 1 if result.failed else 0


def run_fetch(root: Path, *, only=None, languages=None, treebanks=None, progress: bool = True) -> datafetch.FetchResult:
    """Fetch, then print the summary and the licences that restrict use (shared with `run --fetch`)."""
    result = datafetch.fetch(root, only=only, languages=languages, treebanks=treebanks, progress=progress)
    for path, reason in result.failed.items():
        print(f"failed: {path}: {reason}", file=sys.stderr)
    for path, reason in result.unavailable.items():
        print(f"not fetched: {path}: {reason}", file=sys.stderr)
    print(f"{len(result.fetched)} fetched, {len(result.present)} already there, {len(result.failed)} failed"
          + (f", {len(result.unavailable)} not fetched (listed above)" if result.unavailable else ""))  # fmt: skip
    entries = datafetch.read_manifest()
    here = set(result.fetched) | set(result.present)
    restricted = datafetch.restrictive_licenses(e for e in entries if e.path in here)
    if restricted:
        print("licences that restrict use (see SOURCES.tsv):")
        for license_text, paths in restricted.items():
            print(f"  {license_text}: {', '.join(paths)}")
    return result


def handle_verify(args: argparse.Namespace) -> int:
    from benchmarks.errors import BenchmarkError

    if not args.dir.is_dir():
        raise BenchmarkError(f"{args.dir}: no such directory")
    check = datafetch.verify(args.dir, only=args.only)
    for path in check.missing:
        print(f"missing: {path}")
    for path, reason in check.mismatched.items():
        print(f"differs: {path}: {reason}")
    for path in check.not_downloadable:
        print(f"missing (no URL in the manifest, copy by hand): {path}")
    for path in check.extra:
        print(f"extra (not in the manifest): {path}")
    print(f"{len(check.matching)} matching, {len(check.mismatched)} differing, {len(check.missing)} missing, "
          f"{len(check.not_downloadable)} not downloadable, {len(check.extra)} extra")  # fmt: skip
    return 0 if check.ok else 1


def fetch_requested(flag: bool) -> bool:
    return flag or os.environ.get(FETCH_VARIABLE) == "1"


def add_fetch_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--fetch", action="store_true",
                        help="without a data root, run `tokbench data fetch` into the cache first "
                        f"(or {FETCH_VARIABLE}=1)")  # fmt: skip


def data_root_or_fetch(data_dir: Path | None, fetch_flag: bool, needed_by: str) -> Path:
    """The data root a command needs: ``--data-dir``, ``$TOKBENCH_DATA``, a data root fetched earlier into the
    cache, or (only with ``--fetch`` / ``TOKBENCH_FETCH=1``: never a silent download) one fetched now."""
    from benchmarks.errors import BenchmarkError
    from corpora.sources import data_root

    root = data_root(data_dir)
    cached = datafetch.default_data_dir()
    if root is not None:
        if data_dir is None and root == cached.resolve():
            print(f"data root: {cached} (fetched by `tokbench data fetch`)", file=sys.stderr)
        return root
    if not fetch_requested(fetch_flag):
        raise BenchmarkError(f"{needed_by} needs a data root and none is given: fetch one with `tokbench data fetch` "
                             "(or add --fetch), or pass --data-dir DIR / set TOKBENCH_DATA", code="needs_data_root",
                             value=needed_by)  # fmt: skip
    print(f"data root: {cached}", file=sys.stderr)
    result = run_fetch(cached, progress=sys.stderr.isatty())
    if result.failed:
        raise BenchmarkError(f"`tokbench data fetch {cached}` failed for {len(result.failed)} files "
                             f"({', '.join(result.failed)}); run it again to resume", code="fetch_failed",
                             value=len(result.failed))  # fmt: skip
    return cached


def config_needs_data_root(config: object) -> bool:
    """Whether an experiment config reads a corpus from the data root (a ``path`` source of its spec)."""
    from corpora.spec import FLORES_PREFIX, load_spec

    for entry in config.corpora:  # type: ignore[attr-defined]
        if entry.startswith(FLORES_PREFIX):  # a FLORES-200 file of the data root
            return True
        spec = load_spec(config.corpus_source(entry))  # type: ignore[attr-defined]
        if any(source.kind == "path" for source in spec.sources):
            return True
    return False


#: a training file's suffix -> its format in a corpus spec (corpora.spec.FILE_FORMATS)
TRAIN_FORMATS = {".txt": "text", ".jsonl": "jsonl", ".parquet": "parquet", ".csv": "csv", ".tsv": "tsv",
                 ".conllu": "conllu"}  # fmt: skip
FLORES_DEV, FLORES_ALL = datafetch.FLORES_DEV_LINES, datafetch.FLORES_LINES  # dev; dev then devtest


def new_corpus_spec(language: str, treebank: str | None, root: Path, train: str | None = None,
                    train_hub: str | None = None, column: str = "text") -> tuple[str, str]:  # fmt: skip
    """A corpus spec (id, TOML text) for ``language``, evaluated on FLORES-200 in the data root ``root`` as the
    parallel set (key = line, so parity pairs sentences with every other language's whatever lines each holds).

    Training text, one of: a UD ``treebank`` (train = its train file, else dev; test = its test file; eval =
    FLORES dev+devtest), a text file ``train`` or a hub split ``train_hub`` (``DATASET[:CONFIG]:SPLIT``, its
    ``column``; eval = FLORES dev+devtest), or none (a quick look: train = FLORES dev, eval = FLORES devtest).
    Licence fields name the sources; the user reviews the spec before using it."""
    from benchmarks.errors import BenchmarkError

    if sum(option is not None for option in (treebank, train, train_hub)) > 1:
        raise BenchmarkError("give one training source: --ud, --train or --train-hub")
    flores = datafetch.flores_entry(language, datafetch.read_manifest())
    if not (root / flores.path).is_file():
        raise BenchmarkError(f"{root / flores.path}: not found; fetch it with "
                             f"`tokbench data fetch --languages {language}`")  # fmt: skip
    command = f"tokbench corpora new {language}"
    if treebank is not None:
        return _ud_spec(language, treebank, root, flores, command)
    corpus_id = language.lower().replace("_", "-")
    if train is not None:
        suffix = Path(train).suffix.lower()
        if suffix not in TRAIN_FORMATS:
            raise BenchmarkError(f"--train {train}: unknown format {suffix or '(no suffix)'!r}; expected one of "
                                 f"{', '.join(TRAIN_FORMATS)}")  # fmt: skip
        if not (Path(train) if Path(train).is_absolute() else root / train).is_file():
            raise BenchmarkError(f"--train {train}: no such file (a path under the data root {root}, or absolute)")
        column_line = f'column = "{column}"\n' if TRAIN_FORMATS[suffix] in ("jsonl", "parquet", "csv", "tsv") else ""
        training = (f'[[sources]]\nkind = "path"\nrole = "train"\nformat = "{TRAIN_FORMATS[suffix]}"\n'
                    f'files = {_toml_string(train)}\n{column_line}')  # fmt: skip
        said, licence = f"train: {train}", "the training file's licence: FILL IN"
    elif train_hub is not None:
        parts = train_hub.split(":")
        if len(parts) not in (2, 3) or not all(parts):
            raise BenchmarkError(f"--train-hub {train_hub}: expected DATASET:SPLIT or DATASET:CONFIG:SPLIT")
        dataset, split = parts[0], parts[-1]
        config_line = f"config = {_toml_string(parts[1])}\n" if len(parts) == 3 else ""
        training = (f'[[sources]]\nkind = "hf"\nrole = "train"\ndataset = {_toml_string(dataset)}\n{config_line}'
                    f"split = {_toml_string(split)}\ncolumn = {_toml_string(column)}\n")  # fmt: skip
        said, licence = f"train: hub dataset {train_hub}", f"{dataset}'s licence: FILL IN"
    else:
        training = (f'[[sources]]\nkind = "path"\nrole = "train"\nformat = "text"\nfiles = "{flores.path}"\n'
                    f"lines = [1, {FLORES_DEV}]      # FLORES-200 dev: a quick look, not a training corpus\n")
        said, licence = "train: FLORES-200 dev (997 sentences: a quick look)", ""
    # evaluation: FLORES devtest when dev trains, else dev+devtest with the dev split declared
    quick = train is None and train_hub is None
    lines = f"lines = [{FLORES_DEV + 1}, {FLORES_ALL}]  # FLORES-200 devtest\n" if quick else ""
    dev = "" if quick else f"  dev = [1, {FLORES_DEV}]      # FLORES-200 dev; the lines after it are devtest\n"
    evaluated = "FLORES-200 devtest" if quick else "FLORES-200 dev+devtest"
    licences = "; ".join(part for part in (licence, flores.license) if part)
    option = "" if quick else (f" --train {train}" if train is not None else f" --train-hub {train_hub}")
    text = f'''# Written by `{command}{option}`: review it (licences, splits) before use.
id = "{corpus_id}"
language = "{language}"
license = "{licences}"
description = """
{language}: {said}; eval: {evaluated} (line i is the same sentence in every language).
"""
provenance = "data root flores/ (tokbench data fetch; see SOURCES.tsv)"

{training}
[[sources]]
kind = "path"
role = "eval"
format = "text"
files = "{flores.path}"
{lines}  [sources.parallel]
  name = "flores-200"
  key = "line"
{dev}'''
    return corpus_id, text


def _toml_string(value: str) -> str:
    import json

    return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string


def _ud_spec(language: str, treebank: str, root: Path, flores: datafetch.Entry, command: str) -> tuple[str, str]:
    """The spec of ``new_corpus_spec`` for a UD treebank."""
    from benchmarks.errors import BenchmarkError

    splits = {entry.path.rsplit("-", 1)[1].removesuffix(".conllu"): entry for entry in datafetch.ud_entries(treebank)}
    present = {split: entry for split, entry in splits.items() if (root / entry.path).is_file()}
    train = present.get("train") or present.get("dev")
    if train is None or "test" not in present:
        raise BenchmarkError(f"{root}: {treebank} needs a train (or dev) and a test file under ud/; fetch them with "
                             f"`tokbench data fetch --ud {treebank}`")  # fmt: skip
    corpus_id = f"ud-{language.split('_')[0]}"
    repository = treebank.split("@")[0]
    text = f'''# Written by `{command} --ud {treebank}`: review it (licences, splits) before use.
id = "{corpus_id}"
language = "{language}"
license = "{train.license} ({repository}); {flores.license}"
description = """
{repository} text with gold word segmentation. train: its {train.path.rsplit('-', 1)[1].removesuffix('.conllu')} file;
test: its test file; eval: FLORES-200 dev+devtest (line i is the same sentence in every language).
"""
provenance = "data root {train.path.rsplit('/', 1)[0]}/ and flores/ (tokbench data fetch; see SOURCES.tsv)"

[[sources]]
kind = "path"
role = "train"
format = "conllu"
files = "{train.path}"

[[sources]]
kind = "path"
role = "test"
format = "conllu"
files = "{present['test'].path}"

[[sources]]
kind = "path"
role = "eval"
format = "text"
files = "{flores.path}"
  [sources.parallel]
  name = "flores-200"
  key = "line"
  dev = [1, {FLORES_DEV}]      # FLORES-200 dev; lines {FLORES_DEV + 1}-{FLORES_ALL} are devtest
'''
    return corpus_id, text
