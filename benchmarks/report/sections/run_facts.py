"""The run's facts: identifiers, the report settings, packages, the corpora read and the morpheme
references with gold/silver and their agreement."""

from __future__ import annotations

from typing import Any

from benchmarks.report.document import Block, BulletList, Code, Inline, Paragraph, SimpleTable, Verbatim, text
from benchmarks.report.findings import vocab_label
from benchmarks.report.sections.context import Context
from benchmarks.report.tables import EVAL_SETS, reference_label


def run_facts(context: Context) -> list[Block]:
    run = context.run
    manifest = run.manifest
    config = manifest["config"]
    items: list[Inline] = []
    for name, value in (
        ("run", manifest.get("run_id") or manifest.get("run")),
        ("config", config.get("name")),
        ("config source", config.get("source")),
        ("config fingerprint", manifest.get("config_fingerprint")),
        ("git revision", manifest.get("git_revision")),
        ("seed", config.get("seed")),
        ("bootstrap", f"{config['bootstrap_resamples']} resamples" if "bootstrap_resamples" in config else None),
    ):
        if value is not None:
            items.append((Verbatim(f"{name}: "), Code(str(value))))
    matched = "closest reached size" if run.match == "reached" else "closest requested size"
    items.append(text(
        f"report vocabulary size: {vocab_label(run.report_vocab_size)}, each trained tokenizer at its {matched} "
        f"(`report.match = \"{run.match}\"`); published tokenizers have their own vocabularies", escape=False))
    items.append(text(f"`<unk>` threshold: {run.unk_threshold:.0%} of tokens (`report.unk_threshold`)", escape=False))
    data_root = manifest.get("data_root")
    if isinstance(data_root, dict) and data_root.get("matches_manifest") is False:
        counts = {name: len(data_root.get(name) or []) for name in ("differing", "missing", "extra")}
        items.append(text("data root: differs from tokbench's manifest (`tokbench data verify DIR` lists the files): "
                          + ", ".join(f"{count} {name}" for name, count in counts.items()), escape=False))  # fmt: skip
    packages = manifest.get("packages")
    if isinstance(packages, dict) and packages:
        items.append(Verbatim("packages: " + ", ".join(f"{name} {packages[name]}" for name in sorted(packages))))
    return [BulletList(items), *corpus_table(context), *reference_table(context)]


def _number(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else "–"


def _value(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def corpus_table(context: Context) -> list[Block]:
    corpora = context.run.manifest.get("corpora")
    if not isinstance(corpora, dict) or not corpora:
        return []
    rows, values, facts = [], [], []
    for corpus_id in sorted(corpora):
        entry = corpora[corpus_id] if isinstance(corpora[corpus_id], dict) else {}
        documents, characters = entry.get("documents", {}), entry.get("characters", {})
        sources = entry.get("sources", {})
        language = str(entry.get("language", ""))
        for role in [r for r in ("train", "test", "eval") if r in documents] + sorted(set(documents) - set(EVAL_SETS)):
            rows.append([Code(corpus_id), language, role, _number(documents.get(role)),
                         _number(characters.get(role)), "; ".join(sources.get(role, []))])  # fmt: skip
            values.append([None, None, None, _value(documents.get(role)), _value(characters.get(role)), None])
            facts.append({"language": language, "family": ""})
    if not rows:
        return []
    header: list[Inline] = ["corpus", "language", "set", "documents", "characters", "read from"]
    return [Paragraph("Corpora:"), SimpleTable(header, rows, "lllrrl", values, facts)]


def reference_table(context: Context) -> list[Block]:
    run = context.run
    corpora = run.manifest.get("corpora")
    rows, values, facts = [], [], []
    for corpus_id in sorted(corpora) if isinstance(corpora, dict) else []:
        entry = corpora[corpus_id] if isinstance(corpora[corpus_id], dict) else {}
        references = entry.get("references", {})
        for name in sorted(references):
            found = references[name]
            agreement = found.get("agreement_measured") or found.get("agreement_documented") or []
            measured = "this run" if found.get("agreement_measured") else "documented"
            with_gold = "; ".join(f"F1 {a['f1']:.3f} vs {a['gold']} ({measured})" for a in agreement)
            if found.get("kind") != "silver":
                with_gold = "(gold)"
            share = found.get("share_kept")
            rows.append([Code(corpus_id), Code(name), reference_label(run, corpus_id, name),
                         _number(found.get("words")), f"{share:.1%}" if isinstance(share, float) else "–",
                         with_gold or "unknown", str(found.get("caveat", ""))])  # fmt: skip
            values.append([None, None, None, _value(found.get("words")),
                           share if isinstance(share, float) else None, None, None])  # fmt: skip
            facts.append({"language": str(entry.get("language", "")), "family": ""})
    if not rows:
        return []
    header: list[Inline] = ["corpus", "reference", "kind", "words", "entries kept", "agreement with gold", "caveat"]
    return [Paragraph("Morpheme references (gold: hand-made segmentations; silver: an analyzer's output, with its "
                      "boundary F1 against gold):"), SimpleTable(header, rows, "lllrrll", values, facts)]  # fmt: skip
