"""Every tool routine offers, by name: the one place tool names are declared (each by its
``@tool`` decorator). An agent gets the ones its note lists under `tools:`; any other list of
tool names (the schema's, a library's default, a new agent's, the smolagents export) is built
from ``TOOLS`` or checked with ``declared`` when it is defined."""

from __future__ import annotations

from routine.tools.base import Tool, ToolDefinitionError
from routine.tools.graph_tools import graph_neighbors
from routine.tools.project_tools import propose_tasks, recommend_artifact
from routine.tools.sandbox import run_command
from routine.tools.time_tools import date_math, now
from routine.tools.vault_tools import list_notes, read_note, search_notes, write_note

TOOLS: dict[str, Tool] = {t.name: t for t in (search_notes, read_note, list_notes, write_note, now, date_math,
                                              run_command, graph_neighbors, recommend_artifact, propose_tasks)}


def declared(*names: str) -> tuple[str, ...]:
    """``names``, each the name of a declared tool; a name no tool has fails at import."""
    unknown = [name for name in names if name not in TOOLS]
    if unknown:
        raise ToolDefinitionError(f"{', '.join(unknown)} named as a tool, but no tool is declared by that name "
                                  f"(declared: {', '.join(TOOLS)})")
    return names


def tools_for(agent) -> list[Tool]:
    return [TOOLS[name] for name in agent.tools if name in TOOLS]
