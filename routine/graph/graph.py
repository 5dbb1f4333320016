"""The typed graph in memory (a networkx MultiDiGraph), kept current one note at a time.

Each note's facts (``extract``) own its node, its task and heading nodes and the edges out of
them. Replacing a note's facts re-links only those; a note that appears or goes re-links, from
their stored facts and without reading them again, the notes whose links name it. Edges from
the run journal (``read``, ``wrote``) are kept apart and re-linked as a set.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from routine.graph.model import NodeType, NoteFacts
from routine.jsonvalue import JSONObject

JOURNAL = "journal"  # the ``via`` of edges that come from the run journal


def _stem_key(target: str) -> str:
    base = target.split("#", 1)[0].strip().lower().removesuffix(".md")
    return base.rsplit("/", 1)[-1]


@dataclass
class Touched:
    """What changed in the graph: nodes added, removed or with new data; edges (from, to, type)
    added or removed. A view that none of it reaches is unchanged."""

    nodes: set[str] = field(default_factory=set)
    edges: set[tuple[str, str, str]] = field(default_factory=set)


class KnowledgeGraph:
    def __init__(self) -> None:
        import networkx as nx

        self.g = nx.MultiDiGraph()
        self.facts: dict[str, NoteFacts] = {}
        self.runs: dict[tuple[str, str, str], str] = {}  # (agent, note path, read|wrote) -> last seen (ISO)
        self.lock = threading.RLock()
        self._by_name: dict[str, set[str]] = {}      # lower-case note name -> paths
        self._by_path: dict[str, str] = {}           # lower-case path without .md -> path
        self._naming: dict[str, set[str]] = {}       # lower-case name a link targets -> notes with that link
        self._journal_edges: list[tuple[str, str, str]] = []
        # What changed since take_touched(): nodes (added, removed, new data) and edges (u, v, type);
        # None: everything (a load).
        self._touched: Touched | None = None

    # --- changing it ---------------------------------------------------------------------------

    def set_note(self, facts: NoteFacts) -> None:
        """Put (or replace) one note's facts; only its own edges, and links naming it, re-link."""
        with self.lock:
            rel = facts.rel
            new = rel not in self.facts
            inner_before = set() if new else {n.id for n in self.facts[rel].nodes}
            # Links from other notes into this note's headings: kept across the re-read.
            kept = [(u, v, k, d) for n in inner_before - {rel} if n in self.g
                    for u, v, k, d in self.g.in_edges(n, keys=True, data=True) if d.get("via") != rel]
            if not new:
                self._unlink(self.facts[rel])
                self._forget_links(self.facts[rel])
            self.facts[rel] = facts
            for target in {e.target for e in facts.edges}:
                self._naming.setdefault(_stem_key(target), set()).add(rel)
            if new:
                self._register(rel)
            self._link(facts)
            for u, v, k, d in kept:
                if u in self.g and v in self.g:
                    self.g.add_edge(u, v, key=k, **d)
            # Links into this note resolve again: to it (new), or to its new headings and tasks.
            if new or inner_before != {n.id for n in facts.nodes}:
                self._relink_naming(rel, skip=rel)
            if new:
                self._link_runs()

    def load(self, many: list[NoteFacts]) -> None:
        """Many new notes at once (start-up, a first build): every edge is linked once at the end."""
        with self.lock:
            for facts in many:
                if facts.rel in self.facts:
                    self._unlink(self.facts[facts.rel])
                    self._forget_links(self.facts[facts.rel])
                else:
                    self._register(facts.rel)
                self.facts[facts.rel] = facts
                for target in {e.target for e in facts.edges}:
                    self._naming.setdefault(_stem_key(target), set()).add(facts.rel)
                self._put_nodes(facts)
            self.g.remove_edges_from(list(self.g.edges(keys=True)))
            self._journal_edges = []
            for facts in self.facts.values():
                self._add_edges(facts)
            self._link_runs()
            self._touched = None

    def remove_note(self, rel: str) -> None:
        with self.lock:
            facts = self.facts.pop(rel, None)
            if facts is None:
                return
            self._unlink(facts)
            self._forget_links(facts)
            if rel in self.g:
                self._touch_removal(rel)
                self.g.remove_node(rel)
            self._unregister(rel)
            self._relink_naming(rel, skip=rel)
            self._link_runs()

    def set_runs(self, runs: dict[tuple[str, str, str], str]) -> None:
        """The journal's read and wrote edges (agent name, note path, kind) -> last time."""
        with self.lock:
            self.runs = dict(runs)
            self._link_runs()

    # --- resolving links -------------------------------------------------------------------------

    def resolve(self, target: str) -> str | None:
        """The node a wikilink target names: a heading or task node inside a note where one is
        named ("OKRs#KR 1.1"), else the note, as Obsidian resolves it; None if no note matches."""
        base, _, heading = target.partition("#")
        rel = self._resolve_base(base.strip())
        heading = heading.strip().lower()
        if rel and heading and rel in self.facts:
            # "[[OKRs#KR 1.1]]" names the heading "KR 1.1: Ten paying clients" too.
            for node in self.facts[rel].nodes[1:]:
                name = node.id.split("#", 1)[1].lower()
                if name == heading or (name.startswith(heading) and name[len(heading)] in " :—-–."):
                    return node.id
        return rel

    def _resolve_base(self, base: str) -> str | None:
        low = base.strip().lower().removesuffix(".md")
        if not low:
            return None
        if "/" in low:
            if low in self._by_path:
                return self._by_path[low]
            candidates = [r for r in self._by_name.get(low.rsplit("/", 1)[1], ())
                          if r.lower().removesuffix(".md").endswith("/" + low)]
        else:
            candidates = list(self._by_name.get(low, ()))
        if not candidates:
            return None
        return min(candidates, key=lambda r: (r.count("/"), len(r), r))

    def _register(self, rel: str) -> None:
        self._by_name.setdefault(PurePosixPath(rel).stem.lower(), set()).add(rel)
        self._by_path[rel.lower().removesuffix(".md")] = rel

    def _unregister(self, rel: str) -> None:
        names = self._by_name.get(PurePosixPath(rel).stem.lower())
        if names is not None:
            names.discard(rel)
        self._by_path.pop(rel.lower().removesuffix(".md"), None)

    def _forget_links(self, facts: NoteFacts) -> None:
        for target in {e.target for e in facts.edges}:
            sources = self._naming.get(_stem_key(target))
            if sources is not None:
                sources.discard(facts.rel)

    # --- linking ----------------------------------------------------------------------------------

    def _link(self, facts: NoteFacts) -> None:
        self._put_nodes(facts)
        self._add_edges(facts)

    def _touch_edges(self, edges: Iterable[tuple[str, str, str]]) -> None:
        if self._touched is not None:
            self._touched.edges.update(edges)

    def _touch_removal(self, node: str) -> None:
        if self._touched is not None:
            self._touched.nodes.add(node)
            self._touch_edges((u, v, t) for u, v, t in self.g.in_edges(node, data="type"))
            self._touch_edges((u, v, t) for u, v, t in self.g.out_edges(node, data="type"))

    def take_touched(self) -> Touched | None:
        """What changed since the last call (None: everything, after a load): which views may
        have changed."""
        with self.lock:
            touched, self._touched = self._touched, Touched()
            return touched

    def _put_nodes(self, facts: NoteFacts) -> None:
        for node in facts.nodes:
            data = {"type": node.type.value, "label": node.label, "note": facts.rel, **node.attrs}
            if node.id in self.g:
                if self.g.nodes[node.id] == data:
                    continue
                self.g.nodes[node.id].clear()  # a property the person removed goes from the node too
            self.g.add_node(node.id, **data)
            if self._touched is not None:
                self._touched.nodes.add(node.id)

    def _unlink(self, facts: NoteFacts) -> None:
        """Remove what a note's facts put in: its inner nodes, and every edge they made."""
        rel = facts.rel
        for node in facts.nodes:
            if node.id == rel:
                if rel in self.g:
                    mine = [(u, v, k) for u, v, k, via in self.g.out_edges(rel, keys=True, data="via") if via == rel]
                    self._touch_edges((u, v, self.g.edges[u, v, k]["type"]) for u, v, k in mine)
                    self.g.remove_edges_from(mine)
            elif node.id in self.g:
                self._touch_removal(node.id)
                self.g.remove_node(node.id)

    def _relink_naming(self, rel: str, skip: str) -> None:
        for source in sorted(self._naming.get(PurePosixPath(rel).stem.lower(), ())):
            if source != skip and source in self.facts:
                self._relink_edges(self.facts[source])

    def _relink_edges(self, facts: NoteFacts) -> None:
        """A note's edges again from its stored facts (its nodes stay): no reading, no parsing."""
        ids = {n.id for n in facts.nodes}
        mine = [(u, v, k) for u, v, k, via in self.g.out_edges(list(ids & set(self.g)), keys=True, data="via")
                if via == facts.rel]
        self._touch_edges((u, v, self.g.edges[u, v, k]["type"]) for u, v, k in mine)
        self.g.remove_edges_from(mine)
        self._add_edges(facts)

    def _add_edges(self, facts: NoteFacts) -> None:
        for edge in facts.edges:
            # A note's own task and heading nodes are named by id, not by a wikilink.
            target = edge.target if edge.target.startswith(facts.rel + "#") else self.resolve(edge.target)
            if target is None or target == edge.source or target not in self.g or edge.source not in self.g:
                continue  # a link to nowhere (yet), or a note's link to itself
            self.g.add_edge(edge.source, target, key=f"{edge.type.value}:{edge.label}", type=edge.type.value,
                            label=edge.label, via=facts.rel)
            self._touch_edges([(edge.source, target, edge.type.value)])

    def _link_runs(self) -> None:
        before = set(self._journal_edges)
        self.g.remove_edges_from([e for e in self._journal_edges if self.g.has_edge(*e)])
        self._journal_edges = []
        for (agent, rel, kind), at in sorted(self.runs.items()):
            source = self.agent_node(agent)
            if source is None or rel not in self.g:
                continue
            key = f"{kind}:{kind}"
            self.g.add_edge(source, rel, key=key, type=kind, label=kind, via=JOURNAL, at=at)
            self._journal_edges.append((source, rel, key))
        self._touch_edges((u, v, k.split(":", 1)[0]) for u, v, k in before.symmetric_difference(self._journal_edges))

    # --- asking it -----------------------------------------------------------------------------

    def agent_node(self, name: str) -> str | None:
        """The note of the agent a run names (``builder`` → Agents/Builder.md)."""
        for rel in sorted(self._by_name.get(name.strip().lower(), ())):
            if self.g.nodes.get(rel, {}).get("type") == NodeType.AGENT.value:
                return rel
        for rel, data in self.g.nodes(data=True):  # an agent note named differently from its `agent:`
            if data.get("type") == NodeType.AGENT.value and str(data.get("agent", "")).lower() == name.lower():
                return str(rel)
        return None

    def find(self, name: str) -> str | None:
        """A node from what a person types: a path, a wikilink, a note's name, a task id."""
        text = name.strip().removeprefix("[[").removesuffix("]]").split("|")[0].strip()
        with self.lock:
            if text in self.g:
                return text
            if text + ".md" in self.g:
                return text + ".md"
            return self.resolve(text)

    def snapshot(self) -> JSONObject:
        """Nodes and edges in a fixed order: two graphs are the same iff their snapshots are."""
        with self.lock:
            nodes = sorted((n, sorted(d.items())) for n, d in self.g.nodes(data=True))
            edges = sorted(
                (u, v, k, d.get("type"), d.get("label")) for u, v, k, d in self.g.edges(keys=True, data=True)
            )
        return {"nodes": nodes, "edges": edges}

