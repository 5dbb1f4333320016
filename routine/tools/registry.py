"""Every tool routine offers, by name. An agent gets the ones its note lists under `tools:`."""

from __future__ import annotations

from routine.tools.base import Tool
from routine.tools.graph_tools import graph_neighbors
from routine.tools.sandbox import run_command
from routine.tools.time_tools import date_math, now
from routine.tools.vault_tools import list_notes, read_note, search_notes, write_note

TOOLS: dict[str, Tool] = {t.name: t for t in (search_notes, read_note, list_notes, write_note, now, date_math,
                                              run_command, graph_neighbors)}


def tools_for(agent) -> list[Tool]:
    return [TOOLS[name] for name in agent.tools if name in TOOLS]
