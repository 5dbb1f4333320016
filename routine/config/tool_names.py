"""The names of routine's tools: the one list every other list of tool names is checked against.

It lives below the tools themselves so that the schema (an agent's `tools:`, a library's) can
name them without importing the tools' code. Each tool's ``@tool`` decorator checks its name is
here, and ``routine/tools/registry.py`` checks every name here has its tool (both at import).
"""

from __future__ import annotations

TOOL_NAMES: tuple[str, ...] = ("search_notes", "read_note", "list_notes", "write_note", "now", "date_math",
                               "run_command", "graph_neighbors", "recommend_artifact", "propose_tasks",
                               "ask_person", "remind_person")


# An agent's `tools:` may also name an MCP server's tools (routine.yaml's `mcp_servers:`):
# `mcp:SERVER` (all of them) or `mcp:SERVER/TOOL` (one).
MCP_PREFIX = "mcp:"
MCP_SERVER_NAME = r"[a-z][a-z0-9_-]{0,39}"
MCP_TOOL_REFERENCE = rf"^mcp:{MCP_SERVER_NAME}(/[A-Za-z0-9_.-]{{1,64}})?$"


def mcp_reference(name: str) -> tuple[str, str | None] | None:
    """``(server, tool or None)`` for an agent's `mcp:SERVER[/TOOL]`; None for routine's own tool."""
    if not name.startswith(MCP_PREFIX):
        return None
    server, _, tool = name[len(MCP_PREFIX):].partition("/")
    return server, tool or None


class ToolDefinitionError(TypeError):
    """A tool is defined wrongly (a bug in routine, caught at import)."""


def declared(*names: str) -> tuple[str, ...]:
    """``names``, each the name of a declared tool; a name no tool has fails at import."""
    unknown = [name for name in names if name not in TOOL_NAMES]
    if unknown:
        raise ToolDefinitionError(f"{', '.join(unknown)} named as a tool, but no tool is declared by that name "
                                  f"(declared: {', '.join(TOOL_NAMES)})")
    return names


# What an agent installed from a library may have unless routine.yaml allows more for that library.
LIBRARY_TOOLS = declared("search_notes", "read_note", "list_notes", "write_note", "now", "date_math")

# What a QA reviewer has, whatever its note lists: it reads what the artifact cites, nothing more.
REVIEW_TOOLS = declared("read_note")
