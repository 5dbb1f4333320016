"""What `routine agent list|show` tells: role, model, scopes, tools, grounding, assignments, last runs.

A locked agent's grounding is named (anyone may see which artifacts an agent is made of) but
its content is never previewed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

from routine.access import resolve
from routine.config.model import AgentSpec, Config
from routine.config.tool_names import mcp_reference
from routine.journal import Journal
from routine.paths import journal_file
from routine.tools.mcp_client import stop_all
from routine.tools.mcp_tools import tools_of
from routine.tools.registry import tools_for
from routine.vault import agent_memory
from routine.vault.notes import read_note, resolve_wikilink

if TYPE_CHECKING:
    from routine.jsonvalue import Parsed

PREVIEW_CHARS = 160


class GroundingShown(TypedDict, total=False):
    link: str
    path: str | None
    exists: bool
    preview: str  # only for an agent not locked


class RunShown(TypedDict):
    id: str
    status: str
    started_at: str | None
    wrote: str | None


class AgentSummary(TypedDict):
    name: str
    role: str
    model: str
    custom: bool
    locked: bool
    behaviour: str | None
    tools: list[str]
    grounding: list[str]
    note: str


class McpToolShown(TypedDict, total=False):
    name: str | None
    server: str | None
    changes: bool
    proposal: bool
    problem: str  # a server that did not start: the only other keys are name and server (None)


class MemoryShown(TypedDict):
    note: str
    exists: bool
    entries: int
    own: int
    newest: list[str]


def _preview(config: Config, rel: str) -> str:
    text = " ".join(read_note(config.vault, rel).body.split())
    return text if len(text) <= PREVIEW_CHARS else text[:PREVIEW_CHARS - 1] + "…"


def grounding_of(config: Config, agent: AgentSpec) -> list[GroundingShown]:
    items = []
    for link in agent.grounding:
        rel = resolve_wikilink(config.vault, link)
        item: GroundingShown = {"link": link, "path": rel, "exists": rel is not None}
        if rel is not None and not agent.locked:
            item["preview"] = _preview(config, rel)
        items.append(item)
    return items


def last_runs(agent: AgentSpec, limit: int = 5) -> list[RunShown]:
    if not journal_file().exists():
        return []
    journal = Journal()
    try:
        rows = [r.as_dict() for r in journal.recent(200) if r.agent == agent.name][:limit]
    finally:
        journal.close()
    return [{"id": r["id"], "status": r["status"], "started_at": r.get("started_at"),
             "wrote": (r.get("wrote") or {}).get("path") if isinstance(r.get("wrote"), dict) else r.get("wrote")}
            for r in rows]


def summary(agent: AgentSpec) -> AgentSummary:
    return {"name": agent.name, "role": agent.role, "model": agent.model, "custom": agent.custom,
            "locked": agent.locked, "behaviour": agent.behaviour or None, "tools": list(agent.tools),
            "grounding": list(agent.grounding), "note": agent.source}


SHOWN_MEMORY = 3  # `agent show` prints the newest lines of the memory note


def details(config: Config, agent: AgentSpec) -> Parsed:
    """Everything `agent show` prints. Scopes and assignments are the ones a run has now
    (``routine.access``): `hidden` and `denied` are the ``!`` globs taken out of them (others'
    locked grounding, others' artifacts). A mapping as its printer (``actions.agent``) reads it by key."""
    access = resolve(config, agent)
    return {
        **summary(agent),
        "author": agent.author or None,
        "version": agent.version or None,
        **access.as_dict(),
        "hidden_locked_notes": len(access.hidden),
        "grounding": grounding_of(config, agent),
        "assignments": {"projects": list(access.projects), "tasks": list(access.tasks)},
        "last_runs": last_runs(agent),
        "mcp_tools": mcp_tools(config, agent),
        "memory": memory_of(config, agent),
    }


def mcp_tools(config: Config, agent: AgentSpec) -> list[McpToolShown]:
    """The MCP servers' tools the agent has (each server it names started, listed and stopped):
    name, server, whether it may change things and whether such a call waits for approval; a
    server that does not start is one entry saying so. Nothing is started for an agent without any."""
    if not any(mcp_reference(name) for name in agent.tools):
        return []
    from datetime import datetime

    try:
        tools, notes = tools_of(config, agent, {t.name for t in tools_for(agent)}, datetime.now().astimezone(),
                                alert=False)
    finally:
        stop_all()
    rows: list[McpToolShown] = [{"name": t.name, "server": t.server, "changes": not t.read_only,
                                 "proposal": not t.read_only and agent.approval == "required"} for t in tools]
    return rows + [{"name": None, "server": None, "problem": note} for note in notes]


def memory_of(config: Config, agent: AgentSpec) -> MemoryShown:
    """The agent's memory note (``routine.vault.agent_memory``): where, how many of routine's lines
    and the person's own it holds, the newest few."""
    rel = agent_memory.note_of(agent.source)
    entries, own = agent_memory.read(config.vault, rel)
    return {"note": rel, "exists": (config.vault / rel).is_file(), "entries": len(entries), "own": len(own),
            "newest": [e.render().removeprefix("- ") for e in entries[:SHOWN_MEMORY]]}
