"""What a section is given: the run, its tables and its drawn figures (sections read nothing else)."""

from __future__ import annotations

from dataclasses import dataclass

from benchmarks.report.figures import Plot, Skipped
from benchmarks.report.load import Run
from benchmarks.report.tables import Table


@dataclass(frozen=True)
class Context:
    run: Run
    tables: list[Table]
    figures: dict[str, list[Plot | Skipped]]  # per metric group, in ``figures.group_plots`` order
    training: Plot | None = None  # the plot against training characters (``figures.train_chars_plot``)
