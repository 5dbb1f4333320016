"""Fewer crossings, measured as Obsidian draws the lines (pure): each link's sides chosen again
where another pair facing each other, still clear of every card, crosses fewer other lines
(``untangle_sides``); a card moved to another place in its layer, slid sideways, or its whole
layer slid, where the drawing then crosses less, a move kept only when it does (``reorder_bands``).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator

from routine.graph.legibility import SIDES, CanvasNode, Point, anchor, hits_box, segments_cross

ROUNDS = 3
WORK = 300_000  # segment pairs a drawing's untangling may test (a big drawing stays quick)
MIN_GAP, SLIDES = 40, (-480, -240, -120, 120, 240, 480)  # px between cards of a band; slides tried
NORMALS = {"top": (0.0, -1.0), "bottom": (0.0, 1.0), "left": (-1.0, 0.0), "right": (1.0, 0.0)}

Segment = tuple[Point, Point]


def _facing(a: CanvasNode, b: CanvasNode, sides: tuple[str, str]) -> bool:
    """Does each end leave its card towards the other end (no line doubling back over its card)?"""
    p, q = anchor(a, sides[0]), anchor(b, sides[1])
    na, nb = NORMALS[sides[0]], NORMALS[sides[1]]
    return (na[0] * (q[0] - p[0]) + na[1] * (q[1] - p[1]) > 0
            and nb[0] * (p[0] - q[0]) + nb[1] * (p[1] - q[1]) > 0)


def _crossed(seg: Segment, ends: tuple[str, str], segs: list[Segment], edges: list[tuple[str, str]],
             skip: int) -> int:
    """How many of the other lines ``seg`` crosses (lines sharing a card never count)."""
    (ax, ay), (bx, by) = seg
    left, right, top, bottom = min(ax, bx), max(ax, bx), min(ay, by), max(ay, by)
    count = 0
    for j, ((cx, cy), (dx, dy)) in enumerate(segs):
        if j == skip or edges[j][0] in ends or edges[j][1] in ends:
            continue
        if max(cx, dx) < left or min(cx, dx) > right or max(cy, dy) < top or min(cy, dy) > bottom:
            continue
        count += segments_cross(seg[0], seg[1], (cx, cy), (dx, dy))
    return count


def _clear(boxes: dict[str, CanvasNode], cards: list[CanvasNode], u: str, v: str) -> list[tuple[str, str]]:
    """The side pairs of a link that face each other and pass through no other card."""
    a, b = boxes[u], boxes[v]
    near = [c for c in cards if c["id"] not in (u, v)]
    found = []
    for sides in itertools.product(SIDES, SIDES):
        if not _facing(a, b, sides):
            continue
        p, q = anchor(a, sides[0]), anchor(b, sides[1])
        if not any(hits_box(p, q, c) for c in near):
            found.append(sides)
    return found


def untangle_sides(boxes: dict[str, CanvasNode], edges: list[tuple[str, str]],
                   sides: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """``sides`` (one pair per link) changed where a link's line crosses fewer others on another pair
    of sides that face each other and pass through no card; the shortest such line of the fewest
    crossings. Rounds until nothing changes (at most ``ROUNDS``); deterministic."""
    if not edges or len(edges) ** 2 * 16 > WORK:
        return sides
    sides = list(sides)
    segs = [(anchor(boxes[u], a), anchor(boxes[v], b)) for (u, v), (a, b) in zip(edges, sides, strict=True)]
    cards = [c for c in boxes.values() if c.get("type") != "group"]
    options: dict[int, list[tuple[str, str]]] = {}
    for _ in range(ROUNDS):
        changed = False
        for i, (u, v) in enumerate(edges):
            now = _crossed(segs[i], (u, v), segs, edges, i)
            if now == 0:
                continue
            if i not in options:
                options[i] = _clear(boxes, cards, u, v)
            best: tuple[int, float, tuple[str, str]] | None = None
            for pair in options[i]:
                seg = (anchor(boxes[u], pair[0]), anchor(boxes[v], pair[1]))
                found = (_crossed(seg, (u, v), segs, edges, i), math.dist(*seg), pair)
                if best is None or found[:2] < best[:2]:
                    best = found
            if best is not None and best[0] < now:
                sides[i] = best[2]
                segs[i] = (anchor(boxes[u], best[2][0]), anchor(boxes[v], best[2][1]))
                changed = True
        if not changed:
            break
    return sides


Places = dict[str, tuple[int, int]]
Sizes = dict[str, tuple[int, int]]


def bands(places: Places, sizes: Sizes) -> list[list[str]]:
    """The cards of each band (cards overlapping in height share one), top to bottom, left to right."""
    found: list[tuple[int, int, list[str]]] = []
    for card in sorted(places, key=lambda c: (places[c][1], places[c][0], c)):
        top, bottom = places[card][1], places[card][1] + sizes[card][1]
        if found and top < found[-1][1]:
            found[-1] = (found[-1][0], max(found[-1][1], bottom), [*found[-1][2], card])
        else:
            found.append((top, bottom, [card]))
    return [sorted(cards, key=lambda c: (places[c][0], c)) for _, _, cards in found]


def _repacked(places: Places, sizes: Sizes, band: list[str], order: list[str]) -> Places:
    """A band's cards in another order, from the same left edge, the gaps between slots kept."""
    gaps = [places[b][0] - (places[a][0] + sizes[a][0]) for a, b in itertools.pairwise(band)]
    x, moved = places[band[0]][0], {}
    for i, card in enumerate(order):
        moved[card] = (x, places[card][1])
        x += sizes[card][0] + (gaps[i] if i < len(gaps) else 0)
    return {**places, **moved}


def _moves(places: Places, sizes: Sizes, band: list[str]) -> Iterator[Places]:
    """The drawings one move away along a band, one at a time (only the one measured is in memory):
    a card to another place in its order (the band repacked), a card slid sideways within its
    gaps, the whole band slid."""
    for card in band:
        for at in range(len(band)):
            if band[at] != card:
                order = [c for c in band if c != card]
                order.insert(at, card)
                yield _repacked(places, sizes, band, order)
    for i, card in enumerate(band):
        x, y = places[card]
        low = places[band[i - 1]][0] + sizes[band[i - 1]][0] + MIN_GAP if i else None
        high = places[band[i + 1]][0] - MIN_GAP - sizes[card][0] if i + 1 < len(band) else None
        for step in SLIDES:
            if (low is None or x + step >= low) and (high is None or x + step <= high):
                yield {**places, card: (x + step, y)}
    for step in SLIDES:
        yield {**places, **{c: (places[c][0] + step, places[c][1]) for c in band}}


def reorder_bands(places: Places, sizes: Sizes, measure: Callable[[Places], int], trials: int,
                  fixed: set[str]) -> Places:
    """Cards moved along their band (``_moves``) where ``measure`` (lines through cards and
    crossings, as drawn) drops, a move kept only then (a band holding a ``fixed`` card stays);
    rounds until none helps or ``trials`` are spent. Deterministic."""
    score = measure(places)
    for _ in range(ROUNDS):
        improved = False
        for i in range(len(bands(places, sizes))):
            band = bands(places, sizes)[i]
            if fixed & set(band):
                continue
            for trial in _moves(places, sizes, band):
                if score == 0 or trials <= 0:
                    return places
                trials -= 1
                after = measure(trial)
                if after < score:
                    places, score, improved = trial, after, True
                    break
        if not improved:
            break
    return places
