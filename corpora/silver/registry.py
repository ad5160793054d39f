"""``SILVER``: every silver analyzer by name, the one list of them.  Each is declared by its own module
(its ``ANALYZER``); adding one is a module beside them and a line here.  The order is the order
``tokbench corpora agreement`` lists them in."""

from __future__ import annotations

from corpora.silver import kiwi, lemminflect, pymorphy, zemberek
from corpora.silver.analyzer import SilverAnalyzer

SILVER: dict[str, SilverAnalyzer] = {
    module.ANALYZER.name: module.ANALYZER for module in (zemberek, kiwi, pymorphy, lemminflect)
}
