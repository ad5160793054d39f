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


@pytest.fixture(scope="session")
def embedded_text() -> dict[str, list[str]]:
    """Non-blank lines of every role of the embedded corpora (text inside installed pip packages),
    per language: training text that needs no data root."""
    import warnings

    from corpora.loader import load_corpus

    texts: dict[str, list[str]] = {}
    for language, short in {"eng_Latn": "eng", "tur_Latn": "tur", "rus_Cyrl": "rus", "kor_Hang": "kor"}.items():
        with warnings.catch_warnings():  # repairs of the embedded text are reported by `tokbench corpora`
            warnings.simplefilter("ignore")
            corpus = load_corpus(f"embedded-{short}")
        texts[language] = [
            line
            for role in corpus.roles()
            for document in corpus.documents(role)
            for line in document.text.splitlines()
            if line.strip()
        ]
    return texts
