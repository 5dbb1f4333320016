"""Links drawn as Obsidian draws them, clear of the cards (pure): each link's sides chosen so its
line passes through no other card (``choose_sides``); a card standing in a link's way moved
aside along its layer where that clears more lines than it blocks (``make_way``).
"""

from __future__ import annotations

import itertools
import math

from routine.graph.legibility import SIDES, CanvasEdge, CanvasNode, anchor, crossings, hits_box
from routine.graph.untangle import reorder_bands, untangle_sides

MARGIN = 30  # px between a line and a card moved out of its way
ROUNDS = 4
WORK, MIN_TRIALS, BIG = 400_000, 4, 6_000  # trials allowed: fewer the more lines (a big drawing stays quick)
REORDER_WORK = 1_000_000  # ... for moving cards along their layers
THROUGH_COST = 8


MEMO_LINKS = 16  # a memo holds at most this many choices per link (emptied when full: its memory stays small)
Memo = dict[tuple[int, ...], tuple[str, str]]  # one link's sides, by where its cards and those in reach stand


def choose_sides(boxes: dict[str, CanvasNode], edges: list[tuple[str, str]],
                 memo: Memo | None = None) -> list[tuple[str, str]]:
    """For each link, the sides of its two cards whose straight line passes through the fewest other
    cards, then the shortest; from bottom to top when one card is above the other and that is clear.
    Only the cards within reach of a link's two ends are checked (a big drawing stays quick).
    ``memo``: choices already made for the same cards in the same places (a trial that moved one
    card measures again only the links whose cards moved); emptied once it holds ``MEMO_LINKS``
    choices per link, so a long search keeps no more than the last few drawings' choices."""
    cards = [c for c in boxes.values() if c.get("type") != "group"]
    if memo is not None and len(memo) >= MEMO_LINKS * max(1, len(edges)):
        memo.clear()
    chosen = []
    for u, v in edges:
        a, b = boxes[u], boxes[v]
        others = _in_reach(cards, a, b)
        key = _where(a, b, others) if memo is not None else ()
        sides = memo.get(key) if memo is not None else None
        if sides is None:
            sides = _clearest(a, b, others)
            if memo is not None:
                memo[key] = sides
        chosen.append(sides)
    return chosen


def _where(a: CanvasNode, b: CanvasNode, others: list[CanvasNode]) -> tuple[int, ...]:
    """A link's memo key: the boxes of its two cards and of those in reach, flat (one small tuple)."""
    return (a["x"], a["y"], a["width"], a["height"], b["x"], b["y"], b["width"], b["height"],
            *itertools.chain.from_iterable((c["x"], c["y"], c["width"], c["height"]) for c in others))


def drawn_sides(boxes: dict[str, CanvasNode], edges: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The sides each link is drawn from: ``choose_sides``, then changed where a line crosses fewer
    others on sides facing each other, still clear of the cards (``untangle.untangle_sides``)."""
    return untangle_sides(boxes, edges, choose_sides(boxes, edges))


def _clearest(a: CanvasNode, b: CanvasNode, others: list[CanvasNode]) -> tuple[str, str]:
    natural = _natural(a, b)
    best: tuple[float, float, tuple[str, str]] | None = None
    for sides in _preferred(a, b):
        p, q = anchor(a, sides[0]), anchor(b, sides[1])
        hits = sum(1 for c in others if hits_box(p, q, c))
        cost = (hits, math.dist(p, q) * (1.0 if sides in natural else 1.6), sides)
        if best is None or cost[:2] < best[:2]:
            best = cost
        if hits == 0 and sides in natural:
            break
    assert best is not None
    return best[2]


def _in_reach(cards: list[CanvasNode], a: CanvasNode, b: CanvasNode) -> list[CanvasNode]:
    """The cards other than a and b that a line between their sides can pass through: those within
    the box around both."""
    left, right = min(a["x"], b["x"]), max(a["x"] + a["width"], b["x"] + b["width"])
    top, bottom = min(a["y"], b["y"]), max(a["y"] + a["height"], b["y"] + b["height"])
    return [c for c in cards if c["x"] < right and c["x"] + c["width"] > left and c["y"] < bottom
            and c["y"] + c["height"] > top and c["id"] not in (a["id"], b["id"])]


def _natural(a: CanvasNode, b: CanvasNode) -> list[tuple[str, str]]:
    if a["y"] + a["height"] <= b["y"]:
        return [("bottom", "top")]
    if b["y"] + b["height"] <= a["y"]:
        return [("top", "bottom")]
    return [("right", "left")] if a["x"] < b["x"] else [("left", "right")]


def _preferred(a: CanvasNode, b: CanvasNode) -> list[tuple[str, str]]:
    rest = [s for s in itertools.product(SIDES, SIDES) if s not in _natural(a, b)]
    return _natural(a, b) + rest


def too_big(cards: int, links: int) -> bool:
    """A drawing too big for cards to be moved out of lines' way (each try measures every pair of lines)."""
    return cards * links > BIG


def _through(boxes: dict[str, CanvasNode], edges: list[tuple[str, str]],
             sides: list[tuple[str, str]]) -> list[tuple[tuple[str, str], str]]:
    """(link, card) for each card a link's line (on its chosen sides) passes through."""
    found = []
    cards = list(boxes.values())
    for (u, v), (a, b) in zip(edges, sides, strict=True):
        p, q = anchor(boxes[u], a), anchor(boxes[v], b)
        found += [((u, v), box["id"]) for box in _in_reach(cards, boxes[u], boxes[v]) if hits_box(p, q, box)]
    return found


def _score(boxes: dict[str, CanvasNode], edges: list[tuple[str, str]],
           memo: Memo | None = None, untangled: bool = False) -> tuple[int, int]:
    """Lines through cards and crossings, as drawn: each link on the sides ``choose_sides`` gives it
    (``untangled``: and changed as ``drawn_sides`` changes them)."""
    sides = choose_sides(boxes, edges, memo)
    if untangled:
        sides = untangle_sides(boxes, edges, sides)
    links: list[CanvasEdge] = [{"fromNode": u, "toNode": v, "fromSide": a, "toSide": b}
                               for (u, v), (a, b) in zip(edges, sides, strict=True)]
    blocked = {link for link, _ in _through(boxes, edges, sides)}
    return len(blocked), crossings({"nodes": list(boxes.values()), "edges": links})


def _boxes(places: dict[str, tuple[int, int]], sizes: dict[str, tuple[int, int]]) -> dict[str, CanvasNode]:
    return {c: {"id": c, "x": x, "y": y, "width": sizes[c][0], "height": sizes[c][1]} for c, (x, y) in places.items()}


def figures(places: dict[str, tuple[int, int]], sizes: dict[str, tuple[int, int]],
            edges: list[tuple[str, str]]) -> tuple[int, int]:
    """Lines through cards and crossings of a drawing, as drawn (the fewer lines through cards first)."""
    boxes = _boxes(places, sizes)
    return _score(boxes, [(u, v) for u, v in edges if u in boxes and v in boxes and u != v], untangled=True)


def cost(places: dict[str, tuple[int, int]], sizes: dict[str, tuple[int, int]], edges: list[tuple[str, str]],
         through_cost: int = THROUGH_COST) -> int:
    """Lines through cards and crossings of a drawing, weighed together (a line through a card as
    ``through_cost`` crossings)."""
    boxes = _boxes(places, sizes)
    through, crossing = _score(boxes, [(u, v) for u, v in edges if u in boxes and v in boxes and u != v])
    return through * through_cost + crossing


def reorder(places: dict[str, tuple[int, int]], sizes: dict[str, tuple[int, int]],
            edges: list[tuple[str, str]], fixed: set[str] | None = None) -> dict[str, tuple[int, int]]:
    """Cards moved along their layer where fewer lines cross as drawn, never where one more passes
    through a card (``untangle.reorder_bands``; fewer trials the more lines); the layers of the
    ``fixed`` cards (a hub amid its neighbours) stay as they are."""
    edges = [(u, v) for u, v in edges if u in places and v in places and u != v]
    if not edges or too_big(len(places), len(edges)):
        return places
    memo: Memo = {}

    def measure(trial: dict[str, tuple[int, int]]) -> int:
        through, crossing = _score(_boxes(trial, sizes), edges, memo)
        return through * 1000 + crossing

    return reorder_bands(places, sizes, measure, max(MIN_TRIALS, REORDER_WORK // len(edges) ** 2), fixed or set())


def make_way(places: dict[str, tuple[int, int]], sizes: dict[str, tuple[int, int]],
             edges: list[tuple[str, str]]) -> dict[str, tuple[int, int]]:
    """Cards moved sideways out of the lines that pass through them, where no card overlaps and
    fewer lines pass through cards (a line through a card weighs ``THROUGH_COST`` crossings)."""
    boxes = _boxes(places, sizes)
    edges = [(u, v) for u, v in edges if u in boxes and v in boxes and u != v]
    if too_big(len(boxes), len(edges)):
        return places
    memo: Memo = {}
    score = _score(boxes, edges, memo)
    budget = max(MIN_TRIALS, WORK // max(1, len(edges)) ** 2)  # each trial measures every pair of lines
    for _ in range(ROUNDS):
        blocked = _through(boxes, edges, choose_sides(boxes, edges, memo))
        if not blocked:
            break
        for (u, v), card in blocked:
            a, b = boxes[u], boxes[v]
            moves = [(card, x) for x in _aside(a, b, boxes[card])] + [  # or an end straight above the other
                (u, _centred(a, b)), (v, _centred(b, a))]
            for moving, x in moves:
                budget -= 1
                if budget < 0:
                    return _places(boxes)
                trial = _shifted(boxes, moving, x)
                after = _score(trial, edges, memo)
                if _cost(after) < _cost(score):
                    boxes, score = trial, after
                    break
    return _places(boxes)


def _places(boxes: dict[str, CanvasNode]) -> dict[str, tuple[int, int]]:
    return {c: (b["x"], b["y"]) for c, b in boxes.items()}


def _cost(score: tuple[int, int]) -> int:
    """A line through a card costs as much as a few crossings."""
    return score[0] * THROUGH_COST + score[1]


def _centred(box: CanvasNode, under: CanvasNode) -> int:
    """The x that puts ``box`` straight above (or below) ``under``."""
    return round(under["x"] + under["width"] / 2 - box["width"] / 2)


def _shifted(boxes: dict[str, CanvasNode], card: str, x: int) -> dict[str, CanvasNode]:
    """The card moved to ``x``, the cards beyond it in its layer (that way) moved as far."""
    box, delta = boxes[card], x - boxes[card]["x"]
    beyond = [c for c, b in boxes.items() if b["y"] < box["y"] + box["height"] and box["y"] < b["y"] + b["height"]
              and (b["x"] >= box["x"] if delta > 0 else b["x"] <= box["x"])]
    return {**boxes, **{c: {**boxes[c], "x": boxes[c]["x"] + delta} for c in beyond}}


def _aside(a: CanvasNode, b: CanvasNode, box: CanvasNode) -> list[int]:
    """Just left and just right of where the line from a to b crosses the card's height."""
    sides = _natural(a, b)[0]
    p, q = anchor(a, sides[0]), anchor(b, sides[1])
    xs = []
    for y in (box["y"], box["y"] + box["height"]):
        t = 0.5 if q[1] == p[1] else min(1.0, max(0.0, (y - p[1]) / (q[1] - p[1])))
        xs.append(p[0] + (q[0] - p[0]) * t)
    left, right = int(min(xs) - MARGIN - box["width"]), int(max(xs) + MARGIN)
    return sorted((left, right), key=lambda x: abs(x - box["x"]))


def overlaps(a: CanvasNode, b: CanvasNode, margin: int = 0) -> bool:
    """Do two cards overlap (or come closer than ``margin`` side by side)?"""
    return (a["x"] - margin < b["x"] + b["width"] and b["x"] - margin < a["x"] + a["width"]
            and a["y"] < b["y"] + b["height"] and b["y"] < a["y"] + a["height"])
