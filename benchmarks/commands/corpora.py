"""`tokbench corpora list | show | stats | validate` (and `agreement`, added by ``corpora.silver``).

Corpus errors (bad spec, missing file, no data root, unreachable hub) are ``corpora.CorpusError``:
``benchmarks.cli`` prints them as one line and exits 2.  Warnings about repaired input (invalid
UTF-8 replaced) are printed on stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path
from typing import Any

from corpora import CorpusWarning, list_corpora, load_corpus, load_spec
from corpora.silver import register_cli
from corpora.spec import CorpusSpec
from corpora.stats import corpus_stats, reference_coverage

DATA_DIR_HELP = "data root with flores/, ud/, morph/ (default: $TOKBENCH_DATA; without one, hub alternatives are used)"


def register(subparsers: argparse._SubParsersAction) -> None:
    group = subparsers.add_parser("corpora", help="list, inspect, measure and validate corpus specs")
    commands = group.add_subparsers(dest="corpora_command", metavar="SUBCOMMAND", required=True)

    listing = commands.add_parser("list", help="the corpus specs shipped in corpora/*.toml")
    listing.set_defaults(handler=_list)

    show = commands.add_parser("show", help="a spec's fields and sources")
    show.add_argument("corpus", metavar="ID", help="shipped corpus id or path to a .toml spec")
    show.set_defaults(handler=_show)

    stats = commands.add_parser("stats", help="load a corpus and print its size per role")
    stats.add_argument("corpus", metavar="ID", help="shipped corpus id or path to a .toml spec")
    stats.add_argument("--data-dir", type=Path, help=DATA_DIR_HELP)
    stats.add_argument("--json", action="store_true", help="print JSON")
    stats.add_argument("--references", action="store_true",
                       help="also build the spec's morpheme references and print their coverage (silver analyzers "
                            "take seconds to a minute)")  # fmt: skip
    stats.set_defaults(handler=_stats)

    validate = commands.add_parser("validate", help="validate a spec file, load it and print its statistics")
    validate.add_argument("file", type=Path, help="path to a .toml corpus spec")
    validate.add_argument("--data-dir", type=Path, help=DATA_DIR_HELP)
    validate.add_argument("--json", action="store_true", help="print JSON")
    validate.set_defaults(handler=_validate)

    register_cli(commands)  # `tokbench corpora agreement` lives with the silver analyzers


def _list(args: argparse.Namespace) -> int:
    for spec in list_corpora():
        roles = sorted({source.role for source in spec.sources})
        summary = spec.description.split(". ")[0].replace("\n", " ")
        print(f"{spec.id:<14} {spec.language:<9} roles: {','.join(roles):<16} {summary}")
    return 0


def _show(args: argparse.Namespace) -> int:
    spec = load_spec(args.corpus)
    print(f"id:            {spec.id}")
    print(f"file:          {spec.path}")
    print(f"language:      {spec.language}")
    print(f"license:       {spec.license}")
    print(f"provenance:    {spec.provenance}")
    print(f"normalization: {spec.normalization}")
    print(f"test_fraction: {spec.test_fraction} (for role 'all' sources)")
    for cap in ("max_documents", "max_chars"):
        if getattr(spec, cap) is not None:
            print(f"{cap + ':':<15}{getattr(spec, cap)} per role")
    print("description:", *("  " + line for line in spec.description.splitlines()), sep="\n")
    print("sources:")
    for source in spec.sources:
        extra = f" format={source.format}" if source.format else ""
        extra += f" transforms={','.join(source.transforms)}" if source.transforms else ""
        print(f"  {source.role:<5} {source.describe()}{extra}")
        if source.kind == "path":
            for hub in source.hub:
                print(f"        without a data root: hub {hub.describe()} column={hub.column}")
    if spec.references:
        print("references:")
        for reference in spec.references:
            if reference.reader:
                what = f"gold, reader {reference.reader}: {', '.join(reference.files)}"
            else:
                what = f"silver, analyzer {reference.analyzer} over the test words"
            print(f"  {reference.name:<20} {what}")
    return 0


def _stats(args: argparse.Namespace) -> int:
    return _print_stats(load_spec(args.corpus), args.data_dir, args.json, args.references)


def _validate(args: argparse.Namespace) -> int:
    spec = load_spec(args.file)  # a path: never a shipped id
    if not args.json:
        print(f"{args.file}: spec {spec.id!r} is valid; loading it")
    return _print_stats(spec, args.data_dir, args.json)


def _print_stats(spec: CorpusSpec, data_dir: Path | None, as_json: bool, references: bool = False) -> int:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", CorpusWarning)
        corpus = load_corpus(spec, data_dir=data_dir)
    for warning in caught:
        print(f"tokbench: warning: {warning.message}", file=sys.stderr)
    stats = corpus_stats(corpus)
    if references:
        stats["references"] = reference_coverage(corpus)
    if as_json:
        print(json.dumps(stats, ensure_ascii=False, indent=1))
        return 0
    print(f"{stats['id']} ({stats['language']}), fingerprint {stats['fingerprint'][:16]}")
    _print_table(stats["roles"], spec.script)
    for name, coverage in stats.get("references", {}).items():
        dropped = ", ".join(f"{reason} {count:,}" for reason, count in coverage["dropped"].items()) or "none"
        print(f"reference {name} ({coverage['kind']}): {coverage['words']:,} words; kept "
              f"{coverage['entries_kept']:,} of {coverage['entries_read']:,} entries "
              f"({coverage['share_kept']:.1%}); dropped: {dropped}")  # fmt: skip
    return 0


_COLUMNS = ("documents", "sentences", "words", "word_types", "characters", "utf8_bytes", "script_share")


def _print_table(roles: dict[str, dict[str, Any]], script: str) -> None:
    header = f"{'role':<6}" + "".join(f"{name:>14}" for name in _COLUMNS[:-1]) + f"{'share ' + script:>14}"
    print(header, "-" * len(header), sep="\n")
    for role, values in roles.items():
        cells = [f"{values[name]:>14,}" for name in _COLUMNS[:-1]]
        share = values["script_share"]
        cells.append(f"{share:>14.2%}" if share is not None else f"{'n/a':>14}")
        print(f"{role:<6}" + "".join(cells))
