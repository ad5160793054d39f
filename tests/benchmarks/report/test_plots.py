"""benchmarks.report.plots: heatmaps are drawn without seaborn's trial draw of the figure, with the label
rotation they set themselves."""

from __future__ import annotations

import hashlib
import itertools
import random
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.text import Text

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


# -- styles: one per label, the same in every run ------------------------------------------------------

#: twelve tokenizers with long labels: nine trained, three published
TRAINED = ["char-bpe-greedy-longest", "byte-bpe-merges-frequency", "spm-unigram-nbest-sampling",
           "char-bpe-greedy-shortest", "byte-level-bpe-dropout", "wordpiece-greedy-longest",
           "unigram-viterbi-with-bytes", "bpe-knockout-morphology", "char-bpe-with-pretokenizer"]  # fmt: skip
PUBLISHED = ["cl100k-base-tiktoken", "mistral-v1-sentencepiece", "gemma-3-sentencepiece"]
MANY = TRAINED + PUBLISHED
ROW_TYPES = {label: "production" if label in PUBLISHED else "family" for label in MANY}
#: the labels of the committed quick report (benchmarks/quick.toml): ten trained, two published
QUICK_TRAINED = ["byte-bpe", "char", "char-bpe", "char-bpe-greedy", "spm-bpe", "spm-unigram", "superbpe", "unigram",
                 "word", "wordpiece"]  # fmt: skip
QUICK_PUBLISHED = ["cl100k", "mistral-v1"]


def _preferred(label: str, colours: tuple[str, ...]) -> plots.Style:
    """The style the label asks for, recomputed from the documented rule: SHA-256 → slot → (colour, marker)."""
    slot = int(hashlib.sha256(label.encode("utf-8")).hexdigest()[:16], 16) % (len(colours) * len(plots.MARKERS))
    return plots.Style(colours[slot % len(colours)], plots.MARKERS[slot // len(colours)])


def _random_labels(generator: random.Random, count: int) -> list[str]:
    return sorted({f"{generator.choice(['bpe', 'unigram', 'wp', 'spm'])}-{generator.randrange(10**6)}"
                   for _ in range(count)})  # fmt: skip


def test_a_label_keeps_its_colour_and_marker_across_runs_with_other_tokenizers() -> None:
    first = plots.tokenizer_palette(["char-bpe-greedy-longest", "byte-bpe-merges-frequency", "cl100k-base-tiktoken"],
                                    {"cl100k-base-tiktoken": "production"})  # fmt: skip
    second = plots.tokenizer_palette(["wordpiece-greedy-longest", "char-bpe-greedy-longest",
                                      "spm-unigram-nbest-sampling", "bpe-knockout-morphology"])  # fmt: skip
    assert first["char-bpe-greedy-longest"] == second["char-bpe-greedy-longest"]
    # ... which is its own style, from the label alone: not from its position, nor the order given
    alone = plots.tokenizer_palette(["char-bpe-greedy-longest"])["char-bpe-greedy-longest"]
    assert first["char-bpe-greedy-longest"] == alone == _preferred("char-bpe-greedy-longest", plots.TRAINED_COLOURS)
    assert plots.tokenizer_palette(MANY[::-1], ROW_TYPES) == plots.tokenizer_palette(MANY, ROW_TYPES)
    assert list(plots.tokenizer_palette(MANY, ROW_TYPES)) == MANY  # in the order given (the legends')


def test_a_style_depends_only_on_the_labels_of_its_family_sorted_before_it() -> None:
    generator = random.Random(20240607)
    for _ in range(40):
        labels = _random_labels(generator, generator.randrange(2, 30))
        full = plots.tokenizer_palette(labels)
        cut = generator.randrange(1, len(labels))
        published = {label: "production" for label in _random_labels(generator, 5)}
        # labels sorted after, and published rows, change nothing before them
        fewer = plots.tokenizer_palette(labels[:cut] + list(published), published)
        assert {label: fewer[label] for label in labels[:cut]} == {label: full[label] for label in labels[:cut]}
        for index, label in enumerate(labels):
            earlier = {full[other].colour for other in labels[:index]}
            preferred = _preferred(label, plots.TRAINED_COLOURS)
            if preferred.colour not in earlier:  # nobody before it holds its colour: it keeps its own style
                assert full[label] == preferred


def test_trained_and_published_rows_take_their_own_hues_and_no_two_labels_share_a_style() -> None:
    palette = plots.tokenizer_palette(MANY, ROW_TYPES)
    assert not set(plots.TRAINED_COLOURS) & set(plots.PRODUCTION_COLOURS)
    assert {palette[t].colour for t in TRAINED} <= set(plots.TRAINED_COLOURS)
    assert {palette[t].colour for t in PUBLISHED} <= set(plots.PRODUCTION_COLOURS)
    assert all(style.marker in plots.MARKERS for style in palette.values())
    assert len(set(palette.values())) == len(MANY)
    # as many trained labels as slots fill every trained slot, each once
    slots = len(plots.TRAINED_COLOURS) * len(plots.MARKERS)
    assert len(set(plots.tokenizer_palette([f"family-{index}" for index in range(slots)]).values())) == slots


def test_labels_of_one_family_take_distinct_colours_while_there_are_enough() -> None:
    quick = plots.tokenizer_palette(QUICK_TRAINED + QUICK_PUBLISHED, dict.fromkeys(QUICK_PUBLISHED, "production"))
    assert len({quick[label].colour for label in QUICK_TRAINED}) == len(QUICK_TRAINED) == len(plots.TRAINED_COLOURS)
    assert len({quick[label].colour for label in QUICK_PUBLISHED}) == len(QUICK_PUBLISHED)
    generator = random.Random(7)
    for colours, row_type in ((plots.TRAINED_COLOURS, "family"), (plots.PRODUCTION_COLOURS, "production")):
        for count in list(range(1, 3 * len(colours))) * 8:
            labels = _random_labels(generator, count)
            palette = plots.tokenizer_palette(labels, dict.fromkeys(labels, row_type))
            uses = Counter(style.colour for style in palette.values())
            assert set(uses) <= set(colours)
            if len(labels) <= len(colours):
                assert len(uses) == len(labels), (labels, palette)  # every label its own colour
            else:  # every colour serves floor(n / C) or ceil(n / C) labels, and no two share colour and marker
                assert len(uses) == len(colours) and max(uses.values()) - min(uses.values()) <= 1, uses
                assert len(set(palette.values())) == len(labels)


def test_a_label_whose_colour_is_taken_takes_the_next_free_colour_with_its_own_marker() -> None:
    # both prefer one slot; the label sorted first keeps it, the other moves to the next colour, same marker
    a, b = "spm-unigram-nbest-sampling", "unigram-viterbi-with-bytes"
    colours = plots.TRAINED_COLOURS
    alone = plots.tokenizer_palette([a])[a]
    assert plots.tokenizer_palette([b])[b] == alone == _preferred(b, colours)
    both = plots.tokenizer_palette([b, a])
    assert both[a] == alone
    assert both[b] == plots.Style(colours[(colours.index(alone.colour) + 1) % len(colours)], alone.marker)
    # these two prefer the last colour (other markers); "char-bpe-greedy-longest" and "bpe-knockout-morphology"
    # sort before them and hold the first two colours, so the later one wraps round to the third, keeping its marker
    labels = ["byte-level-bpe-dropout", "char-bpe-greedy-shortest", "char-bpe-greedy-longest",
              "bpe-knockout-morphology"]  # fmt: skip
    preferred = {label: _preferred(label, colours) for label in labels}
    assert preferred[labels[0]].colour == preferred[labels[1]].colour == colours[-1]
    assert [preferred[label].colour for label in labels[2:]] == [colours[0], colours[1]]
    palette = plots.tokenizer_palette(labels)
    assert all(palette[label] == preferred[label] for label in labels if label != labels[1])
    assert palette[labels[1]] == plots.Style(colours[2], preferred[labels[1]].marker)


# sRGB (IEC 61966-2-1) to CIE XYZ under D65, and Machado, Oliveira and Fernandes (2009)'s simulation matrices of
# full protanopia, deuteranopia and tritanopia (severity 1.0), applied to linear RGB
SRGB_TO_XYZ = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]])
DICHROMACIES = {
    "protanopia": [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]],
    "deuteranopia": [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]],
    "tritanopia": [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.303900]],
}  # fmt: skip


def _cielab(colour: str, vision: str | None = None) -> np.ndarray:
    rgb = np.array([int(colour[index : index + 2], 16) / 255 for index in (1, 3, 5)])
    linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    if vision is not None:
        linear = np.clip(np.array(DICHROMACIES[vision]) @ linear, 0, 1)
    ratio = SRGB_TO_XYZ @ linear / (SRGB_TO_XYZ @ np.ones(3))
    f = np.where(ratio > (6 / 29) ** 3, np.cbrt(ratio), ratio / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def test_trained_colours_stay_apart_from_each_other_from_published_ones_and_from_white() -> None:
    # CIE76 differences, the bounds the module docstring states (16 normal, 10.7 simulated, 34 from white)
    everything = plots.TRAINED_COLOURS + plots.PRODUCTION_COLOURS
    pairs = [(a, b) for a, b in itertools.combinations(everything, 2) if a in plots.TRAINED_COLOURS]
    for vision, bound in ((None, 16.0), *((name, 10.7) for name in DICHROMACIES)):
        closest = min(pairs, key=lambda pair: np.linalg.norm(_cielab(pair[0], vision) - _cielab(pair[1], vision)))
        assert np.linalg.norm(_cielab(closest[0], vision) - _cielab(closest[1], vision)) >= bound, (vision, closest)
    assert min(np.linalg.norm(_cielab(colour) - _cielab("#FFFFFF")) for colour in everything) >= 34
    # a colour Tol's light scheme adds, mint, is too close to muted teal: the check can fail
    assert np.linalg.norm(_cielab("#44BB99") - _cielab("#44AA99")) < 16.0


# -- every plot kind keeps its legend and labels inside the figure, with twelve long labels --------------


def _inside(figure, artist) -> bool:
    box = artist.get_window_extent(figure.canvas.get_renderer())
    edge = figure.bbox
    return edge.x0 - 0.5 <= box.x0 and box.x1 <= edge.x1 + 0.5 and edge.y0 - 0.5 <= box.y0 and box.y1 <= edge.y1 + 0.5


def assert_everything_inside(figure) -> None:
    """The legend, and everything drawn (tick labels, titles, values on the border), inside the figure."""
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    assert figure.legends or figure.axes[-1].get_label() == "<colorbar>"
    for legend in figure.legends:
        assert _inside(figure, legend), legend.get_window_extent(renderer)
    drawn = figure.get_tightbbox(renderer)  # inches, every artist drawn (ticks outside the view are not)
    width, height = figure.get_size_inches()
    assert drawn.x0 >= -0.01 and drawn.y0 >= -0.01 and drawn.x1 <= width + 0.01 and drawn.y1 <= height + 0.01, drawn


def _curve_cells() -> pd.DataFrame:
    rows = []
    for row_index, row in enumerate(["eng_Latn", "kor_Hang", "rus_Cyrl", "tur_Latn"]):
        for index, tokenizer in enumerate(MANY):
            published = tokenizer in PUBLISHED
            for size in [None] if published else [2000, 4000, 8000]:
                value = 1.5 + 0.05 * index + 0.1 * row_index - (0 if size is None else size / 20000)
                if tokenizer == "char-bpe-greedy-shortest":  # a degenerate row far above the rest
                    value = 7.0 + row_index
                rows.append({"row": row, "tokenizer": tokenizer, "vocab_size": size, "reached": size, "value": value,
                             "ci_low": value - 0.03, "ci_high": value + 0.03,
                             "off_scale": tokenizer == "char-bpe-greedy-shortest", "not_ranked": "",
                             "reached_mark": ""})  # fmt: skip
    return pd.DataFrame(rows).astype({"vocab_size": "Float64", "reached": "Float64"})


def test_curves_keep_their_legend_inside_and_degenerate_rows_off_the_axes(tmp_path: Path) -> None:
    cells = _curve_cells()
    palette = plots.tokenizer_palette(MANY, ROW_TYPES)
    figure = plots.vocab_curves(cells, METRICS["fertility_running"], palette, tmp_path / "curves")
    assert_everything_inside(figure)
    top = figure.axes[0].get_ylim()[1]
    normal = cells[~cells["off_scale"]]
    assert normal["ci_high"].max() < top < 7.0  # the degenerate row (7 and up) sets no limit ...
    arrows = [text.get_text() for text in figure.findobj(Text) if text.get_text().startswith("↑")]
    assert "↑7.00" in arrows and "↑10.00" in arrows  # ... it is drawn on the border with its value
    # every trained label is drawn with its own marker (the legend's handles carry them)
    legend = figure.legends[0]
    markers = {text.get_text(): handle.get_marker()
               for handle, text in zip(legend.legend_handles, legend.get_texts(), strict=True)}  # fmt: skip
    assert all(markers[t] == palette[t].marker for t in TRAINED)


def test_parity_bars_and_premium_curves_keep_their_legend_inside(tmp_path: Path) -> None:
    cells = _curve_cells()
    cells = cells[(cells["vocab_size"] == 4000) | cells["vocab_size"].isna()]
    palette = plots.tokenizer_palette(MANY, ROW_TYPES)
    info = METRICS["parity_vs_eng"]
    bars = plots.parity_bars(cells, info, palette, tmp_path / "bars")
    assert_everything_inside(bars)
    assert all(ax.get_ylim()[1] < 7.0 for ax in bars.axes)  # the degenerate row's bars are cut, with their value
    assert any(text.get_text() == "7.000→" for text in bars.findobj(Text))  # as the tables print it (upright)
    many = pd.concat([cells.assign(row=cells["row"] + f" ({n})") for n in range(5)])  # 20 languages
    curves = plots.premium_curves(many[many["vocab_size"].isna()], info, palette, tmp_path / "premium")
    assert_everything_inside(curves)


def test_heatmaps_keep_their_labels_inside_and_degenerate_rows_off_the_colour_range(tmp_path: Path) -> None:
    cells = _curve_cells()
    cells = cells[(cells["vocab_size"] == 4000) | cells["vocab_size"].isna()]
    figure = plots.heatmap(cells, METRICS["fertility_running"], MANY, tmp_path / "heatmap")
    assert_everything_inside(figure)
    norm = figure.axes[0].collections[0].norm
    assert norm.vmax == cells.loc[~cells["off_scale"], "value"].max()  # the degenerate row's 7 is beyond the range
    assert figure.axes[1].get_label() == "<colorbar>" or figure.axes[1].collections  # the colour bar, pointed above
    overlap = pd.DataFrame([("eng_Latn (flores)", a, b, 0.3) for i, a in enumerate(MANY) for b in MANY[i + 1 :]],
                           columns=["panel", "tokenizer_a", "tokenizer_b", "jaccard"])  # fmt: skip
    assert_everything_inside(plots.overlap_heatmaps(overlap, MANY, tmp_path / "overlap"))


def _scatter_points() -> pd.DataFrame:
    rows = []
    for language_index, language in enumerate(["eng_Latn", "kor_Hang", "tur_Latn"]):
        for index, tokenizer in enumerate(MANY):
            x, y = 3.0 + 0.1 * index, 0.3 + 0.02 * index + 0.05 * language_index
            off = tokenizer == "char-bpe-greedy-shortest"
            if off:  # a baseline: far left of the rest
                x = 1.0
            rows.append({"language": language, "tokenizer": tokenizer, "x": x, "x_low": x - 0.05, "x_high": x + 0.05,
                         "y": y, "y_low": y - 0.01, "y_high": y + 0.02, "off_scale": off})  # fmt: skip
    return pd.DataFrame(rows)


def test_scatter_plots_carry_both_cis_and_keep_their_legend_inside(tmp_path: Path) -> None:
    from matplotlib.container import ErrorbarContainer

    points = _scatter_points()
    palette = plots.tokenizer_palette(MANY, ROW_TYPES)
    figure = plots.pareto_panels(points, "bytes / token", "boundary F1", palette, tmp_path / "pareto")
    assert_everything_inside(figure)
    ax = figure.axes[0]
    bars = [container for container in ax.containers if isinstance(container, ErrorbarContainer)]
    assert len(bars) == len(MANY) - 1  # every point but the baseline beyond the axis carries its CIs ...
    assert all(container.has_xerr and container.has_yerr for container in bars)  # ... in both directions
    assert ax.get_xlim()[0] > 2.0  # the baseline at x = 1 sets no limit: it sits on the border
    assert any(text.get_text() == "←1" for text in ax.texts)
    many = pd.concat([points.assign(metric=metric, size="8k", size_order=8000.0)
                      for metric in ("bytes_per_token", "fertility_running")])  # fmt: skip
    scatter = plots.metric_scatter(many, {"bytes_per_token": "bytes / token", "fertility_running": "fertility"},
                                   palette, tmp_path / "scatter")  # fmt: skip
    assert_everything_inside(scatter)


def test_precision_recall_panels_keep_their_legend_inside(tmp_path: Path) -> None:
    rows = [{"panel": f"{language} · gold: a reference with a long name", "tokenizer": tokenizer, "metric": metric,
             "value": 0.2 + 0.05 * index, "not_ranked": "baseline" if tokenizer == "char-bpe-greedy-shortest" else ""}
            for language in ("eng_Latn", "tur_Latn") for index, tokenizer in enumerate(MANY)
            for metric in ("boundary_precision", "boundary_recall", "boundary_f1")]  # fmt: skip
    figure = plots.precision_recall(pd.DataFrame(rows), plots.tokenizer_palette(MANY, ROW_TYPES), tmp_path / "pr")
    assert_everything_inside(figure)


def test_degenerate_rows_and_baselines_are_off_scale_and_the_caption_names_them() -> None:
    from types import SimpleNamespace

    from benchmarks.report.figures import mark_off_scale, off_scale_note

    cells = pd.DataFrame({"tokenizer": ["byte-bpe", "word", "word", "char", "spm-bpe", "byte-bpe"],
                          "kind": ["byte-bpe", "word", "word", "char", "spm-bpe", "byte-bpe"],
                          "not_ranked": ["", "unk", "", "", "", "unk"]})  # fmt: skip
    # ‡ and § cells, and every cell of a boundary baseline (word, char) whatever the metric
    assert mark_off_scale(cells)["off_scale"].tolist() == [False, True, True, True, False, True]
    run = SimpleNamespace(unk_threshold=0.1)
    note = off_scale_note(mark_off_scale(cells.iloc[[0, 3]]), run)
    assert note == ("; char (a baseline that splits at every character) does not set the axes (beyond them: on the "
                    "border, with an arrow and the value)")  # fmt: skip
    note = off_scale_note(mark_off_scale(cells), run, colour=True)
    assert "word (a baseline that never splits inside a word; ‡ where more than 10%" in note and "colour range" in note
    assert off_scale_note(mark_off_scale(cells.iloc[[3]]), run) == ""  # alone, char sets the axes itself
