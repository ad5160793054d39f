"""The report's sections, in the order report.md and report.html show them.

A section is a function ``(Context) -> list[Block]`` (``benchmarks.report.document``): it reads the run,
its tables and figures from the context and returns blocks, never text of a format and never a file.
Adding a section is one module here and one line in ``SECTIONS``.
"""

from __future__ import annotations

from collections.abc import Callable

from benchmarks.report.document import Block
from benchmarks.report.sections.answers import answers_section
from benchmarks.report.sections.at_a_glance import at_a_glance
from benchmarks.report.sections.audit import audit_section
from benchmarks.report.sections.context import Context
from benchmarks.report.sections.downstream import downstream_section
from benchmarks.report.sections.inference import inference_section
from benchmarks.report.sections.metric_groups import metric_groups
from benchmarks.report.sections.multilingual import multilingual_section
from benchmarks.report.sections.paired import paired_section
from benchmarks.report.sections.reading_guide import reading_guide
from benchmarks.report.sections.robustness import robustness_section
from benchmarks.report.sections.run_facts import run_facts
from benchmarks.report.sections.splits import splits_section
from benchmarks.report.sections.title import title_section
from benchmarks.report.sections.training_data import training_data
from benchmarks.report.sections.vocabulary_warning import vocabulary_warning

Section = Callable[[Context], list[Block]]

SECTIONS: list[Section] = [
    title_section,
    at_a_glance,
    answers_section,
    vocabulary_warning,
    run_facts,
    reading_guide,
    metric_groups,
    downstream_section,
    training_data,
    multilingual_section,
    inference_section,
    robustness_section,
    paired_section,
    audit_section,
    splits_section,
]


def document(context: Context) -> list[Block]:
    """Every section's blocks, in ``SECTIONS`` order."""
    return [block for section in SECTIONS for block in section(context)]


__all__ = ["SECTIONS", "Context", "Section", "document"]
