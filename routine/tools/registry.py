"""Every tool routine offers, by name. The names are declared in ``routine/config/tool_names.py``
(below the schema, which lists them); each ``@tool`` checks its name is there, and this module
checks every declared name has its tool. An agent gets the ones its note lists under `tools:`;
any other list of tool names (a library's default, a new agent's, the smolagents export) is
checked with ``declared`` when it is defined."""

from __future__ import annotations

from routine.config.model import AgentSpec
from routine.config.tool_names import TOOL_NAMES, ToolDefinitionError, declared
from routine.tools.base import Tool
from routine.tools.graph_tools import graph_neighbors
from routine.tools.person_tools import ask_person
from routine.tools.project_tools import propose_tasks, recommend_artifact
from routine.tools.remind_tools import remind_person
from routine.tools.sandbox import run_command
from routine.tools.time_tools import date_math, now
from routine.tools.vault_tools import list_notes, read_note, search_notes, write_note

TOOLS: dict[str, Tool] = {t.name: t for t in (search_notes, read_note, list_notes, write_note, now, date_math,
                                              run_command, graph_neighbors, recommend_artifact, propose_tasks,
                                              ask_person, remind_person)}

if tuple(TOOLS) != TOOL_NAMES:
    raise ToolDefinitionError(f"routine/config/tool_names.py declares {', '.join(TOOL_NAMES)}, but the registry has "
                              f"{', '.join(TOOLS)}: keep the two in the same order")
__all__ = ["TOOLS", "declared", "tools_for"]


def tools_for(agent: AgentSpec) -> list[Tool]:
    return [TOOLS[name] for name in agent.tools if name in TOOLS]
