"""`routine graph show|neighbors|path`: the knowledge graph, from its cache in the state dir
(brought level with the vault and the run journal first: only changed notes are read)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from routine.access import resolve
from routine.config.loader import agent_named, load_agents, load_config
from routine.errors import UsageError
from routine.graph.cache import open_current
from routine.graph.views import ViewKind, neighbors, path, scope_test, view
from routine.terminal.output import print_json

if TYPE_CHECKING:
    from routine.config.model import Config
    from routine.graph.graph import KnowledgeGraph
    from routine.graph.views import View, Visible


def run(args: argparse.Namespace) -> int:
    command = getattr(args, "graph_command", None)
    if command is None:
        raise UsageError("Say what to show.", "try `routine graph show workspace`, `routine graph neighbors NOTE` "
                         "or `routine graph path A B`.")
    config = load_config(args.config)

    cache = open_current(config)
    try:
        return {"show": _show, "neighbors": _neighbors, "path": _path}[command](args, config, cache.graph)
    finally:
        cache.close()


def _visible(args: argparse.Namespace, config: Config, graph: KnowledgeGraph) -> Visible | None:
    if not getattr(args, "agent", None):
        return None
    agents, problems = load_agents(config)

    return scope_test(resolve(config, agent_named(agents, problems, args.agent)).read_globs, graph)


def _node(graph: KnowledgeGraph, text: str) -> str:
    node = graph.find(text)
    if node is None:
        raise UsageError(f"No note {text!r} in the vault's graph.",
                         "give a note's path (Projects/Alpha/Alpha.md) or its name as in a wikilink ([[Alpha]]).")
    return node


def _show(args: argparse.Namespace, config: Config, graph: KnowledgeGraph) -> int:
    if args.kind != ViewKind.WORKSPACE and not args.name:
        raise UsageError(f"`routine graph show {args.kind}` needs a NAME.", f"e.g. `routine graph show {args.kind} "
                         f"{'Alpha' if args.kind == ViewKind.PROJECT else 'builder'}`.")
    shown = view(graph, args.kind, args.name or "")
    if args.json:
        print_json(shown.as_dict())
    else:
        _print_view(shown)
    return 0


def _neighbors(args: argparse.Namespace, config: Config, graph: KnowledgeGraph) -> int:
    if args.depth < 0:
        raise UsageError(f"--depth must be 0 or more, not {args.depth}.", "e.g. --depth 2.")
    visible = _visible(args, config, graph)
    node = _node(graph, args.note)
    if visible is not None and not visible(node):
        raise UsageError(
            f"{args.agent} may not read {graph.g.nodes[node].get('note', node)}, so it sees nothing there.",
            f"add a glob to `reads:` in the agent note of {args.agent}, or start from a note it may read.",
        )
    shown = neighbors(graph, node, args.depth, set(args.type) if args.type else None, visible)
    if args.json:
        print_json(shown.as_dict())
    else:
        _print_view(shown)
    return 0


def _path(args: argparse.Namespace, config: Config, graph: KnowledgeGraph) -> int:
    a, b = _node(graph, args.a), _node(graph, args.b)
    steps = path(graph, a, b, _visible(args, config, graph))
    if args.json:
        print_json([{"from": u, "edge": e, "to": v} for u, e, v in steps])
    elif not steps:
        print(f"No chain of links joins {a} and {b}.")
    else:
        print(a)
        for _, edge, target in steps:
            print(f"  —{edge}→ {target}")
    return 0 if steps else 1


def _print_view(shown: View) -> None:
    print(shown.title)
    if not shown.nodes:
        print("  (nothing)")
        return
    by_type: dict[str, list[str]] = {}
    for node, data in shown.nodes.items():
        by_type.setdefault(data.get("type", "note"), []).append(f"{data.get('label', node)}  ({node})")
    for kind in sorted(by_type):
        print(f"\n{kind} ({len(by_type[kind])})")
        for line in sorted(by_type[kind]):
            print(f"  {line}")
    if shown.edges:
        print(f"\nlinks ({len(shown.edges)})")
        for u, v, _, label in shown.edges:
            print(f"  {shown.nodes[u].get('label', u)} —{label}→ {shown.nodes[v].get('label', v)}")
