"""A view as a JSON Canvas 1.0 document (Obsidian's ``.canvas``): file nodes that open the
notes, text nodes for task lines and key results, grouped by type, edges labelled by type.

Our node and edge ids start with ``rt``; the header text node ``routine-graph`` marks a canvas
as ours. ``merge`` lays a fresh view over the canvas on disk: a node the person moved (or
resized) keeps its place, anything the person added stays, colours they chose stay.
"""

from __future__ import annotations

import hashlib
import math

from routine.graph.model import NodeType
from routine.graph.views import View

MARKER = "routine-graph"
PREFIX = "rt"
NODE_W, NODE_H, GAP, PAD, GROUP_GAP, MAX_ROWS = 300, 90, 30, 40, 120, 12
HEADER_H = 140
TYPE_ORDER = [NodeType.PROJECT, NodeType.OKRS, NodeType.OBJECTIVE, NodeType.KEY_RESULT, NodeType.TASK,
              NodeType.ARTIFACT, NodeType.DECISION, NodeType.AGENT, NodeType.PERSON, NodeType.CHAT,
              NodeType.DAILY, NodeType.WEEKLY, NodeType.NOTE]
COLORS = {NodeType.PROJECT: "6", NodeType.TASK: "4", NodeType.AGENT: "5", NodeType.PERSON: "3",
          NodeType.ARTIFACT: "2", NodeType.KEY_RESULT: "1", NodeType.OBJECTIVE: "1", NodeType.DECISION: "2"}
GROUP_NAMES = {NodeType.KEY_RESULT: "key results", NodeType.OKRS: "OKRs", NodeType.PERSON: "people",
               NodeType.DAILY: "daily notes", NodeType.WEEKLY: "weekly notes"}
SIDES = {"top", "right", "bottom", "left"}
ENDS = {"none", "arrow"}
NODE_KINDS = {"text": "text", "file": "file", "link": "url", "group": None}


def node_id(graph_id: str) -> str:
    return PREFIX + hashlib.sha1(graph_id.encode("utf-8")).hexdigest()[:14]


def _edge_id(u: str, v: str, label: str) -> str:
    return PREFIX + hashlib.sha1(f"{u}\x00{v}\x00{label}".encode()).hexdigest()[:14]


def _group_name(kind: NodeType) -> str:
    return GROUP_NAMES.get(kind, kind.value.replace("_", " ") + "s")


def _content(graph_id: str, data: dict) -> dict:
    """A file node for a note, a text node for a task line or a key result inside one."""
    if "#" not in graph_id:
        return {"type": "file", "file": graph_id}
    note = data.get("note", graph_id.split("#", 1)[0])
    link = f"[[{note.removesuffix('.md')}|{note.rsplit('/', 1)[-1].removesuffix('.md')}]]"
    if data.get("type") == NodeType.TASK.value:
        box = "x" if data.get("done") == "true" else " "
        due = f" 📅 {data['due']}" if data.get("due") else ""
        return {"type": "text", "text": f"- [{box}] {data.get('text') or data.get('label')}{due}\n\nin {link}"}
    return {"type": "text", "text": f"**{data.get('label', graph_id)}**\n\nin {link}"}


def build(view: View, header: str = "") -> dict:
    """A fresh canvas for ``view``: one group per node type, left to right, nodes in a grid."""
    by_type: dict[NodeType, list[str]] = {}
    for nid, data in view.nodes.items():
        by_type.setdefault(NodeType.of(data.get("type")) or NodeType.NOTE, []).append(nid)
    groups, members, x = [], [], 0
    for kind in [k for k in TYPE_ORDER if k in by_type]:
        ids = sorted(by_type[kind], key=lambda n: (n != view.center, str(view.nodes[n].get("label", n)).lower(), n))
        cols = max(1, math.ceil(len(ids) / MAX_ROWS))
        rows = math.ceil(len(ids) / cols)
        width = cols * (NODE_W + GAP) - GAP + 2 * PAD
        height = rows * (NODE_H + GAP) - GAP + 2 * PAD
        groups.append({"id": node_id("group:" + kind.value), "type": "group", "x": x, "y": 0, "width": width,
                       "height": height, "label": f"{_group_name(kind)} ({len(ids)})"})
        for i, nid in enumerate(ids):
            col, row = divmod(i, rows)
            node = {"id": node_id(nid), **_content(nid, view.nodes[nid]), "x": x + PAD + col * (NODE_W + GAP),
                    "y": PAD + row * (NODE_H + GAP), "width": NODE_W, "height": NODE_H}
            if kind in COLORS:
                node["color"] = COLORS[kind]
            members.append(node)
        x += width + GROUP_GAP
    head = {"id": MARKER, "type": "text", "x": 0, "y": -HEADER_H - GAP, "width": max(600, min(x, 1200)),
            "height": HEADER_H, "text": f"## {view.title}\n{header}".rstrip()}
    edges = [{"id": _edge_id(u, v, label), "fromNode": node_id(u), "toNode": node_id(v), "toEnd": "arrow",
              "label": label} for u, v, _, label in view.edges]
    return {"nodes": groups + [head] + members, "edges": edges}


def is_ours(doc: dict) -> bool:
    return any(isinstance(n, dict) and n.get("id") == MARKER for n in doc.get("nodes") or [])


_PLACE = ("x", "y", "width", "height")


def merge(fresh: dict, existing: dict | None, last_written: dict[str, dict] | None) -> dict:
    """``fresh`` laid over the canvas on disk. ``last_written``: where each node was last time
    and whether the person had placed it (None when unknown: every place on disk is then taken
    as the person's). The result's ``moved`` lists the nodes the person placed (not written)."""
    if not existing:
        return {**fresh, "moved": []}
    old = {n["id"]: n for n in existing.get("nodes") or [] if isinstance(n, dict) and "id" in n}
    nodes, placed = [], {}
    for node in fresh["nodes"]:
        before = old.get(node["id"])
        if before is None or node["type"] == "group":
            nodes.append(node)
            continue
        merged = dict(node)
        merged.update({k: v for k, v in before.items() if k not in node or k == "color"})
        place = [before.get(k) for k in _PLACE]
        last = (last_written or {}).get(node["id"])
        # Moved by the person: now (not where we put it), or at some earlier refresh.
        moved = last_written is None or last is None or last.get("moved") or last.get("place") != place
        if moved and all(isinstance(v, int) and not isinstance(v, bool) for v in place):
            merged.update(dict(zip(_PLACE, place)))
            placed[node["id"]] = True
        nodes.append(merged)
    _fit_groups(nodes, fresh, placed)
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
    edges = [{**{k: v for k, v in old_edges.get(e["id"], {}).items() if k not in e}, **e} for e in fresh["edges"]]
    edges += [e for e in old_edges.values() if not str(e["id"]).startswith(PREFIX)
              and e.get("fromNode") in ids and e.get("toNode") in ids]
    return {"nodes": nodes + mine, "edges": edges, "moved": sorted(placed)}


def _fit_groups(nodes: list[dict], fresh: dict, moved: dict) -> None:
    """A group keeps around the members the person did not move away."""
    laid = {n["id"]: n for n in fresh["nodes"]}
    for group in (n for n in nodes if n["type"] == "group"):
        inside = [n for n in nodes if n["type"] != "group" and n["id"] not in moved and n["id"] != MARKER
                  and _within(laid[n["id"]], group)]
        if not inside:
            continue
        left = min(n["x"] for n in inside) - PAD
        top = min(n["y"] for n in inside) - PAD
        group.update(x=left, y=top, width=max(n["x"] + n["width"] for n in inside) + PAD - left,
                     height=max(n["y"] + n["height"] for n in inside) + PAD - top)


def _within(node: dict, group: dict) -> bool:
    return (group["x"] <= node["x"] < group["x"] + group["width"]) and (
        group["y"] <= node["y"] < group["y"] + group["height"]
    )


def placements(doc: dict, moved: list[str]) -> dict[str, dict]:
    """Where each of our nodes is and whether the person placed it: what ``merge`` compares
    with next time."""
    return {n["id"]: {"place": [n.get(k) for k in _PLACE], "moved": n["id"] in moved} for n in doc["nodes"]
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
