"""Training text for tokenizer tests: UD train/dev sentences (never FLORES, which is evaluation text)."""

from __future__ import annotations

from pathlib import Path

import pytest

UD_LANGUAGES = {"eng_Latn": "en", "tur_Latn": "tr", "rus_Cyrl": "ru", "kor_Hang": "ko"}


@pytest.fixture(scope="session")
def ud_text(data_root: Path) -> dict[str, list[str]]:
    """The ``# text =`` sentences of every UD train/dev file per language (test files held out)."""
    texts: dict[str, list[str]] = {}
    for language, code in UD_LANGUAGES.items():
        files = sorted((data_root / "ud" / code).glob("*-ud-train.conllu"))
        files += sorted((data_root / "ud" / code).glob("*-ud-dev.conllu"))
        texts[language] = [
            line.removeprefix("# text = ")
            for path in files
            for line in path.read_text(encoding="utf-8").splitlines()
            if line.startswith("# text = ")
        ]
    return texts
