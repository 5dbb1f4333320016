"""The knowledge-graph tool: typed links around a note, only through notes the agent may read."""

from __future__ import annotations

from routine.errors import RoutineError
from routine.graph.context import describe, neighbourhood
from routine.graph.service import graph_for
from routine.tools.base import ToolContext, ToolError, tool


@tool("graph_neighbors", "Show how a note is linked in the knowledge graph: a project's members, manager, tasks "
      "and their assignees, artifacts and what they derive from, key results. Only notes you may read appear.",
      {"note": {"type": "string", "description": "a note's path or name, e.g. 'Projects/Alpha/Alpha.md' or 'Alpha'"},
       "depth": {"type": "integer", "minimum": 1, "maximum": 3, "description": "how many links away (default 1)"},
       "link_type": {"type": "string", "description": "only links of this type, e.g. 'assigned_to' or 'members'; "
                                                      "empty for all"}},
      required=["note"])
def graph_neighbors(ctx: ToolContext, note: str, depth: int = 1, link_type: str = "") -> str:
    try:
        shown = neighbourhood(graph_for(ctx.config), ctx.agent, note, depth,
                              {link_type.strip()} if link_type.strip() else None)
    except RoutineError as exc:
        raise ToolError(exc.message) from None
    if shown is None:
        raise ToolError(f"There is no note {note!r} in the knowledge graph; list_notes shows what exists.")
    return describe(shown) or f"{note}: no typed links to notes you may read."
