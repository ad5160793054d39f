"""benchmarks.report.plots: heatmaps are drawn without seaborn's trial draw of the figure, with the label
rotation they set themselves."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import seaborn as sns

from benchmarks.measure.metrics import METRICS
from benchmarks.report import plots

TOKENIZERS = ["byte-bpe", "char-bpe", "a-tokenizer-with-a-long-label"]


def _svg_rotations(path: Path) -> set[str]:
    return set(re.findall(r"rotate\((-?[0-9.]+)\)", path.read_text(encoding="utf-8")))


def test_heatmaps_skip_seaborns_trial_draw_and_keep_their_label_rotation(tmp_path: Path, monkeypatch) -> None:
    trial_draws = []
    original = sns.matrix._draw_figure

    def counted(figure):
        trial_draws.append(figure)
        original(figure)

    monkeypatch.setattr(sns.matrix, "_draw_figure", counted)
    overlap = pd.DataFrame(
        [(panel, a, b, jaccard) for panel in ("eng_Latn", "tur_Latn")
         for a, b, jaccard in (("byte-bpe", "char-bpe", 0.6), ("byte-bpe", TOKENIZERS[2], 0.05),
                               ("char-bpe", TOKENIZERS[2], 0.1))],
        columns=["panel", "tokenizer_a", "tokenizer_b", "jaccard"],
    )  # fmt: skip
    plots.overlap_heatmaps(overlap, TOKENIZERS, tmp_path / "overlap")
    cells = pd.DataFrame({"row": ["eng_Latn", "tur_Latn"] * 3, "tokenizer": [t for t in TOKENIZERS for _ in "ab"],
                          "value": [1.5, 2.0, 1.6, 2.1, 1.2, 3.0], "not_ranked": "", "reached_mark": ""})  # fmt: skip
    plots.heatmap(cells, METRICS["fertility_running"], TOKENIZERS, tmp_path / "fertility")
    assert trial_draws == []  # seaborn's trial draw skipped in both figures ...
    assert sns.matrix._draw_figure is counted  # ... and given back after them
    sns.heatmap(pd.DataFrame([[1.0]]))  # (seaborn's own heatmap still draws its trial)
    assert len(trial_draws) == 1
    # x labels at the heatmap's own rotation (matplotlib writes a counter-clockwise angle as -angle)
    assert "-45" in _svg_rotations(tmp_path / "overlap.svg")
    assert "-30" in _svg_rotations(tmp_path / "fertility.svg")


def test_the_pareto_front_keeps_the_points_no_other_beats_on_both_axes(tmp_path) -> None:
    from benchmarks.report.plots import pareto_front, pareto_panels, tokenizer_palette

    points = pd.DataFrame({"language": "x", "tokenizer": list("abcde"), "x": [1.0, 2.0, 3.0, 2.5, 3.0],
                           "y": [0.9, 0.5, 0.4, 0.3, 0.4], "x_low": float("nan"), "x_high": float("nan"),
                           "y_low": float("nan"), "y_high": float("nan")})  # fmt: skip
    # d is beaten by b (more compression would not save it: c too); c and e tie, both on the front
    assert list(pareto_front(points)["tokenizer"]) == ["a", "b", "c", "e"]
    pareto_panels(points, "bytes / token", "boundary F1", tokenizer_palette(list("abcde")), tmp_path / "p")
    assert all((tmp_path / f"p.{kind}").stat().st_size > 1000 for kind in ("png", "pdf", "svg"))
