"""An MCP server's tools as an agent's tools, under the same rules as routine's own.

A server's tool name, description and input schema are outside text: bounded (``MAX_*``), the
description shown as the server's words ("(from MCP server git) …"), the schema checked as JSON
Schema; none of it changes the agent's scopes, tools or rules. A tool the server does not
annotate read-only (``readOnlyHint``) is, for an agent with `approval: required`, written as a
proposal in Drafts/ (kind ``mcp``) instead of run; approving it runs the call (``run_approved``,
through routine.flows.approval) and journals its result. Results are data: bounded to the
sandbox's output limit, URLs redacted (routine.redact), never rendered.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from routine.config.model import AgentSpec, Config, McpServer
from routine.config.notify import Topic
from routine.config.schema import Schema
from routine.config.tool_names import TOOL_NAMES, mcp_reference
from routine.errors import McpUnavailable, RoutineError
from routine.jsonvalue import Parsed
from routine.person.alerts import raise_alert, resolve_alerts
from routine.person.notifications import Message, notify
from routine.redact import redact_text
from routine.tools.base import Tool, ToolContext, ToolError
from routine.tools.mcp_client import Listed, connected
from routine.vault.approvals import MCP_KIND
from routine.vault.proposals import write_proposal

log = logging.getLogger(__name__)

MAX_DESCRIPTION = 600      # characters of a tool's description the model sees
MAX_PROPERTY_NOTE = 200    # characters of each input's description
MAX_SCHEMA = 6000          # characters of a tool's input schema (as JSON); a larger tool is left out
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def _unused(ctx: ToolContext, **arguments: object) -> str:  # an McpTool's call goes to its server instead
    raise ToolError("this tool is an MCP server's; it is called through its server")


@dataclass(frozen=True)
class McpTool(Tool):
    """One tool of an MCP server, as the model sees it (``name``) and as its server calls it (``remote``)."""

    server: str = ""
    remote: str = ""
    read_only: bool = False
    schema: Schema = field(default_factory=dict)

    def __post_init__(self) -> None:
        """Its schema was checked and bounded when listed (``_bounded``), not routine's own tool's checks."""

    @property
    def parameters(self) -> Schema:
        return self.schema

    def call(self, ctx: ToolContext, arguments: Parsed) -> str:
        server = ctx.config.mcp_servers.get(self.server)
        if server is None:
            raise ToolError(f"The MCP server {self.server} is no longer in routine.yaml.")
        if not self.read_only and ctx.agent.approval == "required":
            rel = propose_call(ctx, self, dict(arguments))
            return (f"Not run yet: {self.remote} (MCP server {self.server}) may change things, and your changes wait "
                    f"for the person's approval. The call is proposed in {rel}; it runs when they approve it.")
        return call_tool(ctx.config, server, self.remote, dict(arguments), ctx.now, ctx.agent.name)


def call_tool(config: Config, server: McpServer, remote: str, arguments: dict[str, Any], now: datetime,
              agent: str) -> str:
    """Run one call on the server; its text, bounded and redacted. A server that fails or hangs
    raises its alert (one per server) and the model is told in one sentence."""
    try:
        conn = connected(server)
        answer = conn.call(remote, arguments)
    except McpUnavailable as exc:
        alert_down(config, server, exc, now, agent)
        raise ToolError(f"{exc.message} Go on without {server.name}'s tools.") from None
    if not conn.answered:  # its first answer since it started: an alert of its failing is over
        conn.answered = True
        resolve_alerts(config, now, f"mcp:{server.name}/", f"the MCP server {server.name} answered again")
    text = bounded(config, answer.text)
    if answer.error:
        raise ToolError(f"{remote} (MCP server {server.name}) said: {text}")
    return text


def bounded(config: Config, text: str) -> str:
    """A server's result as the model gets it: at most the sandbox's output limit, URLs redacted."""
    limit = config.sandbox_output
    cut = f"\n[… {len(text) - limit} more characters cut]" if len(text) > limit else ""
    return redact_text(text[:limit]) + cut


def alert_down(config: Config, server: McpServer, exc: RoutineError, now: datetime, agent: str | None) -> None:
    """One open alert per server (its cause), counted again while it stays down."""
    raise_alert(config, now, f"MCP server {server.name} unavailable", exc.message, exc.fix, agent=agent,
                cause=f"mcp:{server.name}/", affected=agent)


def tools_of(config: Config, agent: AgentSpec, taken: set[str], now: datetime,
             alert: bool = True) -> tuple[list[McpTool], list[str]]:
    """The agent's MCP tools (its `mcp:SERVER` and `mcp:SERVER/TOOL`), and for each server that did
    not start or answer a sentence for the model; ``taken``: names already used by its other tools."""
    wanted: dict[str, set[str] | None] = {}
    for name in agent.tools:
        ref = mcp_reference(name)
        if ref is None:
            continue
        named, one = ref
        if one is None or wanted.get(named, set()) is None:
            wanted[named] = None
        else:
            wanted.setdefault(named, set()).add(one)  # type: ignore[union-attr]
    tools: list[McpTool] = []
    notes: list[str] = []
    for server_name, names in wanted.items():
        found = config.mcp_servers.get(server_name)
        if found is None:
            notes.append(f"The MCP server {server_name} is not configured, so its tools are not available.")
            continue
        server = found
        try:
            listed = connected(server).tools
        except McpUnavailable as exc:
            log.warning("%s goes on without the MCP server %s: %s", agent.name, server_name, exc)
            if alert:
                alert_down(config, server, exc, now, agent.name)
            notes.append(f"The tools of the MCP server {server_name} are not available in this run: it did not "
                         "start or answer. Do without them, and say so if the task needed them.")
            continue
        for item in listed:
            if names is None or item.name in names:
                made = _bounded(server_name, item, taken)
                if made is not None:
                    taken.add(made.name)
                    tools.append(made)
        missing = sorted((names or set()) - {item.name for item in listed})
        if missing:
            log.warning("%s names tools the MCP server %s does not list: %s", agent.name, server_name,
                        ", ".join(missing))
            notes.append(f"The MCP server {server_name} has no tool {', '.join(missing)}.")
    return tools, notes


def _bounded(server: str, item: Listed, taken: set[str]) -> McpTool | None:
    """The listed tool as the model may see it, or None (logged) when its schema is unusable."""
    import jsonschema  # lazy: jsonschema, as routine's own tools' declarations load it

    schema: Schema = {k: v for k, v in item.schema.items() if k in ("type", "properties", "required",
                                                                     "additionalProperties", "$defs", "definitions")}
    schema["type"] = "object"
    given = schema.get("properties")
    props: dict[str, Any] = given if isinstance(given, dict) else {}
    schema["properties"] = {str(k)[:64]: _shortened(v) for k, v in list(props.items())[:32]}
    required = [r for r in schema.get("required") or [] if r in schema["properties"]]
    schema["required"] = required
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as exc:
        log.warning("the MCP server %s's tool %s has an unusable input schema (%s); left out", server, item.name,
                    exc.message)
        return None
    if len(json.dumps(schema)) > MAX_SCHEMA:
        log.warning("the MCP server %s's tool %s has an input schema over %d characters; left out", server,
                    item.name, MAX_SCHEMA)
        return None
    name = _UNSAFE.sub("_", item.name)[:48] or "tool"
    if name in taken or name in TOOL_NAMES:
        name = f"{_UNSAFE.sub('_', server)}_{name}"[:64]
    if name in taken:
        return None
    words = " ".join(item.description.split())[:MAX_DESCRIPTION] or "(no description)"
    change = "" if item.read_only else " [may change things]"
    description = f"(from MCP server {server}{change}) {words}"
    return McpTool(name, description, schema["properties"], tuple(required), _unused, server=server,
                   remote=item.name, read_only=item.read_only, schema=schema)


def _shortened(value: object) -> object:
    if isinstance(value, dict) and isinstance(value.get("description"), str):
        return {**value, "description": value["description"][:MAX_PROPERTY_NOTE]}
    return value


def propose_call(ctx: ToolContext, tool: McpTool, arguments: dict[str, Any]) -> str:
    """The call as a proposal in Drafts/ (sealed: its server and tool, agent and run); its path."""
    reason = (f"{ctx.agent.name} asks to call {tool.remote} on the MCP server {tool.server}, which does not mark it "
              "read-only, and its changes wait for your approval. Approving runs the call with the arguments "
              "below (as you leave them) and journals its result; rejecting runs nothing.")
    rel = write_proposal(ctx.vault, ctx.config.layout.drafts, target_rel=f"mcp/{tool.server}",
                         section=f"{tool.server}/{tool.remote}",
                         proposed="```json\n" + json.dumps(arguments, indent=2, ensure_ascii=False) + "\n```",
                         current=None, reason=reason, agent=ctx.agent.name, model="mcp", run=ctx.run_id or "",
                         generated=ctx.now, sources=[], kind=MCP_KIND, target_existed=False)
    notify(ctx.config, Message(Topic.PROPOSALS, f"proposal:{rel}",
                               f"{ctx.agent.name} asks to call {tool.remote} ({tool.server})",
                               f"Waiting for you: {rel}. Approve it in Obsidian (approved: true) or `routine approve`.",
                               note=rel), ctx.now)
    return rel


def run_approved(config: Config, agent: AgentSpec, call: str | None, proposed: str, now: datetime) -> str:
    """An approved call (``call``: its sealed `server/tool`): run now, if the agent still has the
    tool; its result, bounded. A refusal is a RoutineError the approval path journals."""
    server_name, _, remote = (call or "").partition("/")
    server = config.mcp_servers.get(server_name)
    if server is None or not remote:
        raise RoutineError(f"The MCP server {server_name or '?'} of this proposal is no longer in routine.yaml.",
                           "add it back under `mcp_servers:`, or reject the proposal.")
    if not any(t in (f"mcp:{server_name}", f"mcp:{server_name}/{remote}") for t in agent.tools):
        raise RoutineError(f"{agent.name} no longer has the tool {remote} of the MCP server {server_name}.",
                           f"add `mcp:{server_name}` to its tools in {agent.source}, or reject the proposal.")
    body = proposed.strip().removeprefix("```json").removeprefix("```").removesuffix("```").strip()
    try:
        arguments = json.loads(body or "{}")
    except ValueError:
        arguments = None
    if not isinstance(arguments, dict):
        raise RoutineError("The arguments of this proposal are not a JSON object, so nothing was run.",
                           "fix them under Proposed text, or reject the proposal.")
    try:
        return call_tool(config, server, remote, arguments, now, agent.name)
    except ToolError as exc:
        raise RoutineError(f"The approved call {remote} on {server_name} failed: {exc}",
                           "see the alert, or run it again by approving a new proposal.") from None
