"""The token explorer (`benchmarks.report.explorer`): its payload against the tokenizers, and the page in a real
browser."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import bpe
from benchmarks.errors import BenchmarkError
from benchmarks.measure.segdiff import boundary_diff, sentence_boundaries
from benchmarks.report.explorer import ExplorerSentence, explorer_html, explorer_page, explorer_payload
from bpe.render import render_pieces
from tests.browser import WAIT_SECONDS, console_errors
from tests.conftest import FLORES_LANGUAGES, REPO_ROOT
from tests.errors import raises_code

LINES = (0, 5, 9)  # the FLORES lines shown, the same sentences in every language
TRAINED = REPO_ROOT / "tests" / "fixtures" / "tokenizers"


@pytest.fixture(scope="module")
def sentences(flores: dict[str, list[str]]) -> list[ExplorerSentence]:
    return [ExplorerSentence(language, f"flores-{line}", flores[language][line])
            for language in FLORES_LANGUAGES for line in LINES]  # fmt: skip


@pytest.fixture(scope="module")
def tokenizers() -> list[tuple[str, str, Any]]:
    """Published rows for every sentence, and a trained row for Korean only (a per-corpus mapping)."""
    return [
        ("cl100k", "tiktoken", bpe.load("cl100k")),
        ("mistral-v1", "sentencepiece", bpe.load("mistral-v1")),
        ("chars", "chars", bpe.load("chars")),
        ("char-bpe", "char-bpe", {"kor_Hang": bpe.load(TRAINED / "char-bpe.json")}),
    ]


@pytest.fixture(scope="module")
def payload(sentences, tokenizers) -> dict[str, Any]:
    return explorer_payload(sentences, tokenizers)


def test_payload_holds_every_piece_as_the_tokenizers_give_it(payload, sentences, tokenizers) -> None:
    assert [t["label"] for t in payload["tokenizers"]] == [label for label, _, _ in tokenizers]
    assert payload["languages"] == list(FLORES_LANGUAGES)
    assert [(s["language"], s["key"]) for s in payload["sentences"]] == [(s.language, s.key) for s in sentences]
    for sentence, shown in zip(sentences, payload["sentences"], strict=True):
        data = sentence.text.encode("utf-8")
        for (_, _, tokenizer), row in zip(tokenizers, shown["rows"], strict=True):
            if isinstance(tokenizer, dict):
                tokenizer = tokenizer.get(sentence.language)
                if tokenizer is None:
                    assert row is None
                    continue
            encoding = tokenizer.encode_with_spans(sentence.text)
            assert row["count"] == len(encoding.ids)
            assert [p["id"] for p in row["pieces"]] == encoding.ids
            assert [p["text"] for p in row["pieces"]] == render_pieces(sentence.text, encoding, tokenizer.unk_id)
            assert [bytes.fromhex(p["hex"]) for p in row["pieces"]] == [data[s:e] for s, e in encoding.spans]
            assert row["boundaries"] == sorted(sentence_boundaries(sentence.text, encoding))
            for piece in row["pieces"]:  # the characters a piece touches hold its bytes
                start, end = piece["bytes"]
                first, last = piece["chars"]
                assert len(sentence.text[:first].encode()) <= start <= end <= len(sentence.text[:last].encode())
                if end > start:
                    assert sentence.text[first:last].encode().find(data[start:end]) >= 0
    korean = next(s for s in payload["sentences"] if s["language"] == "kor_Hang")
    assert korean["rows"][3] is not None and all(s["rows"][3] is None for s in payload["sentences"]
                                                 if s["language"] != "kor_Hang")  # fmt: skip


def test_payload_diffs_are_the_segdiff_function(payload, sentences, tokenizers) -> None:
    for sentence, shown in zip(sentences, payload["sentences"], strict=True):
        present = [(i, t if not isinstance(t, dict) else t.get(sentence.language))
                   for i, (_, _, t) in enumerate(tokenizers)]  # fmt: skip
        present = [(i, t) for i, t in present if t is not None]
        expected = {}
        for position, (i, a) in enumerate(present):
            for j, b in present[position + 1 :]:
                diff = boundary_diff(
                    sentence.text, a.encode_with_spans(sentence.text), b.encode_with_spans(sentence.text)
                )
                expected[f"{i}-{j}"] = {"only_a": list(diff.only_a), "only_b": list(diff.only_b)}
        assert shown["diffs"] == expected
    assert any(d["only_a"] or d["only_b"] for s in payload["sentences"] for d in s["diffs"].values())


def test_payload_is_json_and_deterministic(payload, sentences, tokenizers) -> None:
    again = explorer_payload([s.__dict__ for s in sentences], tokenizers)  # plain mappings work too
    assert json.dumps(again, sort_keys=True) == json.dumps(payload, sort_keys=True)
    assert json.loads(json.dumps(payload)) == payload
    assert explorer_html(again) == explorer_html(payload)


@pytest.mark.parametrize(
    ("sentences", "tokenizers", "code", "value"),
    [
        ([], [("chars", "chars", None)], "no_items", "sentences"),
        ([{"language": "eng_Latn", "key": "a", "text": "x"}], [], "no_items", "tokenizers"),
        ([{"language": "eng_Latn", "key": "a", "text": "x"}] * 2, [("c", "c", None)], "duplicate_key", "a"),
        ([{"language": "eng_Latn", "text": "x"}], [("c", "c", None)], "missing_key",
         {"language": "eng_Latn", "text": "x"}),
        ([{"language": "eng_Latn", "key": 3, "text": "x"}], [("c", "c", None)], "wrong_type",
         {"language": "eng_Latn", "key": 3, "text": "x"}),
        ([{"language": "eng_Latn", "key": "a", "text": "x"}], [("c", "c", None), ("c", "d", None)], "duplicate_label",
         "c"),
    ],
)  # fmt: skip
def test_bad_payload_input(sentences, tokenizers, code: str, value: object) -> None:
    tokenizers = [(label, family, bpe.load("chars")) for label, family, _ in tokenizers]
    with raises_code(BenchmarkError, code, value=value):
        explorer_payload(sentences, tokenizers)


def test_markup_in_a_sentence_stays_text() -> None:
    text = "a </script><b>bold</b> & <!-- x"
    page = explorer_page(
        explorer_payload([ExplorerSentence("eng_Latn", "1", text)], [("chars", "chars", bpe.load("chars"))])
    )
    script = page[page.index('class="tbx-data">') : page.index("</script>")]
    assert "<" not in script.removeprefix('class="tbx-data">') and "&" not in script
    assert json.loads(script.removeprefix('class="tbx-data">'))["sentences"][0]["text"] == text


# -- in a real browser ------------------------------------------------------


@pytest.fixture(scope="module")
def page(payload, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("explorer") / "explorer.html"
    path.write_text(explorer_page(payload), encoding="utf-8")
    return path


def opened(browser: Any, page: Path) -> Any:
    browser.get(page.as_uri())
    browser.implicitly_wait(WAIT_SECONDS)
    return browser


def choose(browser: Any, role: str, value: str) -> None:
    from selenium.webdriver.support.ui import Select

    Select(browser.find_element("css selector", f'[data-role="{role}"]')).select_by_value(value)


def test_page_loads_without_console_errors(browser, page: Path) -> None:
    opened(browser, page)
    assert browser.find_element("css selector", '[data-role="text"]').text
    assert console_errors(browser) == []


def test_choosing_a_korean_sentence_shows_every_tokenizer(browser, page: Path, payload, tokenizers) -> None:
    opened(browser, page)
    choose(browser, "language", "kor_Hang")
    choose(browser, "sentence", "flores-5")
    expected = next(s for s in payload["sentences"] if (s["language"], s["key"]) == ("kor_Hang", "flores-5"))
    assert browser.find_element("css selector", '[data-role="text"]').text == expected["text"]
    rows = browser.find_elements("css selector", '[data-role="rows"] tr')
    assert [row.get_attribute("data-tokenizer") for row in rows] == [label for label, _, _ in tokenizers]
    for row, shown in zip(rows, expected["rows"], strict=True):
        pieces = row.find_elements("css selector", '[data-role="piece"]')
        assert [int(p.get_attribute("data-id")) for p in pieces] == [p["id"] for p in shown["pieces"]]
        assert [p.get_attribute("textContent") for p in pieces] == [p["text"] for p in shown["pieces"]]
        assert row.find_element("css selector", ".tbx-count").text == str(shown["count"])
    # the language changes, the sentence key stays
    choose(browser, "language", "tur_Latn")
    assert browser.find_element("css selector", '[data-role="text"]').get_attribute("data-key") == "flores-5"
    assert console_errors(browser) == []


def marked(browser: Any, side: str) -> list[int]:
    """The offsets marked on ``side`` of the comparison, read once its row is there: with the implicit wait
    on, an empty result (nothing only in B) would cost the whole wait."""
    row = browser.find_element("css selector", f'[data-role="compare"] tr[data-side="{side}"]')
    browser.implicitly_wait(0)
    try:
        marks = row.find_elements("css selector", "mark[data-offset]")
    finally:
        browser.implicitly_wait(WAIT_SECONDS)
    return [int(mark.get_attribute("data-offset")) for mark in marks]


@pytest.mark.parametrize(("a", "b"), [(0, 1), (3, 0), (2, 1)])
def test_compare_marks_exactly_the_differing_boundaries(browser, page: Path, sentences, tokenizers, a, b) -> None:
    opened(browser, page)
    choose(browser, "language", "kor_Hang")
    choose(browser, "sentence", "flores-9")
    choose(browser, "compare-a", str(a))
    choose(browser, "compare-b", str(b))
    text = next(s.text for s in sentences if (s.language, s.key) == ("kor_Hang", "flores-9"))
    tokenizer_a, tokenizer_b = (
        t if not isinstance(t, dict) else t["kor_Hang"] for _, _, t in (tokenizers[a], tokenizers[b])
    )
    encoding_a, encoding_b = tokenizer_a.encode_with_spans(text), tokenizer_b.encode_with_spans(text)
    diff = boundary_diff(text, encoding_a, encoding_b)
    assert diff.count > 0
    assert marked(browser, "a") == list(diff.only_a)
    assert marked(browser, "b") == list(diff.only_b)
    summary = browser.find_element("css selector", '[data-role="summary"]').text
    assert f"{len(encoding_a)} tokens" in summary and f"{len(encoding_b)} tokens" in summary
    assert f"{diff.count} boundaries differ ({len(diff.only_a)} only in A, {len(diff.only_b)} only in B)" in summary
    assert console_errors(browser) == []


def test_hover_shows_the_id(browser, page: Path, payload) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    opened(browser, page)
    choose(browser, "language", "kor_Hang")
    choose(browser, "sentence", "flores-0")
    expected = next(s for s in payload["sentences"] if (s["language"], s["key"]) == ("kor_Hang", "flores-0"))
    row = browser.find_element("css selector", '[data-role="rows"] tr[data-tokenizer="cl100k"]')
    pieces = row.find_elements("css selector", '[data-role="piece"]')
    target = expected["rows"][0]["pieces"][2]
    ActionChains(browser).move_to_element(pieces[2]).perform()
    info = browser.find_element("css selector", '[data-role="info"]').text
    spaced = " ".join(target["hex"][i : i + 2] for i in range(0, len(target["hex"]), 2)).upper()
    assert info.startswith(f"cl100k: id {target['id']} · bytes {spaced} · text {target['text']}")
    assert console_errors(browser) == []


def test_a_runs_examples_become_sentences(flores: dict[str, list[str]]) -> None:
    from benchmarks.report.explorer import explorer_sentences
    from benchmarks.run.examples import Example

    examples = [
        Example("flores-kor", "kor_Hang", "flores-kor:dev:3", "dev:3", flores["kor_Hang"][3]),
        Example("flores-eng", "eng_Latn", "flores-eng:dev:3", "dev:3", flores["eng_Latn"][3]),
        Example("ud-tur", "tur_Latn", "ud-tur:test:1", None, flores["tur_Latn"][3][:40], cut=True),
    ]
    assert explorer_sentences(examples) == [
        ExplorerSentence("kor_Hang", "dev:3", flores["kor_Hang"][3], "flores-kor"),
        ExplorerSentence("eng_Latn", "dev:3", flores["eng_Latn"][3], "flores-eng"),
        ExplorerSentence("tur_Latn", "ud-tur:test:1", flores["tur_Latn"][3][:40], "ud-tur"),
    ]
    trained = {"flores-kor": bpe.load("chars")}
    payload = explorer_payload(explorer_sentences(examples), [("chars", "chars", trained)])
    assert [s["rows"][0] is not None for s in payload["sentences"]] == [True, False, False]


def test_two_explorers_share_a_page(browser, tmp_path: Path) -> None:
    chars = bpe.load("chars")
    first = explorer_payload([ExplorerSentence("eng_Latn", "1", "one two")], [("chars", "chars", chars)])
    second = explorer_payload([ExplorerSentence("kor_Hang", "1", "하나 둘 셋")], [("chars", "chars", chars)])
    page = tmp_path / "two.html"
    both = explorer_html(first) + explorer_html(second)
    page.write_text(f"<!doctype html><meta charset=utf-8><title>two</title>{both}", encoding="utf-8")
    opened(browser, page)
    texts = browser.find_elements("css selector", '[data-role="text"]')
    assert [text.text for text in texts] == ["one two", "하나 둘 셋"]
    counts = [len(root.find_elements("css selector", '[data-role="piece"]'))
              for root in browser.find_elements("css selector", "[data-tokbench-explorer]")]  # fmt: skip
    assert counts == [7, 6]
    assert console_errors(browser) == []
