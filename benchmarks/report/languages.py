"""The tables of a run across many languages: the premium leaderboard (languages × shared tokenizers), the
median premium per script, and per tokenizer the Gini coefficient of its premiums across languages
(``benchmarks.measure.fairness``)."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from benchmarks.measure.metrics import METRICS
from benchmarks.report.cells import at_report_size, tokenizer_order
from benchmarks.report.load import Run
from benchmarks.report.tables import UNK_MARK, Table
from benchmarks.run.parallel import ENGLISH

#: the premiums against English, in registry order (the fairness table scores each)
PREMIUMS = ("parity_vs_eng", "parity_joined_vs_eng", "parity_mean_ratio_vs_eng")
#: the leaderboard, the table by script and the fairness scores need this many languages paired with English
MIN_LANGUAGES = 3
#: the premium the leaderboard and the table by script show
LEADERBOARD_PREMIUM = "parity_vs_eng"


def language_label(code: str) -> str:
    """``Czech (ces_Latn)``: the ISO 639-3 name of a FLORES-style code, then the code (searchable by both)."""
    import pycountry

    record = pycountry.languages.get(alpha_3=code.split("_")[0])
    return f"{record.name} ({code})" if record is not None else code


def _cells(tokenizer: list[str], column: list[str], metric: str, value: Any, ci_low: Any, ci_high: Any, n: Any,
           language: Any = "", not_ranked: Any = "", fmt: str | None = None) -> pd.DataFrame:  # fmt: skip
    """Cells of a table that is not one metric × languages (``row``/``column`` chosen by the caller)."""
    frame = pd.DataFrame({"tokenizer": tokenizer, "column": column, "language": language, "corpus": "",
                          "eval_set": "eval", "reference": "", "metric": metric, "row_type": "", "kind": "",
                          "vocab_size": pd.NA, "reached": math.nan, "reached_mark": "", "value": value,
                          "ci_low": ci_low, "ci_high": ci_high, "n": n, "unk_share": math.nan,
                          "not_ranked": not_ranked, "best": False})  # fmt: skip
    return frame.assign(fmt=fmt) if fmt is not None else frame


def _lowest_per(cells: pd.DataFrame, key: str) -> pd.Series:
    """True for the lowest ranked value of each ``key`` group holding two ranked values or more (as printed)."""
    best = pd.Series(False, index=cells.index)
    for _, group in cells[(cells["not_ranked"] == "") & cells["value"].notna()].groupby(key):
        if len(group) >= 2:
            best[group.index[group["value"] == group["value"].min()]] = True
    return best


def language_tables(run: Run) -> list[Table]:
    """On a run with premiums of shared (published) tokenizers for ``MIN_LANGUAGES`` languages or more: the
    leaderboard (languages × tokenizers), the median premium per script, and per tokenizer the Gini
    coefficient of its premiums across languages (``benchmarks.measure.fairness``, bootstrap over languages)."""
    from benchmarks.measure.fairness import gini, gini_interval

    rows = run.results[run.results["metric"].isin(PREMIUMS) & (run.results["reference"] == "")
                       & run.shared(run.results) & (run.results["language"] != ENGLISH)]  # fmt: skip
    if rows.empty or rows["language"].nunique() < MIN_LANGUAGES:
        return []
    cells = at_report_size(rows, run)
    tokenizers = tokenizer_order(cells)
    tables = []
    board = cells[cells["metric"] == LEADERBOARD_PREMIUM]
    if not board.empty:
        labels = {code: language_label(code) for code in board["language"].unique()}
        rows_of = [labels[code] for code in board["language"]]
        frame = _cells(rows_of, list(board["tokenizer"]), LEADERBOARD_PREMIUM, board["value"].to_numpy(),
                       board["ci_low"].to_numpy(), board["ci_high"].to_numpy(), board["n"].to_numpy(),
                       list(board["language"]), list(board["not_ranked"]))  # fmt: skip
        frame = frame.assign(best=_lowest_per(frame, "tokenizer"))
        unk = frame[frame["not_ranked"] == "unk"]
        notes = [f"{UNK_MARK} not ranked: more than {run.unk_threshold:.0%} of the tokenizer's tokens are <unk> in "
                 "that language: " + "; ".join(f"{row} ({', '.join(group['column'])})" for row, group
                                                in unk.groupby("tokenizer", sort=True)) + "."] if not unk.empty else []
        tables.append(Table(
            slug="premium-leaderboard", heading="Premium leaderboard: every language × every shared tokenizer",
            caption=(f"{METRICS[LEADERBOARD_PREMIUM].label} (`{LEADERBOARD_PREMIUM}`) of each shared published "
                     f"tokenizer (columns) in each language (rows, by code), with its {run.ci_name}; lowest per "
                     "language in bold. Sort by a column, or find a language by name or code (report.html)."),
            group="parity", column_header="tokenizer", columns=tokenizers, column_labels=tokenizers,
            tokenizers=[labels[code] for code in sorted(labels)], cells=frame,
            notes=notes, row_header="language"))  # fmt: skip
        scripts = board.assign(script=board["language"].str.split("_").str[1])
        medians = scripts.groupby(["script", "tokenizer"], sort=True).agg(value=("value", "median"),
                                                                        n=("language", "nunique")).reset_index()
        counts = scripts.groupby("script")["language"].nunique()
        script_rows = [f"{script} ({counts[script]} language{'s' if counts[script] > 1 else ''})"
                       for script in medians["script"]]  # fmt: skip
        frame = _cells(script_rows, list(medians["tokenizer"]), LEADERBOARD_PREMIUM, medians["value"].to_numpy(),
                       math.nan, math.nan, medians["n"].to_numpy())  # fmt: skip
        frame = frame.assign(best=_lowest_per(frame, "tokenizer"))
        tables.append(Table(
            slug="premium-by-script", heading="Premium by script",
            caption=(f"Median {METRICS[LEADERBOARD_PREMIUM].label} (`{LEADERBOARD_PREMIUM}`) over the languages of "
                     "each script (ISO 15924, the code's second part), per shared tokenizer; lowest per script in "
                     "bold."),
            group="parity", column_header="tokenizer", columns=tokenizers, column_labels=tokenizers,
            tokenizers=list(dict.fromkeys(script_rows)), cells=frame, row_header="script",
            notes=["Every language counts once, whatever its script's share of speakers or of the set; a median "
                   "ranks scripts, it does not average them."]))  # fmt: skip
    scored = []
    settings = (int(run.manifest["config"].get("bootstrap_resamples", 1000)), run.ci_level,
                int(run.manifest["config"].get("seed", 0)))  # fmt: skip
    for metric in (metric for metric in PREMIUMS if metric in set(cells["metric"])):
        for tokenizer in tokenizers:
            premiums = cells[(cells["metric"] == metric) & (cells["tokenizer"] == tokenizer)]["value"].dropna()
            low, high = gini_interval(premiums.to_list(), *settings)
            scored.append((tokenizer, metric, gini(premiums.to_list()), low, high, len(premiums)))
    columns = list(dict.fromkeys(metric for _, metric, *_ in scored))
    frame = _cells([t for t, *_ in scored], [m for _, m, *_ in scored], "gini", [g for _, _, g, *_ in scored],
                   [x[3] for x in scored], [x[4] for x in scored], [x[5] for x in scored], fmt="{:.3f}")
    frame = frame.assign(best=_lowest_per(frame, "column"))
    languages = cells["language"].nunique()
    tables.append(Table(
        slug="fairness-gini", heading="Fairness across languages: Gini coefficient of the premiums",
        caption=(f"The Gini coefficient of each shared tokenizer's premiums across the {languages} languages "
                 "paired with English (0: every language as long as the others; higher: more unequal), for each "
                 f"premium definition (columns: `{'`, `'.join(columns)}`), with a {run.ci_name} from a bootstrap "
                 "over languages; lowest per column in bold. Definition: docs/metrics.md, fairness across "
                 "languages."),
        group="parity", column_header="metric", columns=columns,
        column_labels=[f"Gini: {METRICS[c].label.removeprefix('premium vs English ')} ↓" for c in columns],
        tokenizers=tokenizers, cells=frame,
        notes=["TokEval scores fairness across languages with a Gini coefficient; here it is taken over the premiums "
               "against English, English itself left out (its premium is 1 by definition).",
               "The interval resamples languages, so it says how much the score depends on which languages the "
               "set holds; a premium's own interval (over sentences) is far narrower."]))  # fmt: skip
    return tables
