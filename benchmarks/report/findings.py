"""Sentences about a run, computed from its numbers (never written by hand).

Every function takes tidy cells (columns ``row``, ``tokenizer``, ``vocab_size``,
``value``, ``ci_low``, ``ci_high``; ``row`` is the label of a language and
evaluation set; optional ``not_ranked``, why a cell must not be ranked, and
``reached``, the vocabulary size reached) and returns one sentence, or None when
the data cannot support it (too few tokenizers or rows, no direction).  Numbers
are printed with the metric's table format, so a sentence quotes exactly what
the table shows.  A sentence that compares two cells says when their confidence
intervals overlap: overlapping intervals mean the data do not clearly separate
them, and we never claim otherwise.

Five rules keep the sentences honest: a cell with a ``not_ranked`` reason (a
degenerate <unk>-heavy row, a boundary baseline, an unreliable reference; marked
‡ or § in the tables) is never compared or quoted, so never praised; a comparison
between tokenizers needs two of them; a sentence naming a widest and a narrowest
case names two different tokenizers (one tokenizer is never both, whatever the
evaluation set); a sentence that leaves values out (a ratio has none against 0)
names them; and a paired difference is quoted with its Holm-adjusted p-value and
whether it is significant at ``SIGNIFICANCE_LEVEL``.

Tie-breaks (for reproducibility): cells sort by value, then tokenizer label,
then row label.
"""

from __future__ import annotations

import math

import pandas as pd

from benchmarks.measure.evaluate import SIGNIFICANCE_LEVEL
from benchmarks.measure.registry import Metric

MISSING = "–"


def format_value(info: Metric, value: float) -> str:
    """A value as tables print it (``MISSING`` for NaN)."""
    return MISSING if value is None or math.isnan(value) else info.fmt.format(value)


def vocab_label(size: int) -> str:
    """8000 -> "8k", 8192 -> "8,192"."""
    return f"{size // 1000}k" if size % 1000 == 0 else f"{size:,}"


def pick(*sentences: str | None) -> list[str]:
    return [sentence for sentence in sentences if sentence]


def cis_overlap(a: pd.Series, b: pd.Series) -> bool | None:
    """Whether two cells' intervals overlap; None when either has no interval."""
    bounds = [a["ci_low"], a["ci_high"], b["ci_low"], b["ci_high"]]
    if any(math.isnan(x) for x in bounds):
        return None
    return bool(a["ci_low"] <= b["ci_high"] and b["ci_low"] <= a["ci_high"])


def overlap_clause(a: pd.Series, b: pd.Series, brief: bool = False) -> str:
    """What a comparison of two cells must add: nothing when their intervals are apart."""
    overlap = cis_overlap(a, b)
    if overlap is None:
        text = "no confidence interval to compare"
    elif overlap:
        text = (
            "confidence intervals overlap"
            if brief
            else "their confidence intervals overlap, so the difference is not clear-cut"
        )
    else:
        return ""
    return f"; {text}" if brief else f" ({text})"


def join_names(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def tokenizer_name(cells: pd.DataFrame, tokenizer: str, at: str | None = None) -> str:
    """The label, marked when it is a production row (no vocabulary size: not drawn at the report size)
    or, given the report size ``at``, when its cells are shown at another size (char at its alphabet's)."""
    sizes = cells.loc[cells["tokenizer"] == tokenizer, "vocab_size"]
    if sizes.isna().all():
        return f"{tokenizer} (production, own vocabulary)"
    shown = sorted({vocab_label(int(size)) for size in sizes.dropna()})
    return f"{tokenizer} (at {'/'.join(shown)})" if at is not None and shown != [at] else tokenizer


def opening(cells: pd.DataFrame, at: str) -> str:
    """How a sentence about ``cells`` starts: "At 4k" when any of them is drawn at the report size;
    production rows alone have no report size, each is at its own vocabulary."""
    if "vocab_size" in cells.columns and cells["vocab_size"].isna().all():
        return "Among the production tokenizers (each at its own vocabulary)"
    return f"At {at}"


def row_unit(cells: pd.DataFrame) -> str:
    plain = "language" in cells.columns and (cells["row"] == cells["language"]).all()
    return "languages" if plain else "rows"


def comparable(cells: pd.DataFrame) -> pd.DataFrame:
    """The cells a finding may compare: finite values without a ``not_ranked`` reason."""
    keep = cells["value"].map(math.isfinite)
    if "not_ranked" in cells.columns:
        keep &= cells["not_ranked"].fillna("") == ""
    return cells[keep]


def ranked(cells: pd.DataFrame, info: Metric) -> pd.DataFrame:
    """Comparable cells, best first (by the metric's direction), ties by tokenizer then row label."""
    return comparable(cells).sort_values(
        ["value", "tokenizer", "row"], ascending=[not info.higher_is_better, True, True], kind="stable"
    )


def best_count(cells: pd.DataFrame, info: Metric, at: str, unit: str | None = None) -> str | None:
    """Which tokenizer is best in most rows, and whether its leads are clear of the runner-up's CI."""
    if info.higher_is_better is None or comparable(cells)["tokenizer"].nunique() < 2:
        return None
    wins: dict[str, list[tuple[str, pd.Series, pd.Series]]] = {}
    compared = ties = 0
    for row, row_cells in cells.groupby("row", sort=True):
        order = ranked(row_cells, info)
        if len(order) < 2:
            continue
        compared += 1
        best, runner_up = order.iloc[0], order.iloc[1]
        if format_value(info, best["value"]) == format_value(info, runner_up["value"]):
            ties += 1
            continue
        wins.setdefault(best["tokenizer"], []).append((str(row), best, runner_up))
    if not wins:
        return None
    most = max(len(rows) for rows in wins.values())
    leaders = sorted(tokenizer for tokenizer, rows in wins.items() if len(rows) == most)
    verb = "has" if len(leaders) == 1 else "each have"
    direction = "highest" if info.higher_is_better else "lowest"
    names = join_names([tokenizer_name(cells, leader, at) for leader in leaders])
    sentence = (f"{opening(cells, at)}, {names} {verb} the {direction} {info.label} in {most} of {compared} "
                f"{unit or row_unit(cells)}")
    if ties:
        sentence += f" ({ties} tied as printed)"
    leads = [lead for tokenizer in leaders for lead in wins[tokenizer]]
    overlaps = [cis_overlap(best, runner_up) for _, best, runner_up in leads]
    if any(overlap is None for overlap in overlaps):
        sentence += "; not every lead has a confidence interval to compare"
    elif any(overlaps):
        details = ", ".join(
            f"{runner_up['tokenizer']} in {row}" for (row, _, runner_up), o in zip(leads, overlaps, strict=True) if o
        )
        sentence += (
            f"; in {sum(overlaps)} of these the leader's confidence interval overlaps the runner-up's "
            f"({details}), so those leads are not clear-cut"
        )
    else:
        sentence += "; every one of these leads is clear of the runner-up's confidence interval"
    return sentence + "."


def printed_faithfully(info: Metric, value: float) -> bool:
    """A positive value whose printed form is within 5% of it, so a ratio quoted next to the printed
    numbers agrees with them (0.00005 prints as 0.0001: a ratio against it would mislead)."""
    return math.isfinite(value) and value > 0 and abs(float(format_value(info, value)) - value) <= 0.05 * value


def language_gap(cells: pd.DataFrame, info: Metric, at: str) -> str | None:
    """The tokenizers whose value differs most and least between languages (ratio of highest to lowest row).

    Rows are compared only within one evaluation set (UD test text and FLORES are different texts), and
    only comparable rows whose value is printed faithfully (``printed_faithfully``); the rows left out for
    that (a value of 0 has no ratio) are named at the end.  The narrowest gap is the smallest of a tokenizer
    not named widest; with a single tokenizer the sentence states its gap without calling it widest."""
    gaps, unprintable = [], []
    keys = ["tokenizer", "eval_set"] if "eval_set" in cells.columns else ["tokenizer"]
    for key, group in comparable(cells).groupby(keys, sort=True):
        faithful = group["value"].map(lambda v: printed_faithfully(info, v))
        if group["row"].nunique() >= 2 and not faithful.all():
            rows = sorted(map(str, group.loc[~faithful, "row"]))
            unprintable.append(f"{group['tokenizer'].iloc[0]} in {join_names(rows)}")
        group = group[faithful]
        if group["row"].nunique() < 2:
            continue
        order = group.sort_values(["value", "row"], kind="stable")
        low, high = order.iloc[0], order.iloc[-1]
        gaps.append((high["value"] / low["value"], tuple(map(str, key)), high, low))
    if not gaps:
        return None
    gaps.sort(key=lambda gap: (-gap[0], gap[1]))
    ratio, (tokenizer, *_), high, low = gaps[0]
    name = tokenizer_name(cells, tokenizer, at)
    quoted = (f"{ratio:.2f}× as high in {high['row']} ({format_value(info, high['value'])}) as in {low['row']} "
              f"({format_value(info, low['value'])}){overlap_clause(high, low)}")  # fmt: skip
    start = opening(cells, at)
    left_out = (f" Left out of these ratios, as values that print as 0 or too coarsely for a ratio: "
                f"{'; '.join(unprintable)}." if unprintable else "")  # fmt: skip
    if len({gap[1][0] for gap in gaps}) == 1:
        return f"{start}, {name}'s {info.label} is {quoted} ({tokenizer} is the only tokenizer compared).{left_out}"
    # an extreme is every tokenizer whose ratio prints as the extreme one: a tie is one extreme, not two
    printed = [f"{gap[0]:.2f}" for gap in gaps]
    if printed[0] == printed[-1]:
        names = join_names(sorted({tokenizer_name(cells, gap[1][0], at) for gap in gaps}))
        return (f"{start}, the gap between languages is {printed[0]}× as printed for every tokenizer compared "
                f"({names}).{left_out}")
    widest_keys = {gap[1][0] for gap, shown in zip(gaps, printed, strict=True) if shown == printed[0]}
    widest = sorted({tokenizer_name(cells, key, at) for key in widest_keys})
    tied = f" (tied as printed with {join_names([n for n in widest if n != name])})" if len(widest) > 1 else ""
    sentence = f"{start}, the gap between languages is widest for {name}{tied}: its {info.label} is {quoted}"
    others = [gap for gap in gaps if gap[1][0] not in widest_keys]  # a tokenizer is never widest and narrowest
    if others:
        ratio, _, high, low = others[-1]
        narrowest = sorted({tokenizer_name(cells, gap[1][0], at) for gap in others
                            if f"{gap[0]:.2f}" == f"{ratio:.2f}"})  # fmt: skip
        sentence += (
            f"; it is narrowest for {join_names(narrowest)} ({ratio:.2f}×, {high['row']} vs {low['row']}"
            f"{overlap_clause(high, low, brief=True)})"
        )
    return sentence + "." + left_out


def vocab_trend(frame: pd.DataFrame, info: Metric) -> str | None:
    """The largest change between a tokenizer's smallest and largest vocabulary, over tokenizers and rows,
    among comparable cells (a cell marked ‡ or § is never quoted).

    Sizes are the sizes reached (column ``reached`` where known), with the requested size when it differs."""
    changes = []
    trained = comparable(frame)
    trained = trained[trained["vocab_size"].notna()]
    for (tokenizer, row), group in trained.groupby(["tokenizer", "row"], sort=True):
        if group["vocab_size"].nunique() < 2:
            continue
        order = group.sort_values("vocab_size", kind="stable")
        first, last = order.iloc[0], order.iloc[-1]
        changes.append((abs(last["value"] - first["value"]), str(tokenizer), str(row), first, last))
    if not changes:
        return None
    changes.sort(key=lambda change: (-change[0], change[1], change[2]))
    _, tokenizer, row, first, last = changes[0]
    a, b = format_value(info, first["value"]), format_value(info, last["value"])
    sizes = f"from {size_reached(first)} to {size_reached(last)}"
    if a == b:
        return f"Growing the vocabulary {sizes} changes no {info.label} value as printed."
    verb = "raises" if last["value"] > first["value"] else "lowers"
    percent = f", {(last['value'] - first['value']) / abs(first['value']):+.0%}" if first["value"] else ""
    return (
        f"Growing the vocabulary {sizes} {verb} {tokenizer}'s {info.label} in {row} from {a} to {b}{percent}, "
        f"the largest absolute change of any tokenizer and language{overlap_clause(first, last)}."
    )


def size_reached(cell: pd.Series) -> str:
    """``8,000``, or ``5,164 (requested 8,000)`` when the tokenizer stopped below the size requested."""
    requested = int(cell["vocab_size"])
    reached = cell.get("reached", math.nan)
    if reached is None or math.isnan(reached) or int(reached) == requested:
        return f"{requested:,}"
    return f"{int(reached):,} (requested {requested:,})"


def extremes(cells: pd.DataFrame, info: Metric, at: str) -> str | None:
    """The lowest and highest comparable cell of a snapshot."""
    finite = comparable(cells).sort_values(["value", "tokenizer", "row"], kind="stable")
    if finite.empty:
        return None
    low, high = finite.iloc[0], finite.iloc[-1]
    start = opening(finite, at)
    if format_value(info, low["value"]) == format_value(info, high["value"]):
        return f"{start}, {info.label} is {format_value(info, low['value'])} in every cell."

    # an extreme shared by several cells as printed names them all
    lows = finite[finite["value"].map(lambda v: format_value(info, v)) == format_value(info, low["value"])]
    highs = finite[finite["value"].map(lambda v: format_value(info, v)) == format_value(info, high["value"])]
    where_low = "; ".join(f"{tokenizer_name(cells, c['tokenizer'], at)}, {c['row']}" for _, c in lows.iterrows())
    where_high = "; ".join(f"{tokenizer_name(cells, c['tokenizer'], at)}, {c['row']}" for _, c in highs.iterrows())
    return (
        f"{start}, {info.label} ranges from {format_value(info, low['value'])} ({where_low}) "
        f"to {format_value(info, high['value'])} ({where_high}){overlap_clause(low, high)}."
    )


#: how a method label marks a row that samples (``+ dropout 0.1``, ``+ sampling α=0.1``)
SAMPLING_MARK = " + "


def inference_method_finding(
    f1: pd.DataFrame, baseline: str, cost: tuple[float, float, float] | None, f1_info: Metric, cost_info: Metric,
    where: str, compression: pd.DataFrame | None = None,
) -> str | None:
    """Which inference method on one vocabulary aligns best with a morpheme reference, and what it costs.

    ``f1``: one cell per method (columns ``method``, ``value``, ``ci_low``, ``ci_high``); ``baseline``:
    the method the others are compared with (the family's own encoding); ``cost``: the best method's
    tokens per 1,000 characters minus the baseline's on the same test documents, with its paired
    bootstrap CI and Holm-adjusted p-value (None when the best is the baseline or the run has no such
    comparison); the sentence says whether that difference is significant after Holm.

    A row that samples is a mean over seeds in the table, while the paired test compares the first
    seed's counts; so when the best method or the baseline samples, the cost quoted is the difference
    of the two ``compression`` cells (indexed by method, the table's tokens per 1,000 characters:
    means over seeds) with the interval from their CIs over items and seeds, lower minus upper bound
    to upper minus lower (conservative: it holds every difference both intervals allow)."""
    order = f1[f1["value"].map(math.isfinite)].sort_values(["value", "method"], ascending=[False, True], kind="stable")
    if len(order) < 2 or baseline not in set(order["method"]):
        return None
    best, base = order.iloc[0], order[order["method"] == baseline].iloc[0]
    if best["method"] == baseline or format_value(f1_info, best["value"]) == format_value(f1_info, base["value"]):
        other = order[order["method"] != baseline].iloc[0]
        shown = format_value(f1_info, other["value"])
        return (f"{where}: {baseline} aligns best or ties as printed ({f1_info.label} "
                f"{format_value(f1_info, base['value'])}; next {other['method']} {shown}"
                f"{overlap_clause(base, other, True)}).")
    sentence = (f"{where}: {best['method']} aligns best ({f1_info.label} {format_value(f1_info, best['value'])} "
                f"[{format_value(f1_info, best['ci_low'])}, {format_value(f1_info, best['ci_high'])}] vs {baseline} "
                f"{format_value(f1_info, base['value'])}{overlap_clause(best, base, True)})")
    samples = SAMPLING_MARK in best["method"] or SAMPLING_MARK in baseline
    if samples and compression is not None and {best["method"], baseline} <= set(compression.index):
        a, b = compression.loc[best["method"]], compression.loc[baseline]
        difference, low, high = a["value"] - b["value"], a["ci_low"] - b["ci_high"], a["ci_high"] - b["ci_low"]
        if all(math.isfinite(x) for x in (difference, low, high)):
            sentence += (f", at {difference:+.1f} {cost_info.label} [{low:+.1f}, {high:+.1f}] on the test text "
                         f"(difference of the means over seeds; interval from both cells' CIs over items and seeds"
                         f"{'; it includes 0' if low <= 0 <= high else ''})")
    elif not samples and cost is not None and math.isfinite(cost[0]):
        difference, low, high, p_holm = cost
        verdict = "significant" if p_holm < SIGNIFICANCE_LEVEL else "not significant"
        sentence += (f", at {difference:+.1f} {cost_info.label} [{low:+.1f}, {high:+.1f}] on the test text "
                     f"(paired; Holm-adjusted p = {p_holm:.3g}, {verdict} at the {SIGNIFICANCE_LEVEL:.0%} level"
                     f"{'; the interval includes 0' if low <= 0 <= high else ''})")
    return sentence + "."
