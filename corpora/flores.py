"""Every FLORES-200 language of a data root as corpora: ``flores-200:all`` stands for one ``flores-200:<code>``
(``corpora.spec.flores_spec``: the eval set ``flores/<code>.txt``, no spec file) per file the data root holds.

No language list is kept here: ``flores-200:all`` is whatever the data root's ``flores/`` folder holds, so a
data root fetched with ``tokbench data fetch --languages ...`` (up to the 204 of Petrov et al.'s repository)
decides the languages of a run.  Such a corpus has no training text: it is evaluated by published tokenizers.
"""

from __future__ import annotations

from pathlib import Path

from corpora.errors import CorpusError
from corpora.spec import FLORES_CODE, FLORES_PREFIX

ALL = FLORES_PREFIX + "all"


def flores_languages(data_root: Path | None) -> list[str]:
    """The FLORES-200 codes of the data root's ``flores/*.txt``, sorted; a CorpusError without any."""
    if data_root is None:
        raise CorpusError(f"{ALL} needs a data root holding flores/<code>.txt files: pass --data-dir DIR, set "
                          "TOKBENCH_DATA, or run `tokbench data fetch --languages all`")  # fmt: skip
    codes = sorted(path.stem for path in (data_root / "flores").glob("*.txt") if FLORES_CODE.match(path.stem))
    if not codes:
        raise CorpusError(f"{data_root / 'flores'}: no FLORES-200 file (<code>.txt) for {ALL}")
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
