"""A compact typed neighbourhood for an agent: what a step's ``graph:`` key puts in its context
and what the ``graph_neighbors`` tool answers. Only nodes in the agent's read scope appear,
and the walk never passes through one it may not read."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from routine.errors import ScopeError
from routine.graph.service import graph_for
from routine.graph.views import neighbors, scope_test
from routine.templating import Variables, render
from routine.vault.context_items import ContextItem, Priority
from routine.vault.outline import Section

if TYPE_CHECKING:
    from routine.config.model import AgentSpec, Config, GraphSpec
    from routine.graph.graph import KnowledgeGraph
    from routine.graph.views import View

MAX_LINES = 60


def _name(node: str, data: Mapping[str, str]) -> str:
    if data.get("type") == "task":
        box = "x" if data.get("done") == "true" else " "
        return f"task [{box}] “{data.get('text') or data.get('label')}” in [[{data['note'].removesuffix('.md')}]]"
    if "#" in node:
        kind = data.get('type', 'heading').replace('_', ' ')
        return f"{kind} “{data.get('label')}” in [[{data['note'].removesuffix('.md')}]]"
    return f"[[{node.removesuffix('.md')}]] ({data.get('type', 'note')})"


def describe(shown: View) -> str:
    """One line per typed link: "[[Projects/Alpha/Alpha]] (project) —members→ [[People/Ada]] (person)"."""
    lines = [f"{_name(u, shown.nodes[u])} —{label}→ {_name(v, shown.nodes[v])}" for u, v, _, label in shown.edges]
    alone = [n for n in shown.nodes if not any(n in (u, v) for u, v, _, _ in shown.edges)]
    lines += [_name(n, shown.nodes[n]) for n in alone if n != shown.center or not shown.edges]
    if len(lines) > MAX_LINES:
        lines = lines[:MAX_LINES] + [f"(… {len(lines) - MAX_LINES} more links not shown)"]
    return "\n".join(lines)


def neighbourhood(graph: KnowledgeGraph, agent: AgentSpec, around: str, depth: int = 1,
                  link_types: set[str] | None = None) -> View | None:
    """The scope-checked neighbourhood of ``around`` for ``agent`` (an AgentSpec): a View, or
    ScopeError when the note itself is not one the agent may read, or None if there is no such note."""
    node = graph.find(around)
    if node is None:
        return None
    visible = scope_test(list(agent.reads), graph)
    if not visible(node):
        note = graph.g.nodes[node].get("note", node)
        raise ScopeError(
            f"{agent.name} may not read {note}: outside its reads scope ({', '.join(agent.reads) or 'none'}).",
            f"add a matching glob to `reads:` in {agent.source}, or point `graph: around:` at a note it may read.",
        )
    return neighbors(graph, node, depth, link_types, visible)


def graph_items(config: Config, agent: AgentSpec, spec: GraphSpec, variables: Variables, where: str,
                order: int) -> list[ContextItem]:
    """A step's ``graph: {around: NOTE, depth: N}`` as one piece of context (kept after the step's
    inputs, before search hits, under the token budget)."""
    around = render(spec.around, variables, f"{where}, graph.around").strip()
    shown = neighbourhood(graph_for(config), agent, around, spec.depth)
    if shown is None:
        text = f"(no note {around!r} in the vault's graph yet)"
        return [ContextItem(f"Knowledge graph around {around}", Priority.OLDER, [Section(None, 0, text)], None, order)]
    body = describe(shown) or "(no typed links you may see)"
    center = shown.center or around  # a neighbourhood always has its center
    return [ContextItem(f"Knowledge graph around [[{center.removesuffix('.md')}]] (typed links)", Priority.OLDER,
                        [Section(None, 0, body)], None, order)]
