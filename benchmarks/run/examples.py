"""The example sentences a run keeps for the report's "How the tokenizers split" section.

The runner chooses them once (``choose_examples``) and writes ``RUN_DIR/examples.json``; the report
encodes them with every tokenizer of the run (``run_tokenizers``: trained ones from
``RUN_DIR/tokenizers/``, pretrained ones re-loaded from the manifest), so the section can be
re-rendered from the run directory alone.

Which sentences, deterministically:

* when the run pairs parallel evaluation sets (``parallel.ParallelPlan``): the ``EXAMPLE_COUNT``
  sentence keys held by every paired corpus and its English partner whose longest translation is
  shortest (ties: the first corpus's reading order), the same sentences in every language;
* otherwise, per corpus, its first ``EXAMPLE_COUNT`` test documents, each cut to at most
  ``EXAMPLE_CHARS`` characters at a space (a document may be a paragraph; ``cut`` says so).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.errors import BenchmarkError
from benchmarks.files import atomic_write_text
from benchmarks.run.parallel import PARALLEL_ROLE, ParallelPlan
from corpora import Corpus

EXAMPLES_FILE = "examples.json"
EXAMPLE_COUNT = 3
EXAMPLE_CHARS = 160
TEST_ROLE = "test"


@dataclass(frozen=True)
class Example:
    corpus: str
    language: str
    id: str  # the document id
    key: str | None  # its parallel key (None for a test document)
    text: str
    cut: bool = False  # the text is the beginning of a longer document


def _excerpt(text: str) -> str:
    """``text``, or its first ``EXAMPLE_CHARS`` characters cut back to the last space."""
    if len(text) <= EXAMPLE_CHARS:
        return text
    cut = text[:EXAMPLE_CHARS]
    return cut[: cut.rfind(" ")] if " " in cut else cut


def choose_examples(corpora: Mapping[str, Corpus], parallel: ParallelPlan) -> dict[str, Any]:
    """The examples of a run as ``examples.json`` holds them (see the module docstring)."""
    pairs = list(parallel.pairs.values())
    members = list(dict.fromkeys(cid for pair in pairs for cid in (pair.corpus, pair.partner)))
    texts = {cid: {d.key: d for d in corpora[cid].documents(PARALLEL_ROLE) if d.key is not None} for cid in members}
    common = [key for key in pairs[0].keys if all(key in texts[cid] for cid in members)] if pairs else []
    if common:
        order = {key: position for position, key in enumerate(common)}
        longest = {key: max(len(texts[cid][key].text) for cid in members) for key in common}
        keys = sorted(common, key=lambda key: (longest[key], order[key]))[:EXAMPLE_COUNT]
        chosen = {cid: [texts[cid][key] for key in keys] for cid in members}
        source = {"role": PARALLEL_ROLE, "set": pairs[0].set, "keys": keys}
    else:
        chosen = {cid: corpus.documents(TEST_ROLE)[:EXAMPLE_COUNT] for cid, corpus in corpora.items()}
        source = {"role": TEST_ROLE}
    examples = []
    for cid in (cid for cid in corpora if cid in chosen):
        for d in chosen[cid]:
            text = d.text if d.key is not None else _excerpt(d.text)
            examples.append({"corpus": cid, "language": corpora[cid].spec.language, "id": d.id, "key": d.key,
                             "text": text, "cut": text != d.text})  # fmt: skip
    return {**source, "examples": examples}


def write_examples(run_dir: Path, corpora: Mapping[str, Corpus], parallel: ParallelPlan) -> None:
    document = choose_examples(corpora, parallel)
    atomic_write_text(run_dir / EXAMPLES_FILE, json.dumps(document, indent=1, ensure_ascii=False) + "\n")


def read_examples(run_dir: Path) -> tuple[dict[str, Any], list[Example]] | None:
    """The run's examples file (None for a run without one), and its examples."""
    path = run_dir / EXAMPLES_FILE
    if not path.is_file():
        return None
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        return document, [Example(**example) for example in document["examples"]]
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError) as exc:
        raise BenchmarkError(f"{path}: not an examples file tokbench wrote ({exc})") from None
