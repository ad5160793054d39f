"""FLORES-200 in a data root: every language of ``flores/`` as corpora, the reading of one ``flores/<lang>.txt``
into its dev and devtest splits, Petrov et al.'s joined text, and the reference language of parity.

``flores-200:all`` stands for one ``flores-200:<code>`` (``corpora.spec.flores_spec``: the eval set
``flores/<code>.txt``, no spec file) per file the data root holds.  No language list is kept here:
``flores-200:all`` is whatever the data root's ``flores/`` folder holds, so a data root fetched with
``tokbench data fetch --languages ...`` (up to the 204 of Petrov et al.'s repository) decides the languages of
a run.  Such a corpus has no training text: it is evaluated by published tokenizers.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from corpora.errors import CorpusError
from corpora.spec import FLORES_CODE, FLORES_PREFIX

ALL = FLORES_PREFIX + "all"
#: the language every other one is compared with by parity (premiums against English, as Petrov et al. 2023 and
#: TokSuite 2025 compute them)
REFERENCE_LANGUAGE = "eng_Latn"
#: a data root's flores/<lang>.txt: FLORES-200 dev, then devtest, one sentence a line
DEV_LINES, DEVTEST_LINES = 997, 1012
FloresSplit = Literal["dev", "devtest"]
SPLITS: tuple[FloresSplit, ...] = ("dev", "devtest")


def flores_languages(data_root: Path | None) -> list[str]:
    """The FLORES-200 codes of the data root's ``flores/*.txt``, sorted; a CorpusError without any."""
    if data_root is None:
        raise CorpusError(f"{ALL} needs a data root holding flores/<code>.txt files: pass --data-dir DIR, set "
                          "TOKBENCH_DATA, or run `tokbench data fetch --languages all`", code="needs_data_root",
                          value=ALL)  # fmt: skip
    codes = sorted(path.stem for path in (data_root / "flores").glob("*.txt") if FLORES_CODE.match(path.stem))
    if not codes:
        raise CorpusError(f"{data_root / 'flores'}: no FLORES-200 file (<code>.txt) for {ALL}", code="no_matching_file",
                          value=data_root / "flores")  # fmt: skip
    return codes


def expand_entries(entries: tuple[str, ...], data_root: Path | None) -> tuple[str, ...]:
    """``entries`` with ``flores-200:all`` replaced by one ``flores-200:<code>`` per language of the data root
    (an entry already listed is kept once, where it first appears)."""
    if ALL not in entries:
        return entries
    expanded: list[str] = []
    for entry in entries:
        expanded += [FLORES_PREFIX + code for code in flores_languages(data_root)] if entry == ALL else [entry]
    return tuple(dict.fromkeys(expanded))


def read_flores(path: Path) -> dict[FloresSplit, list[str]]:
    """The dev and devtest lines of a data root's ``flores/<lang>.txt`` (dev then devtest, 2,009 lines), as
    written (split on "\\n" only); a CorpusError naming the file when it holds another number of lines."""
    lines = path.read_text(encoding="utf-8").split("\n")
    if lines[-1] == "":  # the file's own trailing newline
        lines.pop()
    if len(lines) != DEV_LINES + DEVTEST_LINES:
        raise CorpusError(
            f"{path}: {len(lines):,} lines, expected {DEV_LINES + DEVTEST_LINES:,} "
            f"(FLORES-200 dev, {DEV_LINES} lines, then devtest, {DEVTEST_LINES} lines)",
            code="bad_data_file",
            value=len(lines),
        )
    return {"dev": lines[:DEV_LINES], "devtest": lines[DEV_LINES:]}


def petrov_join(files: Sequence[Sequence[str]]) -> str:
    """Petrov et al.'s one string from the lines of several files (FLORES dev, then devtest):
    ``" ".join(dev.split("\\n") + devtest.split("\\n"))``, where each file's trailing newline adds an
    empty string, so every file's lines are followed by one empty string."""
    return " ".join(line for lines in files for line in [*lines, ""])
