"""The language models of a ``[downstream]`` table: their scale and setup, the paired BPB tests, and which
intrinsic metric predicts BPB (the tables of bits per byte and of the correlations are in the metric group
"Language modelling"; ``benchmarks.downstream``)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from benchmarks.measure.evaluate import SIGNIFICANCE_LEVEL
from benchmarks.measure.metrics import METRICS
from benchmarks.report.document import (
    Block,
    BulletList,
    Code,
    Details,
    Heading,
    Inline,
    Link,
    Paragraph,
    SimpleTable,
    Verbatim,
)
from benchmarks.report.findings import vocab_label
from benchmarks.report.sections.context import Context
from benchmarks.report.tables import CORRELATIONS


def downstream_section(context: Context) -> list[Block]:
    run = context.run
    models = run.models
    settings = run.manifest.get("config", {}).get("downstream")
    if models is None or models.empty or not isinstance(settings, dict):
        return []
    first = models.drop_duplicates(["corpus", "tokenizer", "vocab_size"])
    body = int(first["non_embedding_parameters"].iloc[0])
    blocks: list[Block] = [
        Heading(2, Verbatim("Language models: setup, paired tests and what predicts bits per byte")),
        Paragraph(Verbatim(_scale_sentence(settings, body, len(set(models["seed"]))))),
        Paragraph(Verbatim(_fairness_sentence(settings, first))),
        Details("every model's size and cost", [_setup_table(first)]),
    ]
    blocks += _paired(run.models_paired)
    blocks += _validity_findings(run.validity)
    return blocks


def _scale_sentence(settings: dict[str, Any], body: int, seeds: int) -> str:
    return (f"Toy scale: {settings['layers']}-layer Llama decoders of width {settings['width']} ({body:,} parameters "
            f"outside the embedding) trained on {settings['train_bytes'] / 1000:,.0f} kB of text per language, "
            f"{seeds} seeds each. At this scale the numbers rank tokenizers for tiny models on little text; they do "
            "not by themselves predict how large models rank them (Lotz et al. 2025 find that 350M-parameter models "
            "already predict the ranking seen at 2.7B; these models are some thousand times smaller).")


def _fairness_sentence(settings: dict[str, Any], first: pd.DataFrame) -> str:
    contexts = first["context_tokens"]
    charged = first[first["unk_bytes"] > 0]
    unk = ("No row emits <unk> on the scored text." if charged.empty else
           f"Bytes under an <unk> token are charged 8 bits each (an upper bound: the byte sent verbatim): "
           f"{', '.join(sorted(set(charged['tokenizer'])))} pay it.")  # fmt: skip
    return (f"Every model of a language sees the same {settings['train_bytes']:,} training bytes, the same "
            f"context of {settings['context_bytes']} bytes ({int(contexts.min())}–{int(contexts.max())} tokens "
            "depending on the tokenizer), the same body, optimiser, schedule and number of steps; only the "
            "embedding and output layer follow the vocabulary (the ids the training text uses, plus one class "
            f"sharing the others' probability evenly: see docs/downstream.md). {unk}")


def _setup_table(first: pd.DataFrame) -> SimpleTable:
    header: list[Inline] = [Verbatim(name) for name in ["language", "tokenizer", "size", "context (tokens)",
                                                          "output classes", "parameters", "outside embedding",
                                                          "with full vocabulary", "training FLOPs"]]  # fmt: skip
    ordered = first.sort_values(["language", "tokenizer", "vocab_size"], kind="stable")
    rows: list[list[Inline]] = []
    values = []
    for row in ordered.itertuples():
        size = vocab_label(int(row.vocab_size)) if pd.notna(row.vocab_size) else "published"
        rows.append([str(row.language), str(row.tokenizer), size, f"{row.context_tokens:,}", f"{row.classes:,}",
                     f"{row.parameters:,}", f"{row.non_embedding_parameters:,}",
                     f"{row.full_vocabulary_parameters:,}", f"{row.train_flops:.2e}"])  # fmt: skip
        values.append([None, None, None, float(row.context_tokens), float(row.classes), float(row.parameters),
                       float(row.non_embedding_parameters), float(row.full_vocabulary_parameters),
                       float(row.train_flops)])  # fmt: skip
    return SimpleTable(header, rows, "lllrrrrrr", values)


def _side(tokenizer: str, size: Any) -> str:
    return tokenizer if pd.isna(size) else f"{tokenizer} {vocab_label(int(size))}"


def _paired(paired: pd.DataFrame | None) -> list[Block]:
    if paired is None or paired.empty:
        return []
    counts: list[Inline] = []
    for (corpus, eval_set), group in paired.groupby(["corpus", "eval_set"], sort=True):
        significant = group[group["p_value_holm"] < SIGNIFICANCE_LEVEL]
        counts.append((Code(f"{corpus}/{eval_set}"), Verbatim(f": {len(significant)} of {len(group)} pairs differ in "
                                                              f"BPB (Holm-adjusted p < {SIGNIFICANCE_LEVEL:g}).")))
    header: list[Inline] = [Verbatim(name) for name in ["corpus", "set", "A", "B", "A − B", "CI", "p", "p (Holm)"]]
    ordered = list(paired.itertuples())
    cells: list[list[Inline]] = [
        [str(row.corpus), str(row.eval_set), _side(row.tokenizer_a, row.vocab_size_a),
         _side(row.tokenizer_b, row.vocab_size_b), f"{row.difference:+.4f}", f"[{row.ci_low:+.4f}, {row.ci_high:+.4f}]",
         f"{row.p_value:.3g}", f"{row.p_value_holm:.3g}"] for row in ordered]  # fmt: skip
    values = [[None, None, None, None, float(row.difference), float(row.ci_low), float(row.p_value),
               float(row.p_value_holm)] for row in ordered]  # fmt: skip
    return [Heading(3, Verbatim("Paired differences in bits per byte")),
            Paragraph((Verbatim("Row A minus row B in BPB on the same documents, each document's bits averaged over "
                                "the seeds: a paired bootstrap CI and a paired permutation test ("),
                       Code("benchmarks/measure/paired.py"),
                       Verbatim("), Holm–Bonferroni adjusted within each corpus and evaluation set. Full table: "),
                       Link("downstream-paired.csv", "downstream-paired.csv"), Verbatim("."))),
            BulletList(counts), Details("all pairs", [SimpleTable(header, cells, "llllrlrr", values)])]  # fmt: skip


#: correlations named per language in the findings (the strongest whose CI excludes 0)
SHOWN = 5


def _validity_findings(validity: pd.DataFrame | None) -> list[Block]:
    if validity is None or validity.empty:
        return []
    spearman = validity[validity["method"] == "spearman"]
    languages = sorted(set(spearman["language"]) - {"pooled"}) + (["pooled"] if "pooled" in set(spearman["language"])
                                                                  else [])  # fmt: skip
    items: list[Inline] = []
    for language in languages:
        rows = spearman[spearman["language"] == language]
        excluding = rows[(rows["ci_low"] > 0) | (rows["ci_high"] < 0)]
        points = f"n = {int(rows['n'].max())} rows"
        if excluding.empty:
            items.append(Verbatim(f"{language}: no metric's CI excludes 0 ({len(rows)} metrics, {points}): none is "
                                  "shown to predict BPB here."))  # fmt: skip
            continue
        strongest = excluding.assign(size=excluding["value"].abs()).sort_values("size", ascending=False,
                                                                                  kind="stable")  # fmt: skip
        named = [f"{METRICS[row.metric].label} ({row.reference or row.eval_set}) {row.value:+.2f} "
                 f"[{row.ci_low:+.2f}, {row.ci_high:+.2f}]" for row in strongest.head(SHOWN).itertuples()]
        more = f" and {len(excluding) - SHOWN} more" if len(excluding) > SHOWN else ""
        items.append(Verbatim(f"{language}: {len(excluding)} of {len(rows)} metrics have a CI that excludes 0 "
                              f"({points}); the strongest: {'; '.join(named)}{more}. Every other metric's CI "
                              "includes 0."))  # fmt: skip
    return [Heading(3, Verbatim("Which metric predicts bits per byte")),
            Paragraph((Verbatim(f"{CORRELATIONS['spearman']} of each intrinsic metric with BPB across the rows with "
                                "a model, bootstrap CI over tokenizers (tables above; Kendall's τ-b beside it; "
                                "every correlation in "),
                       Link("downstream-validity.csv", "downstream-validity.csv"), Verbatim("):"))),
            BulletList(items)]  # fmt: skip
