"""The three kinds of views (project, agent, workspace) and the queries: neighbours and paths.

A view is a set of nodes and the edges among them. Queries take ``visible``, a test on a node's
holding note (an agent's read scope): a node it fails is neither returned nor walked through.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from routine.errors import UsageError
from routine.graph.graph import KnowledgeGraph
from routine.graph.model import EdgeType, NodeType
from routine.jsonvalue import JSONObject
from routine.vault.scope import in_scope

if TYPE_CHECKING:
    from networkx import MultiDiGraph

Visible = Callable[[str], bool]  # a node id -> may it be shown


class ViewKind:
    PROJECT = "project"
    AGENT = "agent"
    WORKSPACE = "workspace"
    ALL = (PROJECT, AGENT, WORKSPACE)


@dataclass
class View:
    kind: str
    name: str
    title: str
    center: str | None
    nodes: dict[str, dict[str, str]]              # id -> attributes (type, label, note…)
    edges: list[tuple[str, str, str, str]] = field(default_factory=list)  # (from, to, type, label)

    def as_dict(self) -> JSONObject:
        """node-link JSON, as networkx's node_link_data writes it, with the view's name."""
        return {"view": self.kind, "name": self.name, "title": self.title, "center": self.center,
                "nodes": [{"id": n, **d} for n, d in sorted(self.nodes.items())],
                "edges": [{"source": u, "target": v, "type": t, "label": lab} for u, v, t, lab in self.edges]}


def scope_test(reads: list[str] | None, graph: KnowledgeGraph) -> Visible:
    """Visible when the note holding the node is in ``reads`` (None: everything)."""
    if reads is None:
        return lambda node: True

    globs = list(reads)
    return lambda node: in_scope(globs, graph.g.nodes[node].get("note", node))


def _view(graph: KnowledgeGraph, kind: str, name: str, title: str, center: str | None, ids: set[str]) -> View:
    g = graph.g
    nodes = {n: dict(g.nodes[n]) for n in sorted(ids) if n in g}
    edges = sorted({(u, v, d["type"], d["label"]) for u, v, d in g.subgraph(nodes).edges(data=True)})
    return View(kind, name, title, center, nodes, edges)


def _of_type(graph: KnowledgeGraph, kind: NodeType) -> list[str]:
    return sorted(n for n, t in graph.g.nodes(data="type") if t == kind.value)


def _named(graph: KnowledgeGraph, kind: NodeType, name: str) -> str:
    candidates = _of_type(graph, kind)
    wanted = name.strip().removeprefix("[[").removesuffix("]]").lower()
    for node in candidates:
        data = graph.g.nodes[node]
        if wanted in (node.lower(), node.lower().removesuffix(".md"), str(data.get("label", "")).lower(),
                      str(data.get("agent", "")).lower()):
            return node
    known = ", ".join(graph.g.nodes[n]["label"] for n in candidates) or "none yet"
    raise UsageError(
        f"There is no {kind.value} named {name!r} in the vault's graph (known: {known}).",
        f"use one of those names; give the note `type: {kind.value}` (or put it in its folder) to make it one.",
    )


def project_view(graph: KnowledgeGraph, name: str) -> View:
    """The case file: the project's folder with its tasks, members, manager, the artifacts and
    what they derive from, and the key results it serves."""
    with graph.lock:
        g = graph.g
        center = _named(graph, NodeType.PROJECT, name)
        folder = str(PurePosixPath(center).parent) + "/"
        case = {n for n, note in g.nodes(data="note") if note == center or
                (folder != "Projects/" and str(note).startswith(folder))}
        ids = set(case)
        for node in case:
            for _, target, kind in g.out_edges(node, data="type"):
                if kind != EdgeType.LINKS_TO.value or node == center:
                    ids.add(target)
        for source, _, _kind in g.in_edges(center, data="type"):  # tasks and artifacts elsewhere naming it
            if g.nodes[source].get("type") in (NodeType.TASK.value, NodeType.ARTIFACT.value):
                ids.add(source)
        _follow(g, ids, {EdgeType.DERIVED_FROM.value, EdgeType.PART_OF.value, EdgeType.ASSIGNED_TO.value}, hops=2)
        return _view(graph, ViewKind.PROJECT, name, f"Project {g.nodes[center]['label']}", center, ids)


def agent_view(graph: KnowledgeGraph, name: str) -> View:
    """An agent: its grounding, what it is assigned, the projects it serves, what it read and
    wrote lately (from the run journal)."""
    with graph.lock:
        g = graph.g
        center = _named(graph, NodeType.AGENT, name)
        ids = {center}
        ids.update(target for _, target in g.out_edges(center))
        for source, _, kind in g.in_edges(center, data="type"):
            if kind != EdgeType.LINKS_TO.value:
                ids.add(source)
                if g.nodes[source].get("type") == NodeType.TASK.value:
                    ids.add(g.nodes[source]["note"])
        return _view(graph, ViewKind.AGENT, name, f"Agent {g.nodes[center]['label']}", center, ids)


def workspace_view(graph: KnowledgeGraph, name: str = "") -> View:
    """Every project and every task, with who manages, works on and is assigned what."""
    with graph.lock:
        g = graph.g
        ids = set(_of_type(graph, NodeType.PROJECT)) | set(_of_type(graph, NodeType.TASK))
        for node in list(ids):
            data = g.nodes[node]
            if data.get("type") == NodeType.TASK.value:
                ids.add(data["note"])
            for _, target, kind in g.out_edges(node, data="type"):
                if kind in (EdgeType.ASSIGNED_TO.value, EdgeType.MANAGER.value, EdgeType.MEMBERS.value):
                    ids.add(target)
        return _view(graph, ViewKind.WORKSPACE, "workspace", "Workspace", None, ids)


def view(graph: KnowledgeGraph, kind: str, name: str) -> View:
    return {ViewKind.PROJECT: project_view, ViewKind.AGENT: agent_view, ViewKind.WORKSPACE: workspace_view}[kind](
        graph, name
    )


def _follow(g: MultiDiGraph, ids: set[str], kinds: set[str], hops: int) -> None:
    frontier = set(ids)
    for _ in range(hops):
        step = {t for n in frontier for _, t, k in g.out_edges(n, data="type") if k in kinds} - ids
        ids |= step
        frontier = step


# --- queries -------------------------------------------------------------------------------------


def neighbors(graph: KnowledgeGraph, node: str, depth: int = 1, types: set[str] | None = None,
              visible: Visible | None = None) -> View:
    """Nodes within ``depth`` links of ``node`` (either direction), walking only through
    visible nodes and, with ``types``, only along edges of those types."""
    visible = visible or (lambda n: True)
    with graph.lock:
        g = graph.g
        if node not in g or not visible(node):
            return View("neighbors", node, f"Around {node}", node, {})
        seen, frontier = {node}, {node}
        for _ in range(max(0, depth)):
            step = set()
            for n in frontier:
                for u, v, kind in list(g.out_edges(n, data="type")) + list(g.in_edges(n, data="type")):
                    other = v if u == n else u
                    if other not in seen and (types is None or kind in types) and visible(other):
                        step.add(other)
            seen |= step
            frontier = step
        result = _view(graph, "neighbors", node, f"Around {g.nodes[node].get('label', node)}", node, seen)
        if types is not None:
            result.edges = [e for e in result.edges if e[2] in types]
        return result


def path(graph: KnowledgeGraph, a: str, b: str, visible: Visible | None = None) -> list[tuple[str, str, str]]:
    """The shortest chain of links from a to b, either direction: [(node, edge type, next node)…]."""
    import networkx as nx

    visible = visible or (lambda n: True)
    with graph.lock:
        g = graph.g
        shown = g.subgraph([n for n in g if visible(n)])
        try:
            chain = nx.shortest_path(shown.to_undirected(as_view=True), a, b)
        except (nx.NetworkXNoPath, nx.NodeNotFound):
            return []
        steps = []
        for u, v in itertools.pairwise(chain):
            data = g.get_edge_data(u, v) or g.get_edge_data(v, u)
            label = min(d["label"] for d in data.values())
            steps.append((u, label if g.has_edge(u, v) else f"{label} (from)", v))
        return steps
