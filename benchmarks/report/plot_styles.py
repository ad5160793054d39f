"""How each tokenizer is drawn in the report's plots (``benchmarks.report.plots``): one colour and one marker
per tokenizer label (``tokenizer_palette``), derived from the label, so a tokenizer looks the same in every plot
of every run, and distinct colours for the labels of one figure while their hue family has colours enough;
points carry the marker, bars the colour (and the marker at their foot).

The colours come from published qualitative schemes: Paul Tol's colour-blind-safe "muted" and "vibrant"
schemes, his "light" one and one colour of his "dark" one (https://personal.sron.nl/~pault/), and the
colour-blind-safe Okabe-Ito palette (Okabe and Ito, "Color Universal Design", 2008), chosen by the distances
measured below.  Trained rows take cool and neutral colours, published rows
warm ones, so the two kinds never share a hue family.  In CIELAB (CIE76 colour difference), any trained colour
is at least 16 from every other colour here for normal vision (muted cyan and light blue; the muted colours
alone: 22.8) and at least 10.7 under each dichromacy simulated after Machado, Oliveira and Fernandes (2009)
(vibrant blue and the published purple, for protanopes; the muted colours alone: 15.6), and at least 34 from
the white background; a marker drawn from the label's hash still tells the closest pairs apart.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

#: the face of a hollow marker or bar (a point below its requested size, a cell not ranked, an off-scale one)
HOLLOW = "white"

#: colours of trained rows (row_type "family" or "reference"): Tol muted's cool half (indigo, cyan, teal, green,
#: olive), then blue (Tol vibrant), light blue and pear (Tol light), dark green (Tol dark) and black (Okabe-Ito),
#: in the order in which a label looks for a free colour.  Left out as nearer than 16 to one of these for normal
#: vision: Tol light's cyan, mint and olive, Tol vibrant's teal, Tol bright's green; and greys, which the plots
#: use for marks that are no tokenizer
TRAINED_COLOURS = ("#332288", "#88CCEE", "#44AA99", "#117733", "#999933",
                   "#0077BB", "#77AADD", "#BBCC33", "#225522", "#000000")  # fmt: skip
#: colours of published rows ("production"): Tol muted's warm half (rose, wine, purple, sand)
PRODUCTION_COLOURS = ("#CC6677", "#882255", "#AA4499", "#DDCC77")
#: marker shapes, crossed with the colours: 10 x 8 = 80 trained and 4 x 8 = 32 published styles
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


@dataclass(frozen=True)
class Style:
    """How one tokenizer is drawn: its colour (lines, points, bars) and its marker (points, bar feet)."""

    colour: str
    marker: str


def _preferred_slot(label: str, slots: int) -> int:
    # SHA-256, not hash(): Python salts str hashes per process, and a style must not change between runs
    return int.from_bytes(hashlib.sha256(label.encode("utf-8")).digest()[:8], "big") % slots


def _family_styles(labels: list[str], colours: Sequence[str]) -> dict[str, Style]:
    """The styles of one hue family's ``labels``, taken in sorted-label order (see ``tokenizer_palette``)."""
    uses = [0] * len(colours)
    taken: set[tuple[int, int]] = set()  # (colour index, marker index)
    styles: dict[str, Style] = {}
    for label in sorted(labels):
        preferred = _preferred_slot(label, len(colours) * len(MARKERS))
        colour, marker = preferred % len(colours), preferred // len(colours)
        # the next colours with the preferred marker first, then the next markers (each colour from the preferred one)
        probe = [((colour + step) % len(colours), (marker + turn) % len(MARKERS))
                 for turn in range(len(MARKERS)) for step in range(len(colours))]  # fmt: skip
        free = [slot for slot in probe if slot not in taken]
        if free:
            fewest = min(uses[slot[0]] for slot in free)
            colour, marker = next(slot for slot in free if uses[slot[0]] == fewest)
        uses[colour] += 1
        taken.add((colour, marker))
        styles[label] = Style(colours[colour], MARKERS[marker])
    return styles


def tokenizer_palette(tokenizers: Sequence[str], row_types: Mapping[str, str] | None = None) -> dict[str, Style]:
    """The ``Style`` of each label of ``tokenizers`` (in the order given, the legends' order).

    A label's hue family is ``TRAINED_COLOURS``, or ``PRODUCTION_COLOURS`` where ``row_types[label]`` is
    "production" (a label missing from ``row_types`` counts as trained).  Its preferred style is slot
    h mod (colours x markers), h the first 8 bytes of the SHA-256 of its UTF-8 bytes (big-endian): colour
    ``slot % colours``, marker ``slot // colours``.  The labels of a family take their styles one at a time in
    sorted order: each takes, among the (colour, marker) pairs no earlier label holds, the first whose colour is
    among the least used so far, looking from its preferred pair at the next colours (in the order of the
    family's tuple, wrapping round) with its preferred marker, then at the next markers in turn.

    Guaranteed, for the labels of one family given together (n of them, C colours, M = 8 markers):
    no two share a colour while n <= C (10 trained, 4 published); beyond that each colour serves
    floor(n / C) or ceil(n / C) labels, and no two share a (colour, marker) pair while n <= C x M.
    Across plots and runs: a label's style depends only on the label, its family and the labels of its family
    that sort before it (never on the order given, the other family, or labels sorted after it); in particular
    it is its preferred style in every set where no label of its family sorted before it holds its preferred
    colour, and so the same in every such plot of every run."""
    row_types = row_types or {}
    styles: dict[str, Style] = {}
    for colours, production in ((TRAINED_COLOURS, False), (PRODUCTION_COLOURS, True)):
        family = {t for t in tokenizers if (row_types.get(t) == "production") == production}
        styles.update(_family_styles(sorted(family), colours))
    return {t: styles[t] for t in tokenizers}
