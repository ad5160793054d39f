"""The report's title and the config's description."""

from __future__ import annotations

from benchmarks.report.document import Block, Heading, Paragraph, Verbatim, text
from benchmarks.report.sections.context import Context


def title_section(context: Context) -> list[Block]:
    run = context.run
    config = run.manifest["config"]
    title = config.get("name") or run.manifest.get("run") or run.run_dir.name
    blocks: list[Block] = [Heading(1, Verbatim(f"tokbench report: {title}"))]
    return blocks + ([Paragraph(text(str(config["description"]), escape=False))] if config.get("description") else [])
