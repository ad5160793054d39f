"""The zemberek analyzer (Turkish) on real words, and its speedups against zemberek-python's own code."""

from __future__ import annotations

import os
from pathlib import Path

from corpora.morph import Coverage
from corpora.silver import analyze, pool, turkish_lower, zemberek


def test_turkish_lower_keeps_offsets() -> None:
    assert turkish_lower("IŞIK") == "ışık"
    assert turkish_lower("İzmir") == "izmir"  # str.lower() would add a combining dot
    assert len(turkish_lower("İİİ")) == 3


def test_zemberek_segments_surface_morphemes() -> None:
    result = analyze("zemberek", ["kitaplarımızdan", "Kitaplarımızdan", "İstanbul'da", "xqzwvk"], "tr")
    assert result.analyses["kitaplarımızdan"] == (frozenset({5, 8, 12}),)  # kitap|lar|ımız|dan
    assert result.analyses["Kitaplarımızdan"] == (frozenset({5, 8, 12}),)  # offsets into the word as given
    assert result.coverage == Coverage(
        4, 2, {"analysis surfaces differ from the word": 1, "no analysis (unknown word)": 1}
    )
    assert result.kind == "silver" and "zemberek-python" in result.source


def test_zemberek_with_its_speedups_analyzes_as_the_library(embedded_text: dict[str, list[str]]) -> None:
    """Two fresh analyzers under the fixed hash seed, the library's own and one with the perceptron weights
    memoized and looked up by ``weight_lookup``, the surface cache read directly and the attribute sets copied
    directly, given the same 600 Turkish words in the same order, choose the same best analysis of every word
    (in a fresh process: the speedups are set on zemberek's classes and modules once this process loads it)."""
    import json
    import re
    import subprocess
    import sys

    words = list(dict.fromkeys(re.findall(r"\w+", " ".join(embedded_text["tur_Latn"][:80]))))[:600]
    assert len(words) == 600
    script = """
import json, sys, warnings
from zemberek import TurkishMorphology
from corpora.silver import zemberek as silver
words = json.loads(sys.stdin.read())
def best(morphology):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return [morphology.analyze_and_disambiguate(word).best_analysis()[0].format_string() for word in words]
library = best(TurkishMorphology.Builder(silver.zemberek_lexicon()).build())
sped_up = TurkishMorphology.Builder(silver.zemberek_lexicon()).build()
silver._memoize_weights(sped_up)
silver._look_up_surfaces_directly()
silver._copy_attribute_sets_directly()
print(json.dumps([library, best(sped_up), sped_up.ambiguity_resolver.decoder.model.get_.cache_info().hits]))
"""
    run = subprocess.run([sys.executable, "-W", "ignore", "-c", script], input=json.dumps(words), text=True,
                         capture_output=True, env={**os.environ, "PYTHONHASHSEED": pool.HASH_SEED}, check=True)
    library, sped_up, hits = json.loads(run.stdout)
    assert sped_up == library
    assert hits > 0


def test_weight_lookup_gives_the_library_weight_of_every_key() -> None:
    """``weight_lookup`` against zemberek's ``LossyIntLookup.get_as_float`` on every feature the disambiguator
    asks for on a few sentences, and on keys of other shapes (empty, non-ASCII, long, outside the BMP)."""
    import random
    import warnings

    import numpy as np

    morphology = zemberek._zemberek()
    lookup = morphology.ambiguity_resolver.decoder.model.lookup
    asked: list[str] = []
    morphology.ambiguity_resolver.decoder.model.get_ = lambda key: asked.append(key) or 0.0
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            for word in ("kitaplarımızdan", "görmedilerdi", "evde", "gelecekmişsiniz", "İstanbul'da", "koşuyorum"):
                morphology.analyze_and_disambiguate(word)
    finally:
        zemberek._memoize_weights(morphology)
    generator, letters = random.Random(7), "abcçdefgğhıijklmnoöprsştuüvyz:+_|0123456789"
    others = ["", "a", "ğüşıöç", "😀x", "x" * 300] + [
        "".join(generator.choice(letters) for _ in range(generator.randint(1, 40))) for _ in range(2000)
    ]
    keys = list(dict.fromkeys(asked + others))
    assert len(asked) > 100
    fast = zemberek.weight_lookup(lookup)
    expected = [lookup.get_as_float(key) for key in keys]
    found = [fast(key) for key in keys]
    assert all(isinstance(weight, np.float32) for weight in found)
    assert np.array_equal(np.array(found), np.array(expected))
    assert sum(weight != 0 for weight in found) > 50  # keys the model holds, not only misses


def _lexicon_items(lexicon: object) -> list[tuple]:
    """Every item of a zemberek RootLexicon, in order, as plain values (its reference item's too)."""

    def values(item: object) -> tuple:
        return tuple((name, values(value) if name == "reference_item" and value is not None
                      else sorted(map(str, value)) if isinstance(value, set) else value)
                     for name, value in sorted(vars(item).items()))  # fmt: skip

    return [(key, [values(item) for item in items]) for key, items in lexicon.item_map.items()]  # type: ignore[attr-defined]


def test_zemberek_lexicon_reads_as_the_library_reads(tmp_path: Path) -> None:
    """On an excerpt of the packaged lexicon holding every referencing line and the lines they refer to, plus
    a second line of a referenced id (the first one is the reference, as in the library's scan)."""
    import csv
    import importlib.resources

    from zemberek.morphology.lexicon.root_lexicon import DictionaryReader

    packaged = importlib.resources.files("zemberek") / "resources" / "lexicon.csv"
    rows = packaged.read_text(encoding="utf-8").splitlines()
    fields = [row.split("\t") for row in rows]
    referenced = {row[7] for row in fields if row[7] != "null"}
    kept = [row for number, (row, split) in enumerate(zip(rows, fields, strict=True))
            if number < 500 or split[7] != "null" or split[0] in referenced]  # fmt: skip
    target = next(row for row in kept if row.split("\t")[0] in referenced).split("\t")
    kept.append("\t".join([target[0], target[1] + "x", *target[2:]]))
    excerpt = tmp_path / "lexicon.csv"
    excerpt.write_text("\n".join(kept) + "\n", encoding="utf-8")
    assert sum(row.split("\t")[7] != "null" for row in kept) > 1000
    ours = zemberek.zemberek_lexicon(excerpt)
    assert _lexicon_items(ours) == _lexicon_items(DictionaryReader.load_from_resources(str(excerpt)))
    assert csv.field_size_limit() == 100_000_000  # set as the library sets it
    assert len(ours) == len(kept)


def test_zemberek_answers_as_under_the_fixed_hash_seed_whatever_this_process_runs_under() -> None:
    """zemberek's answer to a word can change with the interpreter's hash seed (set iteration order): it is
    answered as a process started with ``PYTHONHASHSEED=HASH_SEED`` answers, whatever seed this one has."""
    import subprocess
    import sys

    word = "jurnalliyormuş"
    script = f"from corpora.silver.zemberek import _segment_zemberek; print(_segment_zemberek([{word!r}])[0])"
    runs = {seed: subprocess.Popen([sys.executable, "-W", "ignore", "-c", script], stdout=subprocess.PIPE, text=True,
                                   env={**os.environ, "PYTHONHASHSEED": seed}) for seed in (pool.HASH_SEED, "6")}
    answers = {seed: run.communicate()[0].strip() for seed, run in runs.items()}
    assert answers[pool.HASH_SEED] != answers["6"]  # the dependence this guards against (zemberek-python 0.2.3)
    (seeded,), _ = pool.segment_seeded("zemberek", [[word]])
    assert str(seeded[0]) == answers[pool.HASH_SEED]
