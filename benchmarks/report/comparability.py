"""The sizes in docs/metrics.md's "Comparability with the papers" table that come from a run, generated
from a baseline so the docs cannot drift from the numbers.

``python -m benchmarks.report.comparability results/baseline/paper.json --write docs/metrics.md`` rewrites
the span between ``<!-- morphscore-upstream-gap -->`` and ``<!-- /morphscore-upstream-gap -->``; without
``--write`` it prints the text.  A test checks that the docs hold the text of the committed baseline.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from benchmarks.check import BaselineRow, read_baseline
from benchmarks.errors import BenchmarkError

MARK = "morphscore-upstream-gap"


def signed(value: float) -> str:
    """``+0.024``, ``−0.010`` (a minus sign, as the docs write it), ``0.000``."""
    text = f"{abs(value):.3f}"
    return text if text == "0.000" else ("+" if value > 0 else "−") + text


def morphscore_upstream_gap(rows: Sequence[BaselineRow], vocab_size: int, languages: dict[str, str]) -> str:
    """Per corpus (named by ``languages``, corpus -> language name; in the order of those names), the range of
    ``morphscore_upstream − morphscore`` over the rows of the trained tokenizers at ``vocab_size`` and of the
    pretrained rows, each end naming its tokenizers (ties at three decimals) and the widest end its two values.
    Rows without a score (NaN: no scored word) are left out and named.  A tokenizer is named by its name, so a
    baseline with two option sets of one tokenizer is refused."""
    scores: dict[str, dict[str, dict[str, float]]] = defaultdict(lambda: defaultdict(dict))
    for row in rows:
        if row.metric in ("morphscore", "morphscore_upstream") and row.train_chars is None \
                and row.vocab_size in (None, vocab_size):  # fmt: skip
            pair = scores[row.corpus][row.tokenizer]
            if row.metric in pair:
                raise BenchmarkError(f"{row.corpus}: two {row.metric} rows of {row.tokenizer} at {vocab_size} "
                                     "(two option sets); give a baseline with one row per tokenizer",
                                     code="duplicate_rows", value=row.tokenizer)  # fmt: skip
            pair[row.metric] = row.value
    parts = []
    for corpus in sorted(scores, key=lambda corpus: languages[corpus]):
        gaps = {tokenizer: pair["morphscore_upstream"] - pair["morphscore"]
                for tokenizer, pair in scores[corpus].items() if len(pair) == 2}  # fmt: skip
        unscored = sorted(tokenizer for tokenizer, gap in gaps.items() if math.isnan(gap))
        gaps = {tokenizer: round(gap, 3) for tokenizer, gap in gaps.items() if not math.isnan(gap)}
        if not gaps:
            continue
        low, high = min(gaps.values()), max(gaps.values())
        widest = low if abs(low) >= abs(high) else high
        ends = []
        for end in (low, high):
            named = sorted(tokenizer for tokenizer, gap in gaps.items() if gap == end)
            text = f"{signed(end)} ({', '.join(named)}"
            if end == widest and end != 0:
                pair = scores[corpus][named[0]]
                text += f"; {named[0]} {pair['morphscore']:.3f} → {pair['morphscore_upstream']:.3f}"
            ends.append(text + ")")
        span = ends[0] if low == high else f"{ends[0]} to {ends[1]}"
        note = f", no score: {', '.join(unscored)}" if unscored else ""
        parts.append(f"{languages[corpus]} {span}{note}")
    return "; ".join(parts)


def generated_text(baseline_path: Path) -> str:
    """The gap text of a baseline of a config with MorphScore rows (its report size, its corpora's languages)."""
    import pycountry

    from benchmarks.run.config import load_config
    from corpora.spec import load_spec

    baseline = read_baseline(baseline_path)
    if not baseline.config:
        raise BenchmarkError(f"{baseline_path}: names no config; its report size is needed", code="missing_key",
                             value="config")  # fmt: skip
    config = load_config(baseline.config)
    languages = {}
    for corpus in {row.corpus for row in baseline.rows}:
        code = load_spec(corpus).language_code
        record = pycountry.languages.get(alpha_3=code)
        languages[corpus] = record.name if record is not None else code
    return morphscore_upstream_gap(baseline.rows, config.report_vocab_size, languages)


def replace_span(document: str, text: str) -> str:
    pattern = re.compile(rf"(<!-- {MARK} -->).*?(<!-- /{MARK} -->)", re.DOTALL)
    if not pattern.search(document):
        raise BenchmarkError(f"no <!-- {MARK} --> ... <!-- /{MARK} --> span to replace", code="missing_marker",
                             value=MARK)  # fmt: skip
    return pattern.sub(lambda match: match.group(1) + text + match.group(2), document, count=1)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.report.comparability", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("baseline", type=Path, help="a baseline with MorphScore rows (results/baseline/paper.json)")
    parser.add_argument("--write", type=Path, metavar="DOC", help="rewrite the marked span of DOC")
    args = parser.parse_args(argv)
    try:
        text = generated_text(args.baseline)
        if args.write is None:
            print(text)
        else:
            args.write.write_text(replace_span(args.write.read_text(encoding="utf-8"), text), encoding="utf-8")
    except BenchmarkError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
