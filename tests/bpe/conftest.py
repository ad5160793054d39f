"""Text for tokenizer tests: training text (UD train/dev sentences or the embedded corpora; never FLORES,
which is evaluation text) and evaluation text."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import FLORES_LANGUAGES, find_data_root

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


#: characters of embedded training text per language (keeps test tokenizers quick to train)
EMBEDDED_TRAIN_CHARS = 200_000


def _embedded_documents(role: str, max_chars: int | None = None) -> dict[str, list[str]]:
    """Documents of the embedded corpora (text read from installed pip packages), per language."""
    from corpora import load_corpus

    texts: dict[str, list[str]] = {}
    for language in UD_LANGUAGES:
        corpus = load_corpus(f"embedded-{language[:3]}", data_dir=None)
        chosen, total = [], 0
        for document in corpus.documents(role):
            if max_chars is not None and total >= max_chars:
                break
            chosen.append(document.text)
            total += len(document.text)
        texts[language] = chosen
    return texts


@pytest.fixture(scope="session")
def embedded_training_text() -> list[str]:
    """Training text that needs no data root: the embedded corpora's train documents."""
    return [text for texts in _embedded_documents("train", EMBEDDED_TRAIN_CHARS).values() for text in texts]


@pytest.fixture(scope="session")
def evaluation_lines() -> dict[str, list[str]]:
    """Every FLORES-200 dev+devtest line of the four languages when the data root is present,
    else the embedded corpora's test documents (tests then run on real text either way)."""
    root = find_data_root()
    if root is None:
        return _embedded_documents("test")
    return {
        language: (root / "flores" / f"{language}.txt").read_text(encoding="utf-8").splitlines()
        for language in FLORES_LANGUAGES
    }
