"""A hub: the card most of a drawing's links meet at (a note that links to everything in a
project, other than the view's own centre), to be placed amid its neighbours (pure).

Laid out in a layer like any card, a hub sits below all it is linked to and its lines run up
across the whole drawing. Instead ``layout.layered(hub=)`` lays the drawing out without it and
gives the hub a layer of its own between two layers: its lines fan out up and down like spokes
(the spokes of one card never cross each other). The caller tries each layer for it, measures
each drawing as Obsidian draws it and keeps the least crossed (the hub laid out as any card
among them).
"""

from __future__ import annotations

from collections import Counter

HUBS = 1  # hubs tried, the most linked first
HUB_MIN = 6  # links a card needs to be a hub
HUB_SHARE = 4  # ... and at least one in this many of the drawing's links


def hubs(cards: list[str], edges: list[tuple[str, str]], centre: str | None = None) -> list[str]:
    """The cards with the most links (at most ``HUBS``; not the view's ``centre``, which keeps its
    place on top), each with at least ``HUB_MIN`` of them and a ``HUB_SHARE``-th of all; the first
    in ``cards`` order on a tie."""
    pairs = {(u, v) if u < v else (v, u) for u, v in edges if u != v}
    degree = Counter(end for pair in pairs for end in pair)
    ranked = sorted((c for c in cards if c != centre), key=lambda c: -degree[c])[:HUBS]
    return [c for c in ranked if degree[c] >= HUB_MIN and degree[c] * HUB_SHARE >= len(pairs)]
