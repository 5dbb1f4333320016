"""`routine mcp [--as AGENT]`: routine as an MCP server over stdio, for another program's agent.

What it offers, always as one agent may (``--as``; default the Librarian): search the vault
within its reads (the daemon's index when the daemon runs), read a note it may read (the scope
check every read goes through, so a refusal is the same sentence), list the proposals and alerts
waiting on the person, ask the agent a question (through the daemon when it runs), fire a block
the agent is in (through the daemon), and propose a change to a note it may write: always a
proposal in Drafts/, never a direct write. Every call is journaled as a run with `trigger: mcp`.
The SDK is imported only here, when the command runs.
"""

from __future__ import annotations

import argparse
import json
import logging
from collections.abc import Callable
from datetime import datetime
from typing import Any

from routine.access import scoped
from routine.actions.search import agent_search
from routine.chat.sessions import ask
from routine.config.loader import agent_named, load_agents, load_config
from routine.config.model import AgentSpec, Config, WriteSpec
from routine.daemon import client
from routine.daemon.status import open_alerts
from routine.errors import RoutineError, UsageError
from routine.flows.step_setup import STEP_SETUP
from routine.journal import Journal
from routine.journal.status import RunStatus
from routine.runner.step import Runner, local_now
from routine.schedule.loader import load_schedules
from routine.tools.base import ToolContext, ToolError
from routine.tools.vault_tools import read_note
from routine.vault import Provenance, write_output
from routine.vault.approvals import read_proposal
from routine.vault.guard import Guard
from routine.vault.proposals import ProposalStatus
from routine.vault.writer import WriteOutcome

log = logging.getLogger(__name__)

DEFAULT_AGENT = "librarian"
MAX_K = 20
TRIGGER = "mcp"


class Served:
    """What `routine mcp` does for its client, as ``agent`` may; each call journaled."""

    def __init__(self, config: Config, agent: AgentSpec) -> None:
        self.config, self.declared = config, agent

    @property
    def agent(self) -> AgentSpec:
        """Its scopes of now (assignments made in Obsidian meanwhile count)."""
        return scoped(self.config, self.declared)

    def search(self, query: str, k: int = 6) -> str:
        if not query.strip():
            raise UsageError("The query is empty.", "say what to look for.")
        hits, hidden = agent_search(self.config, self.agent, query, max(1, min(k, MAX_K)))
        lines = [f"{n}. {h['link']} ({h['score']:.2f})" + (f"\n   {h['snippet']}" if h["snippet"] else "")
                 for n, h in enumerate(hits, 1)]
        return "\n".join(lines or [f"No matching notes that {self.declared.name} may read."]) + (
            f"\n{hidden}" if hidden else "")

    def read(self, path: str) -> str:
        ctx = ToolContext(vault=self.config.vault, agent=self.agent, config=self.config, now=local_now(self.config))
        return str(read_note.call(ctx, {"path": path}))

    def waiting(self) -> str:
        folder = self.config.vault / self.config.layout.drafts
        rows = []
        for path in sorted(folder.glob("*.md")) if folder.is_dir() else []:
            rel = path.relative_to(self.config.vault).as_posix()
            try:
                proposal = read_proposal(self.config.vault, rel)
            except (OSError, RoutineError):
                continue
            if proposal is not None and proposal.status in (ProposalStatus.PROPOSED, ProposalStatus.CONFLICT):
                rows.append(f"- proposal {rel} ({proposal.status.value}) by {proposal.agent or '?'} for "
                            f"{proposal.target_rel or '?'}" + (f" #{proposal.section}" if proposal.section else ""))
        alerts = [f"- alert {a}" for a in open_alerts(self.config)]
        return "\n".join(rows + alerts) or "Nothing waits on the person: no open proposals or alerts."

    def ask(self, question: str) -> str:
        if not question.strip():
            raise UsageError("The question is empty.", "ask something.")
        name = self.declared.name
        final = client.call({"op": "chat", "agent": name, "question": question, "session": None, "continue": False})
        if final is not None:
            result = client.result_of(final)
            return str(result.get("answer") or "")
        journal = Journal()
        runner = Runner(self.config, journal, setup=STEP_SETUP)
        try:
            return ask(runner, journal, self.declared, question).answer
        finally:
            runner.close()
            journal.close()

    def fire(self, block: str) -> str:
        agents, _ = load_agents(self.config)
        found = load_schedules(self.config, agents).blocks.get(block)
        if found is None or self.declared.name not in found.agents:
            raise UsageError(f"{self.declared.name} is in no block named {block!r}, so it may not fire it.",
                             "name a block of its schedule (`routine schedule list`).")
        final = client.call({"op": "fire", "target": block, "task": None, "trigger": TRIGGER})
        if final is None:
            raise UsageError("The daemon is not running, and a block fires only through it.",
                             "start it: `routine service install`, or `routine run`.")
        result = client.result_of(final)
        return f"Block {block} ran: {result.get('status')} (run {result.get('run')})."

    def propose(self, path: str, content: str, section: str | None, run_id: str) -> str:
        agent, now = self.agent, local_now(self.config)
        target = WriteSpec(note=path.strip().removeprefix("[[").removesuffix("]]"), section=section or None)
        prov = Provenance(agent=agent.name, model=TRIGGER, run=run_id, generated=now, sources=[])
        result = write_output(self.config.vault, target, content.rstrip("\n") + "\n", prov, list(agent.writes),
                              drafts_dir=self.config.layout.drafts, approval_required=True,
                              approval_why="proposed through `routine mcp`: its changes are always proposals",
                              guard=Guard.of(self.config), proposals=agent.proposal_writes)
        if result.outcome is not WriteOutcome.PROPOSAL:  # never: approval_required makes every write one
            raise RuntimeError("routine mcp wrote a note directly; this is a bug in routine.")
        return f"Proposed: {result.proposal_rel} waits for the person's approval (it changes {result.rel})."

    def journaled(self, tool: str, arguments: dict[str, Any], work: Callable[[str], str]) -> str:
        """Run ``work(run_id)``: its text, or its refusal as one sentence (a ToolError); either way
        a run with `trigger: mcp` in the journal."""
        task = f"{tool}({json.dumps(arguments, ensure_ascii=False)[:500]})"
        journal = Journal()
        try:
            run_id = journal.start(agent=self.declared.name, trigger=TRIGGER, kind="mcp", task=task,
                                   id_at=local_now(self.config))
            try:
                text = work(run_id)
            except (RoutineError, ToolError) as exc:
                said = exc.message if isinstance(exc, RoutineError) else str(exc)
                fix = exc.fix if isinstance(exc, RoutineError) and exc.fix else None
                journal.finish(run_id, RunStatus.REFUSED, said)
                raise ToolError(said + (f" Fix: {fix}" if fix else "")) from None
            journal.finish(run_id, RunStatus.OK, output=text[:4000])
            return text
        finally:
            journal.close()


def server(served: Served) -> Any:
    """The MCP server and its tools (the SDK's MCPServer)."""
    from mcp.server.mcpserver import MCPServer  # lazy: mcp, only for `routine mcp`
    from mcp.server.mcpserver.exceptions import ToolError as Refused  # lazy: mcp
    from mcp.types import ToolAnnotations  # lazy: mcp

    name = served.declared.name
    reads, changes = ToolAnnotations(read_only_hint=True), ToolAnnotations(read_only_hint=False)
    app = MCPServer("routine", instructions=f"routine's vault and agents, as the agent {name} may see and do.")

    def answer(tool: str, arguments: dict[str, Any], work: Callable[[str], str]) -> str:
        try:
            return served.journaled(tool, arguments, work)
        except ToolError as exc:  # the client's agent is told the sentence, as a failed call
            raise Refused(str(exc)) from None

    @app.tool(description=f"Search the vault by meaning, within what {name} may read: ranked notes with a snippet.",
              annotations=reads)
    def search_vault(query: str, k: int = 6) -> str:
        return answer("search_vault", {"query": query, "k": k}, lambda run: served.search(query, k))

    @app.tool(description=f"Read one note {name} may read, e.g. 'Plans/OKRs.md' (a path from search_vault).",
              annotations=reads)
    def read_vault_note(path: str) -> str:
        return answer("read_vault_note", {"path": path}, lambda run: served.read(path))

    @app.tool(description="What waits on the person: proposals in Drafts/ to approve or reject, and open alerts.",
              annotations=reads)
    def waiting() -> str:
        return answer("waiting", {}, lambda run: served.waiting())

    @app.tool(description=f"Ask {name} a question; it answers from the vault as it may read it.", annotations=changes)
    def ask_agent(question: str) -> str:
        return answer("ask_agent", {"question": question}, lambda run: served.ask(question))

    @app.tool(description=f"Run a schedule block {name} is in, now, through routine's daemon.", annotations=changes)
    def fire_block(block: str) -> str:
        return answer("fire_block", {"block": block}, lambda run: served.fire(block))

    @app.tool(description=f"Propose new text for a note {name} may write (a section of it, or the whole note): "
                          "always a proposal in Drafts/ the person approves, never a direct write.",
              annotations=changes)
    def propose_change(path: str, content: str, section: str = "") -> str:
        return answer("propose_change", {"path": path, "section": section},
                      lambda run: served.propose(path, content, section or None, run))

    return app


def run(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    agents, problems = load_agents(config, require_vault=True)
    agent = agent_named(agents, problems, args.as_agent or DEFAULT_AGENT)
    logging.getLogger().handlers[:] = [logging.StreamHandler()]  # stdout is the protocol's: logs go to stderr
    log.info("routine mcp serves as %s (%s)", agent.name, datetime.now().isoformat(timespec="seconds"))
    server(Served(config, agent)).run("stdio")
    return 0
