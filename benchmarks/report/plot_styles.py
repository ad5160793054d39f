"""How each tokenizer is drawn in the report's plots (``benchmarks.report.plots``): one colour and one marker
per tokenizer label (``tokenizer_palette``), derived from the label alone, so a tokenizer looks the same in
every plot of every run; points carry the marker, bars the colour (and the marker at their foot).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

#: the face of a hollow marker or bar (a point below its requested size, a cell not ranked, an off-scale one)
HOLLOW = "white"

#: Paul Tol's "muted" qualitative scheme (https://personal.sron.nl/~pault/), whose colours stay apart under
#: the common colour-vision deficiencies: its cool half (blues, greens) for trained rows (row_type "family" or
#: "reference"), its warm half (reds, purples, sand) for published ones ("production")
TRAINED_COLOURS = ("#332288", "#88CCEE", "#44AA99", "#117733", "#999933")  # indigo, cyan, teal, green, olive
PRODUCTION_COLOURS = ("#CC6677", "#882255", "#AA4499", "#DDCC77")  # rose, wine, purple, sand
#: marker shapes, crossed with the colours: 5 x 8 = 40 trained and 4 x 8 = 32 published styles
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


@dataclass(frozen=True)
class Style:
    """How one tokenizer is drawn: its colour (lines, points, bars) and its marker (points, bar feet)."""

    colour: str
    marker: str


def _preferred_slot(label: str, slots: int) -> int:
    # SHA-256, not hash(): Python salts str hashes per process, and a style must not change between runs
    return int.from_bytes(hashlib.sha256(label.encode("utf-8")).digest()[:8], "big") % slots


def tokenizer_palette(tokenizers: Sequence[str], row_types: Mapping[str, str] | None = None) -> dict[str, Style]:
    """The ``Style`` of each label of ``tokenizers`` (in the order given, the legends' order), derived from the
    label alone, so a tokenizer looks the same in every plot of every run.

    A label's hue family is ``TRAINED_COLOURS``, or ``PRODUCTION_COLOURS`` where ``row_types[label]`` is
    "production" (a label missing from ``row_types`` counts as trained); its slots are the family's colours
    crossed with ``MARKERS``, slot s being colour ``s % colours`` with marker ``s // colours``.  Its preferred
    slot is the SHA-256 of its UTF-8 bytes modulo the slots.  Collisions: the labels of a family take their
    slots in sorted order, each its preferred slot if free, else the next free one (s + 1, s + 2, ..., wrapping
    round), so no two labels given together share a (colour, marker) pair while a family has fewer labels than
    slots (40 trained, 32 published; beyond that, pairs repeat), and a label keeps its preferred style in any
    set where no label sorted before it took that slot."""
    row_types = row_types or {}
    styles: dict[str, Style] = {}
    for colours, production in ((TRAINED_COLOURS, False), (PRODUCTION_COLOURS, True)):
        slots = len(colours) * len(MARKERS)
        taken: set[int] = set()
        for label in sorted({t for t in tokenizers if (row_types.get(t) == "production") == production}):
            preferred = _preferred_slot(label, slots)
            free = [(preferred + step) % slots for step in range(slots) if (preferred + step) % slots not in taken]
            slot = free[0] if free else preferred
            taken.add(slot)
            styles[label] = Style(colours[slot % len(colours)], MARKERS[slot // len(colours)])
    return {t: styles[t] for t in tokenizers}

