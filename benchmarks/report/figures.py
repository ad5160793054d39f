"""The report's plots (``benchmarks.report.plots``) with the findings under them (``benchmarks.report.findings``):
which plots each metric group has, and drawing them, on several processes when there are several.
Each draw writes ``<stem>.png|.pdf|.svg`` into the plots folder it is given and returns a ``Plot``
(its caption and findings) or ``Skipped`` (why the run has nothing to draw)."""

from __future__ import annotations

import math
from collections.abc import Callable, Collection
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.files import TRAIN_CHARS
from benchmarks.measure.metrics import GROUPS, METRICS
from benchmarks.measure.registry import Capability, boundary_baseline_of, capabilities_of
from benchmarks.report import findings, plots
from benchmarks.report.cells import add_row_labels, at_report_size, flag_cells, tokenizer_order
from benchmarks.report.findings import vocab_label
from benchmarks.report.load import Run
from benchmarks.report.tables import ENGLISH, eval_sets_in_order, reference_label

#: the metric shown against the amount of training text: the first of these the run has (compression, as
#: Goldman et al. 2024, "Unpacking Tokenization", relate it to downstream quality)
TRAIN_CHARS_METRICS = ("bytes_per_token", "chars_per_token", "tokens_per_kchar")

#: a plot: drawn from the run with the report's palette (``plots.tokenizer_palette``) into a plots folder
Draw = Callable[[Run, dict[str, plots.Style], Path], "Plot | Skipped"]


@dataclass(frozen=True)
class Plot:
    """One plot of a group: its file stem (written as .png, .pdf and .svg), a caption, the findings under it."""

    stem: str
    caption: str
    sentences: list[str]


@dataclass(frozen=True)
class Skipped:
    caption: str
    reason: str


def plot_frame(results: pd.DataFrame, metric: str) -> pd.DataFrame:
    """All rows of one metric (no morpheme reference), labelled for plotting."""
    rows = results[(results["metric"] == metric) & (results["reference"] == "")]
    return add_row_labels(rows) if not rows.empty else rows.assign(row=pd.Series(dtype=str))


def snapshot(run: Run, metric: str) -> pd.DataFrame:
    """The cells of one metric at the report size, every evaluation set, labelled for plots and findings."""
    rows = run.results[(run.results["metric"] == metric) & (run.results["reference"] == "")]
    return at_report_size(rows, run) if not rows.empty else rows


def excluded_sentence(cells: pd.DataFrame, run: Run) -> str | None:
    """Which tokenizers the findings leave out of comparisons, and why."""
    reasons = {"unk": f"more than {run.unk_threshold:.0%} of its tokens are <unk>",
               "baseline": "a baseline on boundary metrics", "unreliable": "its reference is unreliable"}  # fmt: skip
    left_out = cells[cells["not_ranked"] != ""].drop_duplicates(["tokenizer", "not_ranked"])
    if left_out.empty:
        return None
    parts = [f"{tokenizer} ({', '.join(reasons[r] for r in sorted(group['not_ranked']))})"
             for tokenizer, group in left_out.groupby("tokenizer", sort=True)]  # fmt: skip
    return f"Left out of these comparisons where marked in the tables: {findings.join_names(parts)}."


def mark_off_scale(cells: pd.DataFrame) -> pd.DataFrame:
    """``cells`` with ``off_scale``: True for a cell the tables mark ‡ (more ``<unk>`` than the report's
    threshold) or § (a boundary baseline), and for every cell of a boundary baseline
    (``registry.boundary_baseline_of``: word, char, bytes, chars), whose values sit at an extreme by
    construction on every metric.  The plots draw such cells but let the others set the axes and colour
    ranges, so a few extreme rows do not flatten the differences between the rest."""
    reasons = cells["not_ranked"] if "not_ranked" in cells.columns else pd.Series("", index=cells.index)
    baselines = {kind for kind in set(cells["kind"]) if boundary_baseline_of(kind) is not None}
    return cells.assign(off_scale=reasons.isin(["unk", "baseline"]).to_numpy() | cells["kind"].isin(baselines))


def off_scale_note(cells: pd.DataFrame, run: Run, colour: bool = False) -> str:
    """The caption's words on the off-scale rows of ``cells`` (``mark_off_scale``): which they are, why, and
    how they are drawn (``colour``: a heatmap's colour range, else the axes); "" without any, or when every
    cell is off scale (then they set the axes themselves)."""
    off = cells[cells["off_scale"]] if "off_scale" in cells.columns else cells.iloc[:0]
    if off.empty or len(off) == len(cells):  # nothing else to set the axes: the plots let these set them
        return ""
    parts = []
    for tokenizer, group in off.groupby("tokenizer", sort=True):
        baseline = boundary_baseline_of(str(group["kind"].iloc[0]))
        reasons = set(group["not_ranked"]) if "not_ranked" in group.columns else set()
        why = [f"a baseline that {baseline}"] if baseline else ["§ a baseline"] if "baseline" in reasons else []
        if "unk" in reasons:
            why.append(f"‡ where more than {run.unk_threshold:.0%} of its tokens are <unk>")
        parts.append(f"{tokenizer} ({'; '.join(why)})")
    verb = "do" if len(parts) > 1 else "does"
    how = ("the colour range (cells beyond it take the colour bar's end colour)" if colour
           else "the axes (beyond them: on the border, with an arrow and the value)")  # fmt: skip
    return f"; {findings.join_names(parts)} {verb} not set {how}"


def curve_plot(metric: str, run: Run, palette: dict[str, plots.Style], out_dir: Path) -> Plot | Skipped:
    info = METRICS[metric]
    caption = f"{info.label} against the vocabulary size reached, per language and evaluation set"
    frame = plot_frame(run.results, metric)
    if frame["vocab_size"].notna().sum() == 0:
        return Skipped(caption, f"this run has no `{metric}` rows with a vocabulary size")
    sizes = sorted(frame["vocab_size"].dropna().unique())
    if len(sizes) < 2:  # every point would sit at one x: the tables say it all
        return Skipped(caption, f"every trained row of this run has one vocabulary size ({int(sizes[0]):,}): a "
                                "curve against the size needs two; the tables show the values")  # fmt: skip
    cells = snapshot(run, metric)
    drawn = mark_off_scale(flag_cells(frame, run))
    plots.vocab_curves(drawn, info, palette, out_dir / f"{metric}-vs-vocab", baselines=alphabet_kinds(frame))
    caption += off_scale_note(drawn, run)
    return Plot(f"{metric}-vs-vocab", caption, findings.pick(
        findings.best_count(cells, info, run.at),
        findings.vocab_trend(flag_cells(frame, run), info),
        findings.language_gap(cells, info, run.at),
        excluded_sentence(cells, run),
    ))  # fmt: skip


def alphabet_kinds(frame: pd.DataFrame) -> set[str]:
    """Tokenizer labels whose vocabulary is their alphabet (drawn as a flat line, not against size)."""
    kinds = frame.drop_duplicates("tokenizer").set_index("tokenizer")["kind"]
    return {label for label, kind in kinds.items() if Capability.CHARACTER_TOKENS in capabilities_of(kind)}


def heatmap_plot(metric: str, run: Run, palette: dict[str, plots.Style], out_dir: Path) -> Plot | Skipped:
    info = METRICS[metric]
    caption = f"{info.label} at {run.at}: tokenizers × languages"
    cells = snapshot(run, metric)
    if cells.empty:
        return Skipped(caption, f"this run has no `{metric}` rows")
    drawn = mark_off_scale(cells)
    plots.heatmap(drawn, info, tokenizer_order(cells), out_dir / f"{metric}-heatmap")
    caption += off_scale_note(drawn, run, colour=True)
    return Plot(f"{metric}-heatmap", caption, findings.pick(
        findings.extremes(cells, info, run.at), findings.language_gap(cells, info, run.at),
        excluded_sentence(cells, run),
    ))  # fmt: skip


def morphology_plot(run: Run, palette: dict[str, plots.Style], out_dir: Path) -> Plot | Skipped:
    info = METRICS["boundary_f1"]
    caption = f"boundary precision against recall at {run.at}, one panel per language and reference (F1 as contours)"
    rows = run.results[run.results["metric"].isin(["boundary_precision", "boundary_recall", "boundary_f1"])
                       & (run.results["reference"] != "")]  # fmt: skip
    if rows.empty:
        return Skipped(caption, "this run has no boundary precision, recall and F1 rows")
    cells = at_report_size(rows, run)
    cells["panel"] = [f"{language} · {reference_label(run, corpus, reference)}"
                      for language, corpus, reference in zip(cells["language"], cells["corpus"], cells["reference"],
                                                             strict=True)]  # fmt: skip
    plots.precision_recall(cells, palette, out_dir / "boundary-precision-recall")
    f1 = cells[cells["metric"] == "boundary_f1"].assign(row=lambda frame: frame["panel"])
    return Plot("boundary-precision-recall", caption, findings.pick(
        findings.best_count(f1, info, run.at, unit="language/reference pairs"), findings.extremes(f1, info, run.at),
        excluded_sentence(f1, run),
    ))  # fmt: skip


#: a parity plot draws grouped bars up to this many languages, and one sorted row per language beyond
MAX_BAR_LANGUAGES = 12


def parity_plot(metric: str, run: Run, palette: dict[str, plots.Style], out_dir: Path) -> Plot | Skipped:
    info = METRICS[metric]
    caption = (f"{info.label} at {run.at}: shared tokenizers (left: published, or trained on every language), "
               "monolingual trained tokenizers (right)")
    cells = snapshot(run, metric)
    cells = cells[cells["language"] != ENGLISH] if not cells.empty else cells
    if cells.empty:
        return Skipped(caption, f"this run has no `{metric}` rows for a language other than English "
                                "(parity needs a parallel corpus such as FLORES)")  # fmt: skip
    cells = mark_off_scale(cells).assign(shared=lambda frame: run.shared(frame))
    shared = cells[cells["shared"]]
    if cells["row"].nunique() > MAX_BAR_LANGUAGES:  # bars stop being readable: Petrov et al.'s sorted lines
        caption = (f"{info.label}: one row per language, sorted by the median premium over the shared published "
                   "tokenizers (highest at the top), one line per tokenizer")  # fmt: skip
        plots.premium_curves(shared, info, palette, out_dir / f"{metric}-by-language")
        caption += off_scale_note(shared, run)
        return Plot(f"{metric}-by-language", caption, findings.pick(
            findings.extremes(shared, info, run.at), excluded_sentence(shared, run)))  # fmt: skip
    plots.parity_bars(cells, info, palette, out_dir / f"{metric}-bars")
    caption += off_scale_note(cells, run)
    return Plot(f"{metric}-bars", caption, findings.pick(
        findings.best_count(shared, info, run.at), findings.extremes(shared, info, run.at),
        excluded_sentence(shared, run),
    ))  # fmt: skip


def overlap_plot(run: Run, palette: dict[str, plots.Style], out_dir: Path) -> Plot | Skipped:
    """The vocabulary overlap of every two tokenizer rows per language (the ``vocab_overlap`` rows)."""
    caption = f"vocabulary overlap (Jaccard of the vocabularies' byte strings) at {run.at}: tokenizers × tokenizers"
    if run.overlap is None or run.overlap.empty:
        return Skipped(caption, "this run has no vocab_overlap rows (fewer than two tokenizer rows per corpus, or the "
                       "metric not selected)")
    overlap = run.overlap.copy()
    overlap["panel"] = [f"{language} ({corpus})" for language, corpus in zip(overlap["language"], overlap["corpus"],
                                                                             strict=True)]  # fmt: skip
    plots.overlap_heatmaps(overlap, tokenizer_order(run.results), out_dir / "vocab-overlap-heatmap")
    order = overlap.sort_values(["jaccard", "panel", "tokenizer_a", "tokenizer_b"],
                                ascending=[False, True, True, True], kind="stable")  # fmt: skip
    same = order[order["jaccard"] == 1].drop_duplicates(["tokenizer_a", "tokenizer_b"])
    identical = ", ".join(f"{row.tokenizer_a} and {row.tokenizer_b}" for row in same.itertuples())
    sentences = [f"Same vocabulary: {identical}."] if identical else []
    different = order[order["jaccard"] < 1]
    if not different.empty:
        top = different.iloc[0]
        sentences.append(f"The largest overlap of two different vocabularies is {top.tokenizer_a} and "
                         f"{top.tokenizer_b} in {top.panel}: {top.jaccard:.3f} ({top.shared:,} shared of "
                         f"{top['union']:,} entries).")  # fmt: skip
    return Plot("vocab-overlap-heatmap", caption, sentences)


#: the intrinsic metrics drawn against bits per byte: compression, the token distribution (Zouhar et al. 2023's
#: Rényi efficiency) and fertility
SCATTER_METRICS = ("bytes_per_token", "renyi_efficiency", "fertility_running")


def bpb_points(run: Run) -> pd.DataFrame:
    """Each row with a language model at every size it has one: its BPB on the first scored evaluation set
    and each ``SCATTER_METRICS`` value on the same set, with their CIs (``plots.metric_scatter``'s points)."""
    results = run.results
    bpb = results[results["metric"] == "bpb"]
    if bpb.empty:
        return pd.DataFrame()
    eval_set = eval_sets_in_order(bpb)[0]
    keys = ["corpus", "tokenizer", "vocab_size"]
    frames = []
    for metric in SCATTER_METRICS:
        rows = results[(results["metric"] == metric) & (results["eval_set"] == eval_set) & (results["reference"] == "")]
        joined = rows.merge(bpb[bpb["eval_set"] == eval_set][[*keys, "value", "ci_low", "ci_high"]], on=keys,
                            suffixes=("", "_bpb"))  # fmt: skip
        unk = (joined["unk_share"] > run.unk_threshold).to_numpy()
        frames.append(mark_off_scale(pd.DataFrame({
            "metric": metric, "language": joined["language"], "tokenizer": joined["tokenizer"],
            "kind": joined["kind"], "not_ranked": np.where(unk, "unk", ""),  # as the tables mark ‡
            "size": [vocab_label(int(size)) if pd.notna(size) else "published" for size in joined["vocab_size"]],
            "size_order": joined["vocab_size"].astype("float64").fillna(float("inf")),
            "x": joined["value"], "x_low": joined["ci_low"], "x_high": joined["ci_high"],
            "y": joined["value_bpb"], "y_low": joined["ci_low_bpb"], "y_high": joined["ci_high_bpb"]})))  # fmt: skip
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def bpb_scatter_plot(run: Run, palette: dict[str, plots.Style], out_dir: Path) -> Plot | Skipped:
    caption = ("bits per byte of the small language models against compression, Rényi efficiency and fertility, "
               "one panel per metric and language (error bars: CIs)")  # fmt: skip
    points = bpb_points(run)
    if points.empty:
        return Skipped(caption, "this run has no language models (no [downstream] table)")
    plots.metric_scatter(points, {metric: METRICS[metric].label for metric in SCATTER_METRICS}, palette,
                         out_dir / "bpb-vs-metrics")  # fmt: skip
    caption += off_scale_note(points, run)
    return Plot("bpb-vs-metrics", caption, findings.pick(*validity_sentences(run, SCATTER_METRICS)))


def validity_sentences(run: Run, metrics: tuple[str, ...]) -> list[str | None]:
    """Per metric of ``metrics``: its Spearman correlation with BPB per language, and whether the CI
    includes 0 (``benchmarks.downstream.validity``)."""
    if run.validity is None:
        return []
    sentences: list[str | None] = []
    spearman = run.validity[(run.validity["method"] == "spearman") & (run.validity["reference"] == "")]
    for metric in metrics:
        rows = spearman[spearman["metric"] == metric]
        if rows.empty:
            continue
        rows = rows[rows["eval_set"] == rows["eval_set"].iloc[0]]
        parts = [f"{row.language} {row.value:+.2f} [{row.ci_low:+.2f}, {row.ci_high:+.2f}]"
                 + (" (CI includes 0)" if row.ci_low <= 0 <= row.ci_high else "") for row in rows.itertuples()]
        sentences.append(f"Spearman's ρ of {METRICS[metric].label} with BPB: {'; '.join(parts)}.")
    return sentences


def group_plots(group: str, present: Collection[str] = ()) -> list[Draw]:
    """The plots of each report section, in order (parity: one per parity metric of the registry, an optional one
    only when the run has it: ``present``, the run's metrics)."""
    if group == "parity":
        return [partial(parity_plot, metric) for metric, info in METRICS.items()
                if info.group == "parity" and (not info.optional or metric in present)]  # fmt: skip
    return GROUP_PLOTS.get(group, [])


def pareto_plot(run: Run, palette: dict[str, plots.Style], out_dir: Path) -> Plot | Skipped:
    """Compression (bytes per token on the test text) against boundary F1 on each language's gold reference
    with the most words (the summary's choice), per language, with the Pareto front."""
    from benchmarks.report.summary import headlines

    caption = (f"bytes per token against boundary F1 on gold morphemes at {run.at}, one panel per language (error "
               "bars: CIs; dashed: the Pareto front, the ranked tokenizers no other beats on both; hollow: not "
               "ranked)")  # fmt: skip
    found = {headline.question: headline for headline in headlines(run)}
    if "gold morphemes" not in found or "compression" not in found:
        return Skipped(caption, "this run has no boundary F1 on a gold morpheme reference (or no compression rows)")
    f1, compression = found["gold morphemes"], found["compression"]
    keys = ["corpus", "tokenizer"]
    cells = {}
    for name, headline in (("f1", f1), ("bpt", compression)):
        rows = run.results[(run.results["metric"] == headline.metric) & (run.results["eval_set"] == headline.eval_set)]
        if name == "f1":  # per language, the one gold reference the summary chose
            chosen_reference = {language: best.reference for language, best in headline.best.items()}
            rows = rows[[chosen_reference.get(language) == reference
                         for language, reference in zip(rows["language"], rows["reference"], strict=True)]]
        # every row but those on an unreliable reference: the rows not ranked are drawn, off scale
        chosen = mark_off_scale(at_report_size(rows, run))
        chosen = chosen[chosen["value"].map(math.isfinite) & (chosen["not_ranked"] != "unreliable")]
        cells[name] = chosen[[*keys, "language", "kind", "value", "ci_low", "ci_high", "not_ranked", "off_scale"]]
    joined = cells["bpt"].merge(cells["f1"], on=[*keys, "language", "kind"], suffixes=("_x", "_y"))
    ranked = (joined["not_ranked_x"] == "") & (joined["not_ranked_y"] == "")
    if not ranked.any():
        return Skipped(caption, "no tokenizer row has both a compression and a gold boundary F1 value")
    points = pd.DataFrame({"language": joined["language"], "tokenizer": joined["tokenizer"], "kind": joined["kind"],
                           "not_ranked": joined["not_ranked_x"].where(joined["not_ranked_x"] != "",
                                                                     joined["not_ranked_y"]),
                           "x": joined["value_x"], "x_low": joined["ci_low_x"], "x_high": joined["ci_high_x"],
                           "y": joined["value_y"], "y_low": joined["ci_low_y"], "y_high": joined["ci_high_y"],
                           # hollow and setting no axis: not ranked on either, or a baseline
                           "off_scale": ~ranked | joined["off_scale_x"] | joined["off_scale_y"]})  # fmt: skip
    plots.pareto_panels(points, METRICS["bytes_per_token"].label, METRICS["boundary_f1"].label, palette,
                        out_dir / "pareto-compression-boundary-f1")  # fmt: skip
    caption += off_scale_note(points, run)
    fronts = [f"{language}: {', '.join(plots.pareto_front(group)['tokenizer'])}"
              for language, group in points[~points["off_scale"]].groupby("language", sort=True)]  # fmt: skip
    return Plot("pareto-compression-boundary-f1", caption,
                [f"On the Pareto front (no other tokenizer compresses more and aligns better at once): "
                 f"{'; '.join(fronts)}."])  # fmt: skip


#: the plots of each report section, in order
GROUP_PLOTS: dict[str, list[Draw]] = {
    "oov": [partial(curve_plot, "unk_word_rate"), partial(curve_plot, "oov_token_rate")],
    "compression": [partial(curve_plot, "bytes_per_token")],
    "fertility": [partial(curve_plot, "fertility_isolated"), partial(curve_plot, "fertility_running"),
                  partial(heatmap_plot, "fertility_isolated"), partial(heatmap_plot, "fertility_running")],
    "morphology": [morphology_plot, pareto_plot],
    "distribution": [overlap_plot],
    "downstream": [bpb_scatter_plot],
}  # fmt: skip


#: drawn first when the plots are spread over processes: the figures of the most panels, which take the
#: longest (about twice a curve plot), so that no process is left drawing one of them alone at the end
DRAWN_FIRST = (overlap_plot, morphology_plot)


def train_chars_cells(run: Run) -> tuple[str, pd.DataFrame] | None:
    """On a run with a ``train_chars`` axis: the compression metric shown against it
    (``TRAIN_CHARS_METRICS``) and its cells, per ``train_chars`` value at the report size (the closest
    size a row has); None for a run without the axis."""
    results = run.all_results if run.all_results is not None else run.results
    axis = results[results[TRAIN_CHARS].notna()]
    metric = next((name for name in TRAIN_CHARS_METRICS if name in set(axis["metric"])), None)
    if metric is None:
        return None
    rows = axis[(axis["metric"] == metric) & (axis["reference"] == "")]
    cells = pd.concat([at_report_size(group, run) for _, group in rows.groupby("train_chars")],
                      ignore_index=True).astype({"train_chars": "int64"})  # fmt: skip
    return metric, cells


def train_chars_plot(run: Run, palette: dict[str, plots.Style], out_dir: Path) -> Plot | None:
    """The ``train_chars_cells`` as curves (None for a run without the axis)."""
    found = train_chars_cells(run)
    if found is None:
        return None
    metric, cells = found
    info = METRICS[metric]
    stem = f"{metric}-vs-train-chars"
    cells = mark_off_scale(cells)
    plots.vocab_curves(cells, info, palette, out_dir / stem, x="train_chars", x_label="training characters")
    return Plot(stem, f"{info.label} against training characters, at {run.at}{off_scale_note(cells, run)}", [])


def draw_figures(run: Run, plots_dir: Path, jobs: int, meanwhile: Callable[[], None] = lambda: None
                 ) -> tuple[dict[str, list[Plot | Skipped]], Plot | None]:  # fmt: skip
    """Every plot of every group (in ``group_plots`` order) and the training-data plot, drawn into
    ``plots_dir``; the group plots on ``jobs`` worker processes when there are several, ``meanwhile`` called
    in this process while they draw.  Each plot's files do not depend on where it was drawn."""
    row_types = dict(zip(run.results["tokenizer"], run.results["row_type"], strict=True))
    palette = plots.tokenizer_palette(tokenizer_order(run.results), row_types)
    present = set(run.results["metric"])
    draws = [draw for group in GROUPS for draw in group_plots(group, present)]
    drawn = iter(_draw_all(draws, run, palette, plots_dir, jobs, meanwhile))
    figures = {group: [next(drawn) for _ in group_plots(group, present)] for group in GROUPS}
    return figures, train_chars_plot(run, palette, plots_dir)


def _draw_all(draws: list[Draw], run: Run, palette: dict[str, plots.Style], plots_dir: Path, jobs: int,
              meanwhile: Callable[[], None]) -> list[Plot | Skipped]:  # fmt: skip
    """Every plot of ``draws``, in order; on ``jobs`` worker processes when there are several."""
    if jobs < 2 or len(draws) < 2:
        meanwhile()
        return [draw(run, palette, plots_dir) for draw in draws]
    # the pool hands tasks out in the order they are submitted: the longest first
    first = sorted(range(len(draws)), key=lambda index: getattr(draws[index], "func", draws[index]) not in DRAWN_FIRST)
    with ProcessPoolExecutor(max_workers=min(jobs, len(draws))) as pool:
        futures = {index: pool.submit(draws[index], run, palette, plots_dir) for index in first}
        meanwhile()
        return [futures[index].result() for index in range(len(draws))]
