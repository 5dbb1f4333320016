"""A hub: the card most of a drawing's links meet at (a note that links to everything in a
project, other than the view's own centre), placed in the middle of its neighbours (pure).

Laid out in a layer like any card, a hub sits below all it is linked to and its lines run up
across the whole drawing. Instead the drawing is laid out without it and the hub given a row of
its own between two layers, under the middle of its neighbours: its lines then fan out up and
down like spokes (spokes of one card never cross each other). ``spots`` gives those places; the
caller measures each as drawn and keeps the best (the hub laid out as any card among them).
"""

from __future__ import annotations

import statistics
from collections import Counter

from routine.graph.layout import GAP_Y
from routine.graph.untangle import bands

HUBS = 1  # hubs tried, the most linked first
HUB_MIN = 6  # links a card needs to be a hub
HUB_SHARE = 4  # ... and at least one in this many of the drawing's links

Places = dict[str, tuple[int, int]]
Sizes = dict[str, tuple[int, int]]


def hubs(cards: list[str], edges: list[tuple[str, str]], centre: str | None = None) -> list[str]:
    """The cards with the most links (at most ``HUBS``; not the view's ``centre``, which keeps its
    place on top), each with at least ``HUB_MIN`` of them and a ``HUB_SHARE``-th of all; the first
    in ``cards`` order on a tie."""
    pairs = {(u, v) if u < v else (v, u) for u, v in edges if u != v}
    degree = Counter(end for pair in pairs for end in pair)
    ranked = sorted((c for c in cards if c != centre), key=lambda c: -degree[c])[:HUBS]
    return [c for c in ranked if degree[c] >= HUB_MIN and degree[c] * HUB_SHARE >= len(pairs)]


def spots(places: Places, sizes: Sizes, hub: str, edges: list[tuple[str, str]]) -> list[Places]:
    """The drawing (laid out without ``hub``) with the hub in a row of its own before each band
    but the first, under the middle of its neighbours (the bands from there moved down)."""
    near = sorted({v if u == hub else u for u, v in edges if hub in (u, v) and u != v} & set(places))
    if not near:
        return []
    width, height = sizes[hub]
    centres = [places[n][0] + sizes[n][0] / 2 for n in near]
    out = []
    for band in bands(places, sizes)[1:]:
        top = min(places[c][1] for c in band)
        drop = height + GAP_Y
        moved = {c: (x, y + drop if y >= top else y) for c, (x, y) in places.items()}
        for centre in dict.fromkeys((statistics.median(centres), statistics.fmean(centres))):
            out.append({**moved, hub: (round(centre - width / 2), top)})
    return out
