"""One answer in a conversation: grounded, fitted to the window, with a rolling summary.

Every request is built the same way, whichever the conversation's home (terminal or note):

- the system message: the agent's own prompt, the chat instructions with the date, time and
  time zone, the running summary of folded turns, and context from the vault: the agent's
  grounding and inputs as in its scheduled runs, and what a search for the message finds
  within the agent's `reads` scopes (``routine.runner.context``);
- the turns not yet folded, oldest first;
- the new message, stamped with the time it was sent.

Room is shared in that order of importance: the system prompt, the summary and the new
message are never cut; the history may take ``HISTORY_SHARE`` of what is left, and when it
needs more its oldest turns are folded into the summary (``routine.chat.fold``); vault context
gets the rest, by priority and section (``routine.runner.budget``). The model client refuses
any request over ``num_ctx - num_predict`` whatever happens here.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Callable

from routine.access import scoped
from routine.chat.fold import Folder, Turn, how_many_to_fold, turn_costs
from routine.errors import AgentStopped, RoutineError, ScopeError
from routine.journal.runs import TranscriptEntry
from routine.models.tokens import Counter, Message, ToolSchema, count_request
from routine.prompts import template
from routine.runner import context
from routine.runner.budget import fit
from routine.runner.step import merge_completions
from routine.templating import Variables, date_vars, fill, render
from routine.tools.base import ToolContext
from routine.tools.loop import LoopResult

if TYPE_CHECKING:
    from routine.config.model import AgentSpec
    from routine.models.client import Completion, ModelClient
    from routine.runner.budget import Fitted, Kept
    from routine.runner.step import Runner
    from routine.tools.toolset import ToolSet
    from routine.vault.context_items import Dropped

log = logging.getLogger(__name__)

HISTORY_SHARE = 0.6    # of the room beside the system prompt and the message: the most the turns may take
SEARCH_K = 4           # notes found by meaning for each message
SUMMARY_SHARE = 8      # the summary is held to a 1/8 of the window (at most SUMMARY_MAX tokens)
SUMMARY_MAX = 600
MAX_FOLD_TURNS = 400   # unsummarised turns folded for one answer; older ones are passed over (and said so)


@dataclass
class History:
    """What came before the new message: the turns, and the summary standing for the first ``covers``."""

    turns: list[Turn] = field(default_factory=list)
    summary: str = ""
    covers: int = 0


@dataclass
class Reply:
    text: str
    model: str
    sources: list[str]
    summary: str
    covers: int
    folded: int            # turns folded into the summary for this answer
    counted: int           # the first request's tokens, as counted before sending
    limit: int
    messages: list[Message]  # the first request, as sent
    dropped: list[Dropped]
    tokens_in: int | None = None
    tokens_out: int | None = None
    duration_ms: int = 0
    tool_log: list[TranscriptEntry] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)  # why each earlier reply was not used (the stream said so)


class Conversation:
    """Answers messages to ``agent`` through ``runner`` (its model client, search index, clock,
    write gate: the daemon's when it runs, this process's otherwise)."""

    def __init__(self, runner: Runner, agent: AgentSpec, person: str = "the person") -> None:
        self.runner, self.person = runner, person
        self.declared = agent  # the agent note's own scopes; each answer resolves them anew
        self.agent = scoped(runner.config, agent)
        self.tool_log: list[TranscriptEntry] = []  # the last answer's tool transcript, kept even when it failed

    @property
    def client(self) -> ModelClient:
        return self.runner.models

    def reply(self, history: History, question: str, on_token: Callable[[str], None] | None = None,
              run_id: str | None = None) -> Reply:
        from routine.tools.toolset import tool_set  # lazy: jsonschema, which the tools' declarations load

        self.agent = scoped(self.runner.config, self.declared)  # assignments made meanwhile count
        agent, client = self.agent, self.client
        now = self.runner.clock()
        variables = {**date_vars(now), "agent": agent.name, "steps": {}, "path": "", "event": "", "task": question,
                     "answer": "", "payload": ""}
        tools = tool_set(self.runner.config, agent, now)
        shape = _Shape(
            self._system_vars(variables, [t.name for t in tools.tools]),
            [t.spec() for t in tools.tools] or None,
            {"role": "user", "content": f"[{now:%a %Y-%m-%d %H:%M} {variables['timezone']}] {question.strip()}"},
            client.counter(agent.model),
            client.limit(agent.model),
        )
        summary, covers, turns = self._fold(shape, history, run_id)
        gathered = self._gather(question, variables, now)
        fitted, sent, counted = shape.fitted(summary, turns, gathered)
        answer = self._answer(sent, tools, now, on_token, run_id)
        sources = [k.source for k in fitted.kept if k.source] + self._notes_read()
        return Reply(text=answer.text.strip(), model=answer.model, sources=list(dict.fromkeys(sources)),
                     summary=summary, covers=covers, folded=covers - min(history.covers, len(history.turns)),
                     counted=counted, limit=shape.limit, messages=sent, dropped=fitted.dropped,
                     tokens_in=answer.tokens_in, tokens_out=answer.tokens_out, duration_ms=answer.duration_ms,
                     tool_log=list(self.tool_log), rejected=list(answer.rejected))

    def _system_vars(self, variables: Variables, tools: list[str]) -> dict[str, object]:
        agent = self.agent
        agent_prompt = fill(agent.system_prompt, {**variables, "agent": agent.name})  # data: no template runs
        return {**variables, "agent_prompt": agent_prompt, "agent": agent.name, "person": self.person,
                "tools": tools, "can_read": "read_note" in agent.tools}

    def _fold(self, shape: _Shape, history: History, run_id: str | None) -> tuple[str, int, list[Turn]]:
        """The summary, how many turns it covers, and the turns sent whole: the oldest folded
        until the rest take at most HISTORY_SHARE of the room beside the fixed part."""
        summary, covers = history.summary, min(history.covers, len(history.turns))
        turns = list(history.turns[covers:])
        skipped = max(0, len(turns) - MAX_FOLD_TURNS)
        if skipped:  # a note of thousands of messages: fold what one answer can, never hang on the rest
            log.warning(
                "a conversation with %s has %d messages not yet summarised; the oldest %d are passed over "
                "(the summary says so); the latest %d are folded as the window needs",
                self.agent.name,
                len(turns),
                skipped,
                MAX_FOLD_TURNS,
            )
            summary = (summary.strip() + "\n" if summary.strip() else "") + (
                f"- ({skipped} earlier messages were too many to summarise; see the note itself for them.)")
            covers, turns = covers + skipped, turns[skipped:]
        costs = turn_costs(shape.counter, turns)  # each turn counted once for this answer
        folder = Folder(self.client, self.agent.model, self.agent.name, self.person,
                        min(SUMMARY_MAX, shape.limit // SUMMARY_SHARE))
        while turns:
            room = int(max(0, shape.limit - shape.count(summary, [])) * HISTORY_SHARE)
            n = how_many_to_fold(shape.counter, turns, room, costs)
            if not n:
                break
            summary = folder.fold(summary, turns[:n], run_id)
            covers, turns, costs = covers + n, turns[n:], costs[n:]
        return summary, covers, turns

    def _notes_read(self) -> list[str]:
        """Notes the agent read with its tools while answering: sources too."""
        read = []
        for e in self.tool_log:
            if e["type"] == "tool" and e["name"] == "read_note" and not e.get("refused"):
                arguments = e["arguments"]
                path = arguments.get("path") if isinstance(arguments, Mapping) else None
                if isinstance(path, str):
                    read.append(path)
        return read

    def _gather(self, question: str, variables: Variables, now: datetime) -> context.Gathered:
        """The agent's grounding and every input form a run of it reads (its notes, the journal,
        the person's calendars: the runner's ``services``), and what a search for the message finds
        in its scopes. Without a usable search index the conversation goes on without search hits."""
        runner, agent, where = self.runner, self.agent, f"a conversation with {self.agent.name}"
        services = runner.services(now)
        wanted = bool(question.strip())
        try:
            search = context.Search(question, SEARCH_K, runner.memory, services.indexing) if wanted else None
            return context.gather(runner.config.vault, agent, agent.inputs, variables, where, search,
                                  services=services)
        except ScopeError:
            raise
        except RoutineError as exc:  # the index is busy, damaged or its embedder missing: no search hits
            if not wanted:
                raise
            log.warning("a conversation with %s goes on without search: %s", agent.name, exc)
            return context.gather(runner.config.vault, agent, agent.inputs, variables, where, None,
                                  services=services)

    def _answer(self, messages: list[Message], tools: ToolSet, now: datetime,
                on_token: Callable[[str], None] | None, run_id: str | None) -> Completion:
        agent, client = self.agent, self.client
        self.tool_log = []
        if not tools:
            return client.complete(agent.model, messages, on_token=on_token, run_id=run_id)

        runner = self.runner
        ctx = ToolContext(vault=runner.config.vault, agent=agent, config=runner.config, now=now, run_id=run_id,
                          search=runner.services(now).search, write_gate=runner.write_gate)
        loop = LoopResult()
        try:
            tools.run(client, agent, messages, ctx, loop, run_id, on_token=on_token)
        finally:
            self.tool_log = loop.log
        if loop.status != "ok":
            raise AgentStopped(loop.status, f"{agent.name} {loop.error}; there is no answer.",
                               f"ask again, more narrowly; or raise `max_iterations` or `timeout` in {agent.source}.")
        return merge_completions(loop.completions, loop.result)


@dataclass
class _Shape:
    """How this conversation's request is rendered and counted: the system message's variables,
    the tool schemas, the new message, the model's counter and limit."""

    variables: dict[str, object]
    specs: list[ToolSchema] | None
    asked: Message
    counter: Counter
    limit: int

    def messages(self, summary: str, turns: list[Turn], items: Iterable[Kept] = (), dropped: Iterable[Dropped] = (),
                 missing: Iterable[str] = ()) -> list[Message]:
        system = render(template("chat.md.j2"), {**self.variables, "summary": summary, "items": list(items),
                                                 "dropped": list(dropped), "missing": list(missing)},
                        "chat.md.j2").strip()
        return [{"role": "system", "content": system}, *[t.message() for t in turns], self.asked]

    def count(self, summary: str, turns: list[Turn]) -> int:
        return count_request(self.counter, self.messages(summary, turns), self.specs)

    def fitted(self, summary: str, turns: list[Turn],
               gathered: context.Gathered) -> tuple[Fitted, list[Message], int]:
        """Vault context in what the summary, the turns and the message leave: (fitted, messages, counted)."""
        fixed = self.count(summary, turns)
        while True:
            fitted = fit(gathered.items, fixed, self.limit, self.counter)
            sent = self.messages(summary, turns, fitted.kept, fitted.dropped, gathered.missing)
            counted = count_request(self.counter, sent, self.specs)
            if counted <= self.limit:
                return fitted, sent, counted
            fixed += counted - self.limit + 16  # the list of what was left out costs tokens too
