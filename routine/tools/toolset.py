"""An agent's tools for one step or one chat answer, and the bounded loop that uses them: one setup
for runs (routine.runner.step) and conversations (routine.chat.conversation).

The tools are routine's own that its note lists, and the MCP servers' it names (`mcp:SERVER`,
`mcp:SERVER/TOOL`; routine.tools.mcp_tools). A server that does not start or answer is left out
with one alert, and the model is told so in its system message.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from routine import runcontext
from routine.config.model import AgentSpec, Config
from routine.models.client import ModelClient
from routine.models.tokens import Message
from routine.tools.base import Tool, ToolContext
from routine.tools.loop import LoopResult, run_tool_loop
from routine.tools.mcp_tools import tools_of
from routine.tools.registry import tools_for


@dataclass
class ToolSet:
    tools: list[Tool]
    notes: list[str] = field(default_factory=list)  # for the model: tools it does not have this time, and why

    def __bool__(self) -> bool:
        return bool(self.tools) or bool(self.notes)

    def told(self, messages: list[Message]) -> list[Message]:
        """``messages`` with the notes added to the system message (a copy; none: unchanged)."""
        if not self.notes or not messages or messages[0].get("role") != "system":
            return messages
        first = dict(messages[0])
        first["content"] = f"{first.get('content') or ''}\n\n" + "\n".join(f"(Note: {n})" for n in self.notes)
        return [first, *messages[1:]]

    def run(self, client: ModelClient, agent: AgentSpec, messages: list[Message], ctx: ToolContext,
            out: LoopResult, run_id: str | None = None, on_token: Callable[[str], None] | None = None,
            on_phase: Callable[[str], None] | None = None) -> LoopResult:
        """The bounded tool loop (the agent's `max_iterations` and `timeout`) over these tools."""
        return run_tool_loop(client, agent.model, self.told(messages), self.tools, ctx, agent.max_iterations,
                             agent.timeout, run_id, beat=runcontext.beat, out=out, on_token=on_token,
                             on_phase=on_phase)


def tool_set(config: Config, agent: AgentSpec, now: datetime, alert: bool = True) -> ToolSet:
    """The agent's tools now: routine's own, then its MCP servers' (each started once per process)."""
    own = tools_for(agent)
    if not any(name.startswith("mcp:") for name in agent.tools):
        return ToolSet(list(own))
    remote, notes = tools_of(config, agent, {t.name for t in own}, now, alert=alert)
    return ToolSet([*own, *remote], notes)
