"""`tokbench corpora list | show | stats | validate | agreement`.

Corpus errors (bad spec, missing file, no data root, unreachable hub) are ``corpora.CorpusError``:
``benchmarks.cli`` prints them as one line and exits 2.  Warnings about repaired input (invalid
UTF-8 replaced) are printed on stderr.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
import warnings
from pathlib import Path
from typing import Any

from benchmarks import render
from corpora import CorpusWarning, list_corpora, load_corpus, load_spec
from corpora.silver import SILVER, agreement_table, gold_references
from corpora.spec import CorpusSpec
from corpora.stats import corpus_stats, reference_coverage

DATA_DIR_HELP = "data root with flores/, ud/, morph/ (default: $TOKBENCH_DATA; without one, hub alternatives are used)"


def register(subparsers: argparse._SubParsersAction) -> None:
    group = subparsers.add_parser("corpora", help="list, inspect, measure and validate corpus specs")
    commands = group.add_subparsers(dest="corpora_command", metavar="SUBCOMMAND", required=True)

    listing = commands.add_parser("list", help="the corpus specs shipped in corpora/*.toml")
    listing.set_defaults(handler=_list)

    new = commands.add_parser(
        "new", help="write a spec for a language evaluated on FLORES-200 (trained on a UD treebank, a file, a hub "
        "split, or FLORES dev)", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Write a corpus spec for LANG whose eval role is its FLORES-200 file in the data root, paired "
        "with every other language\nby line (parity needs no padding). Training text, one of:\n"
        "  --ud UD_LANG-TREEBANK   the treebank's train (else dev) file; its test file is the test role\n"
        "  --train FILE            a text/jsonl/parquet/csv/tsv/conllu file (under the data root, or absolute)\n"
        "  --train-hub D[:C]:S     a Hugging Face dataset split (its --column)\n"
        "  (none)                  FLORES dev, for a quick look; eval is then FLORES devtest only",
        epilog="examples:\n  tokbench data fetch --languages kaz_Cyrl && tokbench corpora new kaz_Cyrl\n"
        "  tokbench corpora new fin_Latn --ud UD_Finnish-TDT\n"
        "  tokbench corpora new fin_Latn --train-hub HuggingFaceFW/fineweb-2:fin_Latn:train",
    )  # fmt: skip
    new.add_argument("language", metavar="LANG", help="FLORES-200 code, e.g. fin_Latn")
    training = new.add_mutually_exclusive_group()
    training.add_argument("--ud", metavar="UD_LANG-TREEBANK", help="e.g. UD_Finnish-TDT (as fetched)")
    training.add_argument("--train", metavar="FILE", help="a training text file")
    training.add_argument("--train-hub", metavar="DATASET[:CONFIG]:SPLIT", help="a hub dataset split to train on")
    new.add_argument("--column", default="text", help="the text column of a --train table or --train-hub split "
                     "(default: text)")  # fmt: skip
    new.add_argument("--data-dir", type=Path, default=None,
                     help="data root holding the files (default: $TOKBENCH_DATA, else the fetched one in the cache)")
    new.add_argument("--out", type=Path, default=None, help="spec file to write (default: ./<id>.toml)")
    new.set_defaults(handler=_new)

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

    agreement = commands.add_parser(
        "agreement",
        help="boundary agreement of the silver analyzers with the gold morpheme references",
        description=f"For each silver analyzer ({', '.join(SILVER)}), boundary precision, recall and F1 "
        "(micro-summed, F1 = TP / (TP + (FP + FN) / 2)) against every gold reference of its language listed in "
        "the shipped corpus specs, on the gold words the analyzer segments; with alternative gold analyses, each "
        "word uses its best-matching one.",
    )
    agreement.add_argument("--data-dir", type=Path, help="data root holding the gold files (default: $TOKBENCH_DATA)")
    agreement.add_argument("--json", action="store_true", help="print JSON instead of a table")
    agreement.set_defaults(handler=_agreement)


def _list(args: argparse.Namespace) -> int:
    rows = []
    for spec in list_corpora():
        roles = sorted({source.role for source in spec.sources})
        summary = spec.description.split(". ")[0].replace("\n", " ")
        rows.append([spec.id, spec.language, ",".join(roles), summary])
    print(render.text(["id", "language", "roles", "description"], rows, "llll"))
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
    for roles, purpose in (("train",), "train on"), (("test", "eval"), "compute metrics on"):
        if not any(corpus.documents(role) for role in roles):
            print(f"tokbench: warning: {spec.id}: no {' or '.join(roles)} documents: `tokbench run` needs them to "
                  f"{purpose}", file=sys.stderr)  # fmt: skip
    stats = corpus_stats(corpus)
    if references:
        stats["references"] = reference_coverage(corpus)
    if as_json:
        print(json.dumps(stats, ensure_ascii=False, indent=1))
        return 0
    print(f"{stats['id']} ({stats['language']}), fingerprint {stats['fingerprint'][:16]}")
    print(_leak_line(stats["leaks"]))
    _print_table(stats["roles"], spec.script)
    for name, coverage in stats.get("references", {}).items():
        dropped = ", ".join(f"{reason} {count:,}" for reason, count in coverage["dropped"].items()) or "none"
        print(f"reference {name} ({coverage['kind']}): {coverage['words']:,} words; kept "
              f"{coverage['entries_kept']:,} of {coverage['entries_read']:,} entries "
              f"({coverage['share_kept']:.1%}); dropped: {dropped}")  # fmt: skip
    return 0


def _leak_line(leaks: dict[str, Any]) -> str:
    """What the leak check found (corpora/leaks.py), in one line."""
    leaked = " and ".join(f"{count:,} {role}" for role, count in leaks["leaked_documents"].items())
    if not leaked:
        found = "no test or eval document occurs in the training text"
    else:
        holders = f"{leaks['training_documents']:,} training document(s)"
        found = f"{leaked} document(s) occur in {holders}, " + ("dropped" if leaks["policy"] == "drop" else "kept")
    return f"leak check (on_leak = {leaks['policy']}): {found}"


_COLUMNS = ("documents", "sentences", "words", "word_types", "characters", "utf8_bytes")


def _print_table(roles: dict[str, dict[str, Any]], script: str) -> None:
    rows = []
    for role, values in roles.items():
        share = values["script_share"]
        rows.append([role, *(f"{values[name]:,}" for name in _COLUMNS), "n/a" if share is None else f"{share:.2%}"])
    print(render.text(["role", *_COLUMNS, f"share {script}"], rows, "l" + "r" * (len(_COLUMNS) + 1)))


def _agreement(args: argparse.Namespace) -> int:
    golds, skipped = gold_references(args.data_dir)
    rows = agreement_table(golds)
    for message in skipped:
        print(f"tokbench: warning: {message}", file=sys.stderr)
    if args.json:
        records = [
            {
                **dataclasses.asdict(result),
                "precision": _rounded(result.precision),
                "recall": _rounded(result.recall),
                "f1": _rounded(result.f1),
                "analyzer_source": silver.source,
                "analyzer_coverage": dataclasses.asdict(silver.coverage),
                "gold_source": gold.source,
                "gold_notes": gold.notes,
            }
            for result, silver, gold in rows
        ]
        print(json.dumps({"agreement": records, "skipped": skipped}, ensure_ascii=False, indent=1))
        return 0
    if not rows:
        print("no gold reference of an analyzer's language is listed in the corpus specs")
        return 0
    cells = [
        [result.analyzer, result.language, result.gold, result.gold_kind, f"{result.words}/{result.gold_words}",
         *(f"{v:.3f}" for v in (result.precision, result.recall, result.f1))]
        for result, _, _ in rows
    ]  # fmt: skip
    header = ["analyzer", "lang", "gold reference", "kind", "words", "P", "R", "F1"]
    print(render.text(header, cells, "llllrrrr"))
    print("\nwords: gold words the analyzer segmented / all gold words (the analyzer drops the rest).")
    if any(result.gold_kind == "morphscore" for result, _, _ in rows):
        print("morphscore references hold one boundary per word: only their recall is meaningful.")
    sources = {silver.name: silver.source for _, silver, _ in rows}
    notes = {f"{gold.name} ({gold.language})": gold.notes for _, _, gold in rows if gold.notes}
    for name, text in [*sources.items(), *notes.items()]:
        print(f"{name}: {text}")
    return 0


def _rounded(value: float) -> float | None:
    """A score for JSON: 4 decimals, None where it is undefined (NaN is not JSON)."""
    return None if math.isnan(value) else round(value, 4)


def _new(args: argparse.Namespace) -> int:
    from benchmarks.commands.data import new_corpus_spec
    from benchmarks.data.fetch import default_data_dir
    from benchmarks.errors import BenchmarkError
    from bpe.atomic import atomic_write_text
    from corpora.sources import data_root
    from corpora.spec import read_spec_file

    root = data_root(args.data_dir) or default_data_dir()
    corpus_id, text = new_corpus_spec(args.language, args.ud, root, args.train, args.train_hub, args.column)
    out = args.out or Path(f"{corpus_id}.toml")
    if out.exists():
        raise BenchmarkError(f"{out}: exists; remove it or pass --out for another file")
    atomic_write_text(out, text)
    read_spec_file(out)  # the written spec parses (a bug here would be tokbench's)
    print(f"wrote {out} (corpus {corpus_id}); review it, then: tokbench corpora stats {out} --data-dir {root}")
    return 0
