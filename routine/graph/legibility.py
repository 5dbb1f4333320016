"""How readable a canvas is, measured the way Obsidian draws it (pure): card text metrics (how
tall a card must be for its text), and per canvas the edge crossings, the edges that pass through
a card, the cards whose text overflows and the cards that point at a missing file.

Obsidian draws an edge as a curve from the middle of one card side to the middle of another;
the straight segment between those two anchors stands in for it here.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import NotRequired, TypedDict

from routine.vault.provenance import list_item_start

# Obsidian's canvas card: 16px text, 24px lines, about 8px of width per character on average
# (measured on its default font), 20px padding inside the card on every side; a list item is
# indented, a blank line between paragraphs adds half a line, a heading is larger.
CHAR_W, LINE_H, CARD_PAD, LIST_INDENT = 8.4, 24, 20, 24
HEADING_SCALE = {1: 2.0, 2: 1.6, 3: 1.35, 4: 1.2, 5: 1.1, 6: 1.0}
_HEADING = re.compile(r"^(#{1,6})\s+")
_LINK = re.compile(r"\[\[([^\]|]*)\|?([^\]]*)\]\]")
SIDES = ("top", "right", "bottom", "left")


class CanvasNode(TypedDict):
    """A card of an Obsidian canvas (JSON Canvas 1.0): where it is, and what it shows (a box being
    laid out has no type yet)."""

    id: str
    type: NotRequired[str]  # text | file | link | group
    x: int
    y: int
    width: int
    height: int
    text: NotRequired[str]
    file: NotRequired[str]
    subpath: NotRequired[str]
    url: NotRequired[str]
    label: NotRequired[str]
    color: NotRequired[str]


class CanvasEdge(TypedDict):
    """A line between two cards (a line being routed has no id yet)."""

    id: NotRequired[str]
    fromNode: str
    toNode: str
    fromSide: NotRequired[str]
    toSide: NotRequired[str]
    fromEnd: NotRequired[str]
    toEnd: NotRequired[str]
    label: NotRequired[str]
    color: NotRequired[str]


class Canvas(TypedDict):
    """A `.canvas` file's document."""

    nodes: list[CanvasNode]
    edges: list[CanvasEdge]


def _shown(line: str) -> str:
    """A line as Obsidian shows it: a link by its alias or name, no markup characters."""
    line = _LINK.sub(lambda m: m[2] or m[1].rsplit("/", 1)[-1], line)
    return line.replace("**", "")


def wrapped_lines(text: str, width: float) -> int:
    """How many lines ``text`` takes in ``width`` pixels, words wrapped (a word longer than a line broken)."""
    per_line = max(1, int(width // CHAR_W))
    lines, used = 1, 0
    for word in text.split():
        if not used:
            used = len(word)
        elif used + 1 + len(word) <= per_line:
            used += 1 + len(word)
        else:
            lines, used = lines + 1, len(word)
        while used > per_line:
            lines, used = lines + 1, used - per_line
    return lines


def text_height(text: str, width: int) -> int:
    """The height a text card of ``width`` needs for ``text`` (markdown as Obsidian shows it)."""
    inner = width - 2 * CARD_PAD
    height = 0.0
    for line in text.split("\n"):
        if not line.strip():
            height += LINE_H / 2
            continue
        heading = _HEADING.match(line)
        scale = HEADING_SCALE[len(heading[1])] if heading else 1.0
        listed = list_item_start(line)
        room = inner - (LIST_INDENT if listed is not None else 0)
        body = line[heading.end():] if heading else line[listed:] if listed is not None else line
        height += wrapped_lines(_shown(body), room / scale) * LINE_H * scale
    return math.ceil(height + 2 * CARD_PAD)


def text_width(text: str, widest: int, narrowest: int = 160) -> int:
    """A card width for ``text``: its longest line, between ``narrowest`` and ``widest``."""
    longest = max((len(_shown(line)) for line in text.split("\n")), default=0)
    return int(min(widest, max(narrowest, math.ceil(longest * CHAR_W + 2 * CARD_PAD + LIST_INDENT))))


# --- geometry -------------------------------------------------------------------------------------


Point = tuple[float, float]


def anchor(node: CanvasNode, side: str) -> Point:
    x, y, w, h = node["x"], node["y"], node["width"], node["height"]
    return {"top": (x + w / 2, y), "bottom": (x + w / 2, y + h), "left": (x, y + h / 2),
            "right": (x + w, y + h / 2)}[side]


def auto_sides(a: CanvasNode, b: CanvasNode) -> tuple[str, str]:
    """The sides Obsidian picks for an edge that names none: the closest pair of anchors."""
    return min(itertools.product(SIDES, SIDES),
               key=lambda s: math.dist(anchor(a, s[0]), anchor(b, s[1])))


def _orient(p: Point, q: Point, r: Point) -> float:
    return (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])


def segments_cross(a: Point, b: Point, c: Point, d: Point) -> bool:
    """Do the segments ab and cd cross (touching ends do not count)?"""
    d1, d2, d3, d4 = _orient(c, d, a), _orient(c, d, b), _orient(a, b, c), _orient(a, b, d)
    return ((d1 > 0) != (d2 > 0) and d1 != 0 and d2 != 0) and ((d3 > 0) != (d4 > 0) and d3 != 0 and d4 != 0)


def hits_box(a: Point, b: Point, box: CanvasNode, margin: float = 2) -> bool:
    """Does the segment ab pass through ``box`` (its inside, shrunk by ``margin``)?"""
    left, top = box["x"] + margin, box["y"] + margin
    right, bottom = box["x"] + box["width"] - margin, box["y"] + box["height"] - margin
    if max(a[0], b[0]) < left or min(a[0], b[0]) > right or max(a[1], b[1]) < top or min(a[1], b[1]) > bottom:
        return False
    t0, t1 = 0.0, 1.0  # Liang-Barsky clipping
    dx, dy = b[0] - a[0], b[1] - a[1]
    for p, q in ((-dx, a[0] - left), (dx, right - a[0]), (-dy, a[1] - top), (dy, bottom - a[1])):
        if p == 0:
            if q < 0:
                return False
            continue
        t = q / p
        if p < 0:
            t0 = max(t0, t)
        else:
            t1 = min(t1, t)
        if t0 > t1:
            return False
    return True


def edge_segment(edge: CanvasEdge, nodes: dict[str, CanvasNode]) -> tuple[Point, Point]:
    a, b = nodes[edge["fromNode"]], nodes[edge["toNode"]]
    auto = auto_sides(a, b) if not (edge.get("fromSide") and edge.get("toSide")) else ("", "")
    return anchor(a, edge.get("fromSide") or auto[0]), anchor(b, edge.get("toSide") or auto[1])


# --- a canvas measured ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Legibility:
    cards: int
    edges: int
    crossings: int
    through_cards: int
    overflowing: int
    missing_files: int

    def line(self) -> str:
        return (f"{self.cards} cards, {self.edges} edges: {self.crossings} crossings, {self.through_cards} edges "
                f"through cards, {self.overflowing} cards overflowing, {self.missing_files} missing files")


def crossings(doc: Canvas) -> int:
    nodes = {n["id"]: n for n in doc["nodes"]}
    segs = []
    for e in doc["edges"]:
        a, b = edge_segment(e, nodes)
        segs.append((e["fromNode"], e["toNode"], a, b, min(a[0], b[0]), max(a[0], b[0]), min(a[1], b[1]),
                     max(a[1], b[1])))
    count = 0
    for (u1, v1, a, b, l1, r1, t1, b1), (u2, v2, c, d, l2, r2, t2, b2) in itertools.combinations(segs, 2):
        if r1 < l2 or r2 < l1 or b1 < t2 or b2 < t1 or u1 in (u2, v2) or v1 in (u2, v2):
            continue
        if segments_cross(a, b, c, d):
            count += 1
    return count


def through_cards(doc: Canvas) -> int:
    """Edges whose drawn line passes through a card other than its own two (groups are not cards)."""
    nodes = {n["id"]: n for n in doc["nodes"]}
    cards = [n for n in doc["nodes"] if n["type"] != "group"]
    count = 0
    for edge in doc["edges"]:
        a, b = edge_segment(edge, nodes)
        ends = (edge["fromNode"], edge["toNode"])
        if any(hits_box(a, b, card) for card in cards if card["id"] not in ends):
            count += 1
    return count


def overflowing(doc: Canvas) -> list[str]:
    """Text cards too small for their text (a file card shows its note, scrolled: never counted)."""
    return [n["id"] for n in doc["nodes"]
            if n["type"] == "text" and text_height(n["text"], n["width"]) > n["height"]]


def measure(doc: Canvas, exists: Callable[[str], bool] = lambda rel: True) -> Legibility:
    files = [n for n in doc["nodes"] if n["type"] == "file"]
    return Legibility(cards=sum(1 for n in doc["nodes"] if n["type"] != "group"), edges=len(doc["edges"]),
                      crossings=crossings(doc), through_cards=through_cards(doc),
                      overflowing=len(overflowing(doc)), missing_files=sum(1 for n in files if not exists(n["file"])))
