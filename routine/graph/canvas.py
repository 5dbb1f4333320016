"""A view as a JSON Canvas 1.0 document (Obsidian's ``.canvas``): file nodes that open the
notes, text nodes for task lines and key results, grouped by type, edges labelled by type.

Our node and edge ids start with ``rt``; the header text node ``routine-graph`` marks a canvas
as ours. ``merge`` lays a fresh view over the canvas on disk: a node the person moved (or
resized) keeps its place, anything the person added stays, colours they chose stay.
"""

from __future__ import annotations

import hashlib
import heapq
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import NotRequired, TypedDict

from routine.graph import cards, hub, layout, legibility, routing
from routine.graph.cards import CardFace
from routine.graph.layout import Card
from routine.graph.legibility import Canvas, CanvasEdge, CanvasNode
from routine.graph.model import EdgeType, NodeType
from routine.graph.views import View
from routine.jsonvalue import Parsed

MARKER = "routine-graph"
PREFIX = "rt"
PAD, GROUP_GAP, LEGEND_GAP, HEADER_W, ROW_W = 40, 160, 120, 640, 3200
WORKSPACE_MAX = 150  # cards past which the workspace links to the project canvases instead of drawing tasks
ELSEWHERE = "elsewhere"
TRIES, MANY_LINKS = 4, 80  # orders of the layers drawn and measured, the best kept (one past MANY_LINKS)
REORDERED = 1  # the least crossed drawings whose cards are then moved along their layers
HUB_TRIES = 12  # layers for a hub (and orders) moved out of lines' way and measured: the least crossed first
SIDES = {"top", "right", "bottom", "left"}
ENDS = {"none", "arrow"}
NODE_KINDS = {"text": "text", "file": "file", "link": "url", "group": None}
CanvasOf = Callable[[str], str]  # a project's node -> its canvas's vault path


def node_id(graph_id: str) -> str:
    return PREFIX + hashlib.sha1(graph_id.encode("utf-8")).hexdigest()[:14]


def _edge_id(u: str, v: str, label: str) -> str:
    return PREFIX + hashlib.sha1(f"{u}\x00{v}\x00{label}".encode()).hexdigest()[:14]


@dataclass
class _Drawing:
    """Cards and links being laid out: canvas node ids, the graph node each shows, its face."""

    faces: dict[str, CardFace] = field(default_factory=dict)     # canvas id -> face
    shows: dict[str, str] = field(default_factory=dict)          # canvas id -> graph id
    links: list[tuple[str, str, str, str]] = field(default_factory=list)  # (from id, to id, type, label)

    def add(self, cid: str, graph_id: str, data: Mapping[str, str]) -> None:
        self.faces[cid], self.shows[cid] = cards.face(graph_id, data), graph_id

    def layered(self, ranks: dict[str, int], centre: str | None = None) -> dict[str, tuple[int, int]]:
        """The cards' places: the layered layout's best orders (and, with a hub, the hub in a row of
        its own amid its neighbours), cards moved out of lines' way, the one that crosses least kept."""
        boxes = [Card(c, f.width, f.height, ranks[c]) for c, f in self.faces.items()]
        edges = [(u, v) for u, v, _, _ in self.links]
        sizes = {c: (f.width, f.height) for c, f in self.faces.items()}
        if routing.too_big(len(boxes), len(edges)):
            return layout.layered(boxes, edges)[0]
        tries = TRIES if len(edges) <= MANY_LINKS else 1
        middles = hub.hubs(list(self.faces), edges, centre) if centre else []
        amid = (places for middle in middles for above in layout.amid(boxes, edges, middle)  # a hub amid its neighbours
                for places in layout.layered(boxes, edges, tries, (middle, above)))
        found = heapq.nsmallest(HUB_TRIES, amid, key=lambda places: routing.cost(places, sizes, edges, through_cost=2))
        drawn = [routing.make_way(places, sizes, edges) for places in found or layout.layered(boxes, edges, tries)]
        drawn.sort(key=lambda places: routing.figures(places, sizes, edges))
        hubs = set(middles) if found else set()
        return min((routing.reorder(places, sizes, edges, hubs) for places in drawn[:REORDERED]),
                   key=lambda places: routing.figures(places, sizes, edges))


def _drawn(view: View) -> list[tuple[str, str, str, str]]:
    """The links worth a line: one per pair of cards (labels joined; a manager is a member too), and
    a note's link to a task in it only from a project (a task's card names its note already)."""
    kept: dict[tuple[str, str], tuple[str, str, str, str]] = {}
    for u, v, kind, label in view.edges:
        if kind == EdgeType.HAS_TASK.value and view.nodes[u].get("type") != NodeType.PROJECT.value:
            continue
        pair = (u, v) if (v, u) not in kept else (v, u)
        if pair not in kept or kind == EdgeType.MANAGER.value:
            kept[pair] = (u, v, kind, label)
        elif kind not in cards.UNLABELLED and kept[pair][2] not in cards.UNLABELLED and label not in kept[pair][3]:
            old = kept[pair]
            kept[pair] = (old[0], old[1], old[2], f"{old[3]}, {label}")
    return list(kept.values())


def _ranks(view: View, drawing: _Drawing) -> dict[str, int]:
    holders = {u for u, _, kind, _ in view.edges if kind == EdgeType.HAS_TASK.value}
    return {c: cards.rank(view.nodes[g], g in holders) for c, g in drawing.shows.items()}


def build(view: View, header: str = "", canvas_of: CanvasOf | None = None) -> Canvas:
    """A fresh canvas for ``view``: the cards laid out in layers (the workspace: a group per
    project), a legend of the colours and our header above, the links' sides chosen."""
    if view.kind == "workspace":
        nodes, drawing = _workspace(view, canvas_of)
    else:
        drawing = _Drawing()
        for nid in sorted(view.nodes, key=lambda n: (n != view.center, str(view.nodes[n].get("label", n)).lower())):
            drawing.add(node_id(nid), nid, view.nodes[nid])
        drawing.links = [(node_id(u), node_id(v), kind, label) for u, v, kind, label in _drawn(view)]
        places = drawing.layered(_ranks(view, drawing), node_id(view.center) if view.center else None)
        nodes = [drawing.faces[c].node(c, *places[c]) for c in drawing.faces]
    kinds = [k for k in cards.RANKS if any(f.kind is k for f in drawing.faces.values())]
    kinds += sorted({f.kind for f in drawing.faces.values()} - set(kinds), key=lambda k: k.value)
    nodes = _frame(view, header, kinds, nodes)
    boxes = {n["id"]: n for n in nodes}
    sides = routing.drawn_sides(boxes, [(u, v) for u, v, _, _ in drawing.links])
    edges = [_edge(u, v, kind, label, s) for (u, v, kind, label), s in zip(drawing.links, sides, strict=True)]
    return {"nodes": nodes, "edges": edges}


def _edge(u: str, v: str, kind: str, label: str, sides: tuple[str, str]) -> CanvasEdge:
    edge: CanvasEdge = {"id": _edge_id(u, v, label), "fromNode": u, "fromSide": sides[0], "toNode": v,
                        "toSide": sides[1], "toEnd": "arrow"}
    style = cards.edge_style(kind, label)
    if "label" in style:
        edge["label"] = style["label"]
    if "color" in style:
        edge["color"] = style["color"]
    return edge


def _frame(view: View, header: str, kinds: list[NodeType], nodes: list[CanvasNode]) -> list[CanvasNode]:
    """The header above the cards and the legend to their left, clear of every card."""
    left = min((n["x"] for n in nodes), default=0)
    top = min((n["y"] for n in nodes), default=0)
    head = cards.text_card(f"## {view.title}\n{header}".rstrip(), NodeType.NOTE,
                           HEADER_W)
    head_height = head.height
    placed = [cards.placed(MARKER, head.content, left, top - head_height - LEGEND_GAP, head.width, head_height)]
    y = top
    faces = cards.legend(kinds)
    widest = max((f.width for _, f in faces), default=0)
    for name, f in faces:
        placed.append(f.node(node_id("legend:" + name), left - LEGEND_GAP - widest, y))
        y += f.height + 10
    return placed + nodes


def _group_of(view: View) -> dict[str, str]:
    """Each task and project (and note holding tasks) -> the project whose group shows it."""
    projects = {n for n, d in view.nodes.items() if d.get("type") == NodeType.PROJECT.value}
    folders = {str(PurePosixPath(p).parent) + "/": p for p in projects if str(PurePosixPath(p).parent) != "Projects"}
    group = {p: p for p in projects}
    for nid, data in view.nodes.items():
        note = str(data.get("note", nid))
        home = next((p for f, p in folders.items() if note.startswith(f)), None)
        if home is not None and nid not in group:
            group[nid] = home
    for u, v, _, _ in view.edges:  # a task elsewhere that names a project, and the note holding it
        if view.nodes[u].get("type") == NodeType.TASK.value and v in projects and u not in group:
            group[u] = v
    for u, v, kind, _ in view.edges:
        if kind == EdgeType.HAS_TASK.value and u not in group and v in group:
            group[u] = group[v]
    for nid, data in view.nodes.items():
        if data.get("type") not in (NodeType.PERSON.value, NodeType.AGENT.value) and nid not in group:
            group[nid] = ELSEWHERE
    return group


def _workspace(view: View, canvas_of: CanvasOf | None) -> tuple[list[CanvasNode], _Drawing]:
    """A group per project (and one for tasks elsewhere), each laid out in layers; a person or agent
    working in several projects has a card in each, so no link runs between groups. Past
    ``WORKSPACE_MAX`` cards a group shows its project, its people and a link to its canvas."""
    brief = canvas_of is not None and len(view.nodes) > WORKSPACE_MAX
    members, links = _group_members(view, brief)
    drawing, x, y, row_h = _Drawing(), 0, 0, 0
    nodes: list[CanvasNode] = []
    for g in sorted(members, key=lambda g: (g == ELSEWHERE, str(view.nodes.get(g, {}).get("label", g)).lower())):
        part = _Drawing()
        for nid, cid in sorted(members[g].items(), key=lambda it: str(view.nodes[it[0]].get("label")).lower()):
            part.add(cid, nid, view.nodes[nid])
        part.links = [(a, b, kind, label) for gg, a, b, kind, label in links if gg == g]
        if brief and canvas_of is not None and g in view.nodes:
            _link_canvas(part, g, canvas_of(g))
        places = part.layered({**_ranks(view, part), **{c: 1 for c in part.faces if c not in part.shows}})
        width = max(p[0] + part.faces[c].width for c, p in places.items()) + 2 * PAD
        height = max(p[1] + part.faces[c].height for c, p in places.items()) + 2 * PAD
        if x and x + width > ROW_W:
            x, y, row_h = 0, y + row_h + GROUP_GAP, 0
        label = "tasks elsewhere" if g == ELSEWHERE else str(view.nodes[g].get("label", g))
        nodes.append({"id": node_id("group:" + g), "type": "group", "x": x, "y": y, "width": width,
                      "height": height, "label": label})
        nodes += [part.faces[c].node(c, x + PAD + p[0], y + PAD + p[1]) for c, p in places.items()]
        drawing.faces.update(part.faces)
        drawing.links += part.links
        x, row_h = x + width + GROUP_GAP, max(row_h, height)
    return nodes, drawing


def _group_members(view: View, brief: bool) -> tuple[dict[str, dict[str, str]], list[tuple[str, str, str, str, str]]]:
    """Each group's cards (graph id -> canvas id) and links (group, from card, to card, type, label)."""
    group = _group_of(view)
    holders = {u for u, _, kind, _ in view.edges if kind == EdgeType.HAS_TASK.value} - set(group.values())
    group = {n: g for n, g in group.items() if n not in holders}  # a task's card names its note
    members: dict[str, dict[str, str]] = {}  # group -> graph id -> canvas id
    for nid, g in group.items():
        if not brief or view.nodes[nid].get("type") == NodeType.PROJECT.value:
            members.setdefault(g, {})[nid] = node_id(f"{nid}\x00{g}")
    links = []
    for u, v, kind, label in _drawn(view):
        g = group.get(u, group.get(v, ""))
        if not g or g not in members or (brief and kind not in ("manager", "members")):
            continue
        for end in (u, v):
            if end not in members[g]:
                members[g][end] = node_id(f"{end}\x00{g}")
        links.append((g, members[g][u], members[g][v], kind, label))
    return members, links


def _link_canvas(part: _Drawing, project: str, rel: str) -> None:
    """A file card that opens the project's own canvas, linked from the project's card."""
    cid = node_id(f"canvas\x00{project}")
    part.faces[cid] = CardFace({"type": "file", "file": rel}, cards.FILE_W, cards.FILE_H, NodeType.NOTE)
    part.links.append((node_id(f"{project}\x00{project}"), cid, "canvas", "all its tasks"))


def is_ours(doc: Parsed) -> bool:
    return any(isinstance(n, dict) and n.get("id") == MARKER for n in doc.get("nodes") or [])


_PLACE = ("x", "y", "width", "height")


class Placement(TypedDict):
    """Where routine last put one of its cards, and whether the person had placed it (``placements``)."""

    place: list[int | None]  # x, y, width, height
    moved: bool


class Merged(TypedDict):
    """A canvas to write: our cards and lines laid over the person's own (kept as they were, checked
    by ``problems`` before writing), and the cards the person placed (popped before writing)."""

    nodes: list[CanvasNode | Parsed]
    edges: list[CanvasEdge | Parsed]
    moved: NotRequired[list[str]]


def merge(fresh: Canvas, existing: Parsed | None, last_written: dict[str, Placement] | None) -> Merged:
    """``fresh`` laid over the canvas on disk. ``last_written``: where each node was last time
    and whether the person had placed it (None when unknown: every place on disk is then taken
    as the person's). The result's ``moved`` lists the nodes the person placed (not written)."""
    if not existing:
        return {"nodes": [*fresh["nodes"]], "edges": [*fresh["edges"]], "moved": []}
    old = {n["id"]: n for n in existing.get("nodes") or [] if isinstance(n, dict) and "id" in n}
    nodes: list[CanvasNode] = []
    placed: dict[str, bool] = {}
    new: list[CanvasNode] = []
    for node in fresh["nodes"]:
        before = old.get(node["id"])
        if before is None or node["type"] == "group":
            nodes.append(node)
            new += [node] if before is None and node["type"] != "group" else []
            continue
        # Our card, with what the person added to it on their canvas (and their colour) kept.
        merged: CanvasNode = {**node, **{k: v for k, v in before.items() if k not in node or k == "color"}}
        place = [before.get(k) for k in _PLACE]
        last = (last_written or {}).get(node["id"])
        # Moved by the person: now (not where we put it), or at some earlier refresh.
        moved = last_written is None or last is None or last.get("moved") or last.get("place") != place
        ints = [v for v in place if isinstance(v, int) and not isinstance(v, bool)]
        if moved and len(ints) == len(_PLACE):
            merged["x"], merged["y"], merged["width"], merged["height"] = ints
            placed[node["id"]] = True
        nodes.append(merged)
    if set(placed) - {MARKER}:  # the person's places stand: a new card goes where it overlaps nothing and crosses least
        for node in new:
            _place_new(node, nodes, fresh["edges"])
    _fit_groups(nodes, fresh, placed)
    _resided(nodes, fresh["edges"])
    ours = {n["id"] for n in nodes}
    mine = [
        n
        for n in existing.get("nodes") or []
        if isinstance(n, dict)
        and not str(n.get("id", "")).startswith(PREFIX)
        and n.get("id") != MARKER
        and n.get("id") not in ours
    ]
    ids = ours | {n.get("id") for n in mine}
    old_edges = {e["id"]: e for e in existing.get("edges") or [] if isinstance(e, dict) and "id" in e}
    # Our lines, with what the person added to them kept; then the person's own lines, as they were.
    edges: list[CanvasEdge | Parsed] = [
        {**{k: v for k, v in old_edges.get(e.get("id"), {}).items() if k not in e}, **e} for e in fresh["edges"]]
    edges += [e for e in old_edges.values() if not str(e["id"]).startswith(PREFIX)
              and e.get("fromNode") in ids and e.get("toNode") in ids]
    return {"nodes": [*nodes, *mine], "edges": edges, "moved": sorted(placed)}


def _place_new(node: CanvasNode, nodes: list[CanvasNode], edges: list[CanvasEdge]) -> None:
    """Try the fresh place, then places beside it along its layer: the first that overlaps no card,
    with the fewest crossings of its links."""
    others = [n for n in nodes if n is not node and n["type"] != "group"]
    mine = [e for e in edges if node["id"] in (e["fromNode"], e["toNode"])]
    rest = [e for e in edges if e not in mine]
    step = node["width"] + layout.GAP_X
    best: tuple[int, int, int, int] | None = None
    for shift in sorted(range(-6, 7), key=abs):
        spot: CanvasNode = {**node, "x": node["x"] + shift * step}
        overlaps = sum(1 for n in others if routing.overlaps(spot, n))
        crossing = legibility.crossings({"nodes": [*others, spot], "edges": mine + rest}) if not overlaps else 0
        cost = (overlaps, crossing, abs(shift), spot["x"])
        if best is None or cost < best:
            best = cost
    assert best is not None
    node["x"] = best[3]


def _resided(nodes: list[CanvasNode], edges: list[CanvasEdge]) -> None:
    """Our links' sides chosen again for where the cards are now (the person may have moved some)."""
    boxes = {n["id"]: n for n in nodes}
    ours = [e for e in edges if e["fromNode"] in boxes and e["toNode"] in boxes]
    for edge, (a, b) in zip(ours, routing.drawn_sides(boxes, [(e["fromNode"], e["toNode"]) for e in ours]),
                            strict=True):
        edge["fromSide"], edge["toSide"] = a, b


def _fit_groups(nodes: list[CanvasNode], fresh: Canvas, moved: Mapping[str, bool]) -> None:
    """A group keeps around the members the person did not move away."""
    laid = {n["id"]: n for n in fresh["nodes"]}
    for group in (n for n in nodes if n["type"] == "group"):
        inside = [n for n in nodes if n["type"] != "group" and n["id"] not in moved and n["id"] != MARKER
                  and _within(laid[n["id"]], group)]
        if not inside:
            continue
        left = min(n["x"] for n in inside) - PAD
        top = min(n["y"] for n in inside) - PAD
        group["width"] = max(n["x"] + n["width"] for n in inside) + PAD - left
        group["height"] = max(n["y"] + n["height"] for n in inside) + PAD - top
        group["x"], group["y"] = left, top


def _within(node: CanvasNode, group: CanvasNode) -> bool:
    return (group["x"] <= node["x"] < group["x"] + group["width"]) and (
        group["y"] <= node["y"] < group["y"] + group["height"]
    )


def placements(doc: Merged, moved: list[str]) -> dict[str, Placement]:
    """Where each of our nodes is and whether the person placed it: what ``merge`` compares
    with next time."""
    return {n["id"]: {"place": [n.get("x"), n.get("y"), n.get("width"), n.get("height")], "moved": n["id"] in moved}
            for n in doc["nodes"]
            if str(n["id"]).startswith(PREFIX) and n["type"] != "group"}


def problems(doc: object) -> list[str]:
    """What breaks the JSON Canvas 1.0 rules: required fields and their types, unique ids, known
    node types, sides and ends, and edges between nodes that exist. Empty when valid."""
    found: list[str] = []
    if not isinstance(doc, dict):
        return ["the canvas is not a JSON object"]
    nodes, edges = doc.get("nodes", []), doc.get("edges", [])
    if not isinstance(nodes, list) or not isinstance(edges, list):
        return ["nodes and edges must be arrays"]
    ids: set[str] = set()
    for i, node in enumerate(nodes):
        where = f"nodes[{i}]"
        if not isinstance(node, dict) or not isinstance(node.get("id"), str) or not node["id"]:
            found.append(f"{where} has no string id")
            continue
        if node["id"] in ids:
            found.append(f"{where}: id {node['id']} is not unique")
        ids.add(node["id"])
        if node.get("type") not in NODE_KINDS:
            found.append(f"{where}: unknown type {node.get('type')!r}")
            continue
        for key in _PLACE:
            if not isinstance(node.get(key), int) or isinstance(node.get(key), bool):
                found.append(f"{where}: {key} must be an integer")
        needed = NODE_KINDS[node["type"]]
        if needed and not isinstance(node.get(needed), str):
            found.append(f"{where}: a {node['type']} node needs the string {needed!r}")
        if "subpath" in node and not str(node["subpath"]).startswith("#"):
            found.append(f"{where}: subpath must start with '#'")
    node_ids = {n.get("id") for n in nodes if isinstance(n, dict)}
    for i, edge in enumerate(edges):
        where = f"edges[{i}]"
        if not isinstance(edge, dict) or not isinstance(edge.get("id"), str) or not edge["id"]:
            found.append(f"{where} has no string id")
            continue
        if edge["id"] in ids:
            found.append(f"{where}: id {edge['id']} is not unique")
        ids.add(edge["id"])
        for end in ("fromNode", "toNode"):
            if edge.get(end) not in node_ids:
                found.append(f"{where}: {end} {edge.get(end)!r} is not a node of this canvas")
        for side in ("fromSide", "toSide"):
            if side in edge and edge[side] not in SIDES:
                found.append(f"{where}: {side} must be one of {sorted(SIDES)}")
        for end in ("fromEnd", "toEnd"):
            if end in edge and edge[end] not in ENDS:
                found.append(f"{where}: {end} must be 'none' or 'arrow'")
    return found
