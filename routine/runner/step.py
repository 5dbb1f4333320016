"""One step: gather context, render the prompt, call the model, write the result, journal it.

This is the single path every run takes (``routine fire``, a scheduled block, a trigger), so
the journal, scopes and alerts behave the same whatever started the run.
"""

from __future__ import annotations

import contextlib
import logging
import time
from dataclasses import replace
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Any, Callable, ContextManager
from zoneinfo import ZoneInfo

from routine import runcontext
from routine.causes import cause_of
from routine.config.calendars import Span
from routine.config.model import AgentSpec, Config, WriteSpec
from routine.errors import Abandoned, AgentStopped, RoutineError, ScopeError, UsageError
from routine.graph.context import graph_items
from routine.host import sysmetrics
from routine.journal import Journal, keep
from routine.journal.model_events import ModelEvents
from routine.journal.prompt_trials import version_of
from routine.journal.report import team_report
from routine.journal.status import RunStatus
from routine.models.client import ModelClient
from routine.models.manager import ModelManager
from routine.person import agenda
from routine.person.alerts import raise_alert
from routine.person.notifications import notify, proposal_waiting
from routine.runner import asking, claims, context, prompt, recall
from routine.runner.events import (
    Asked,
    Indexing,
    OnEvent,
    Phase,
    StepFailed,
    StepStarted,
    Token,
    ToolsUsed,
    Wrote,
    ignore,
)
from routine.runner.inputs import RunServices
from routine.runner.request import StepOutcome, StepRequest, StepSetup
from routine.templating import Variables, date_vars, render
from routine.tools.base import ToolContext
from routine.tools.loop import LoopResult
from routine.vault import Provenance, check_write, write_output
from routine.vault.guard import Guard
from routine.vault.presence import require_vault
from routine.vault.writer import WriteOutcome

if TYPE_CHECKING:
    from routine.memory import VaultIndex
    from routine.memory.retrieve import HitRecord
    from routine.models.client import Completion
    from routine.runner.prompt import Prompt
    from routine.tools.toolset import ToolSet
    from routine.vault import WriteResult

log = logging.getLogger(__name__)


def local_now(config: Config) -> datetime:
    """Now, in the person's time zone (config, else the system's)."""
    tz = ZoneInfo(config.timezone) if config.timezone else None
    return datetime.now(tz).astimezone(tz) if tz else datetime.now().astimezone()


def local_time(config: Config, when: datetime) -> datetime:
    """``when`` (timezone-aware) in the person's time zone, as it was then (DST included)."""
    return when.astimezone(ZoneInfo(config.timezone) if config.timezone else None)


class Runner:
    def __init__(self, config: Config, journal: Journal | None, models: ModelClient | None = None,
                 clock: Callable[[], datetime] | None = None, on_event: OnEvent | None = None,
                 memory: VaultIndex | Any = None, *, setup: StepSetup) -> None:
        self.config = config
        # What each step is given before it runs (its scopes of now, its project's facts), by the
        # code that runs it: the runner imports neither routine.access nor routine.projects.
        self.setup = setup
        self.journal = journal
        self._models = models
        # The search index (the daemon's, in its worker process; else this process's own, opened
        # by the first step with `search:` and shut by close()); or, for a dry run beside a running
        # daemon, its search through the socket (routine.daemon.client.DaemonMemory). All have `search`.
        self._memory: Any = memory
        self._own_memory: VaultIndex | None = None
        self.clock = clock or (lambda: local_now(config))
        self.on_event: OnEvent = on_event or ignore
        # The daemon replaces this with a gate that refuses writes once shutdown abandoned the run.
        self.write_gate: Callable[[], ContextManager[object]] = contextlib.nullcontext
        # Waits between a block's retries; False when the wait was cut short (the daemon replaces
        # it with one that its stop ends).
        self.pause: Callable[[float], bool] = _sleep

    @property
    def runs(self) -> Journal:
        """The journal of a journaled run (a dry run has none and never asks for it)."""
        if self.journal is None:
            raise RuntimeError("this runner has no journal: it only makes dry runs")
        return self.journal

    @property
    def models(self) -> ModelClient:
        if self._models is None:  # `routine fire` without a daemon: a manager of its own

            events = ModelEvents(self.journal.db) if self.journal is not None else None
            self._models = ModelClient(self.config, ModelManager(self.config, events=events))
        return self._models

    @property
    def memory(self) -> Any:
        if self._memory is None:
            from routine.memory import VaultIndex  # lazy: numpy, only for a step that searches without a daemon

            self._memory = self._own_memory = VaultIndex(self.config)
        return self._memory

    def close(self) -> None:
        """Release what this runner opened itself (the index and its lock, when no daemon runs)."""
        if self._own_memory is not None:
            self._own_memory.close()
            self._own_memory = self._memory = None

    def _journal_report(self, days: int) -> str:
        """routine's own journal of the last ``days`` days, for an input `journal: 7d` (the Watcher)."""
        if self.journal is None:
            return "(no journal in a dry run without state)"
        now = self.clock()
        keep.KeepRates(self.journal.db).measure_due(self.config.vault, now)  # sections now 48 h old
        return team_report(self.journal.db, now, days)

    def _follow_through(self, days: int) -> str:
        """Planned vs done in the daily Plans of the last ``days`` days (the setup's, ``StepSetup``)."""
        return self.setup.follow_through(self.config, self.clock().astimezone(ZoneInfo(self.config.zone_name())).date(),
                                         days)

    def services(self, as_of: datetime, alert: bool = True) -> RunServices:
        """What a run's inputs and tools read besides the vault, on the run's own day (``as_of``):
        one set for a step and a conversation alike (``runner.inputs.RunServices``). ``alert``: an
        unreadable calendar raises (and a readable one resolves) its alert; not in a dry run."""
        return RunServices(journal_report=self._journal_report, follow_through=self._follow_through,
                           calendar_report=partial(self._calendar_report, as_of, alert),
                           search=self._search_for_tools, indexing=self._indexing)

    def _search_for_tools(self, query: str, k: int, reads: list[str]) -> list[HitRecord]:
        """The search_notes tool's search: the same index and scope filter as a step's `search:`."""
        return [hit.as_dict() for hit in self.memory.search(query, k, reads=reads, progress=self._indexing)]

    def _indexing(self, what: str, done: int, total: int) -> None:
        self.on_event(Indexing(what, done, total))

    def run_step(self, req: StepRequest, dry_run: bool = False, stream: bool = False) -> StepOutcome:
        now = self.clock()
        # Assignments change in the vault (a task line, a project's members): the scopes of now, and
        # the project's facts, resolved by the setup the runner was given.
        req, project = self.setup.prepare(self.config, req, now)
        if not req.agent.resolved:
            raise RuntimeError(f"the setup left the scopes of {req.agent.name} unresolved (routine.access.scoped)")
        alias = self.config.models[req.agent.model]
        if dry_run:
            return self._step(req, None, now, dry_run=True, stream=stream)
        run_id = self.runs.start(agent=req.agent.name, trigger=req.trigger, block=req.block,
                                    step=req.step_index, parent=req.parent, slot=req.slot,
                                    model=alias.model, id_at=now)
        self.runs.update(run_id, prompt_version=version_of(req.agent.system_prompt), **({"project": project}
                                                                                      if project else {}))
        # Every log line of the run carries its id; the daemon's watchdog sees the step move.
        with runcontext.scope(run=run_id, block=req.block, agent=req.agent.name, model=alias.model):
            runcontext.beat()
            started = sysmetrics.begin()
            log.info("%s started on %s (%s)", req.agent.name, alias.model, req.block or req.trigger)
            try:
                outcome = self._step(req, run_id, now, dry_run=False, stream=stream)
            except KeyboardInterrupt:  # Ctrl-C on `routine fire`: the run ends here, and says so
                self.runs.finish(run_id, "interrupted", "interrupted (Ctrl-C) before it finished")
                raise
            metrics = sysmetrics.finish(started, outcome.completion)
            self.runs.update(run_id, metrics=metrics)
            log.info("%s %s in %.1fs%s", req.agent.name, outcome.status, metrics["duration_s"],
                     f": wrote {outcome.wrote.rel}" if outcome.wrote is not None else "")
            runcontext.beat()
        return outcome

    def _calendar_report(self, now: datetime, alert: bool, span: Span) -> str:
        """The person's calendars for an input `calendar: SPAN`, on the run's own day (a dry run
        raises and resolves no alert)."""
        return agenda.report(self.config, span, now.astimezone(ZoneInfo(self.config.zone_name())), alert=alert)

    def _step(self, req: StepRequest, run_id: str | None, now: datetime, dry_run: bool, stream: bool) -> StepOutcome:
        agent = req.agent
        alias = self.config.models[agent.model]
        if run_id is not None and req.details:
            self.runs.update(run_id, details=req.details)
        self.on_event(StepStarted(run_id, agent.name, alias.model))
        where = f"{req.block or 'fire'} step {agent.name}"
        try:
            variables = {
                **date_vars(req.as_of or now),
                "steps": {k: {"output": v} for k, v in req.prior.items()},
                "agent": agent.name,
                "path": "",
                "event": "",
                "payload": req.payload,  # a value: never rendered as a template
                **req.variables,
                "answer": req.answer.answer if req.answer else "",  # the person's answer: a value, never a template
            }
            task = render(req.task, {**variables, "task": ""}, f"the task of {where}").strip()
            variables["task"] = task
            target = self._render_target(req.write, variables, where)
            if not target.dest:
                raise UsageError(
                    f"{where} names no note to write to.", "give it `write: {note: …}` or `write: {append: …}`."
                )

            require_vault(self.config.vault, empty_is_missing=True)  # an unmounted vault: no run writes into it
            dest = target.dest
            check_write(self.config.vault, [*agent.writes, *agent.proposal_writes], dest, agent.name)
            search = None
            if req.search is not None:
                search = context.Search(render(req.search.query, variables, f"the search query of {where}").strip(),
                                        req.search.k, self.memory, self._indexing)
            gathered = context.gather(self.config.vault, agent, req.inputs, variables, where, search,
                                      target=context.Target(dest, target.section),
                                      prior=req.prior, services=self.services(req.as_of or now, alert=not dry_run))
            if not dry_run and self.journal is not None:
                recall.learn(self.config.vault, self.journal.db, agent, now, self.config.layout.chats)
            gathered.items += recall.recalled(self.config.vault, agent, 900 + len(gathered.items),
                                              self.config.layout.chats)
            if req.answer is not None:  # the block resumed with the person's answer to this or an earlier step
                gathered.items.append(asking.answer_item(req.answer, len(gathered.items)))
            if req.payload:
                gathered.items.append(context.payload_item(req.payload, 950 + len(gathered.items)))
            if req.graph is not None:  # the knowledge graph's typed neighbourhood (routine/graph)
                gathered.items += graph_items(
                    self.config, agent, req.graph, variables, where, 1000 + len(gathered.items)
                )
            tools = self._tools(agent, now, alert=not dry_run)  # counted in the prompt's window
            built = prompt.build(agent, alias, task, gathered, variables, target.instructions(),
                                 counter=self.models.counter(agent.model), tools=tools.tools)
        except RoutineError as exc:
            status = RunStatus.REFUSED if isinstance(exc, ScopeError) else RunStatus.FAILED
            return self._fail(run_id, req, exc, now, status, task=req.task)
        if dry_run or run_id is None:
            return StepOutcome(None, RunStatus.DRY_RUN, prompt=built, model=alias.model, agent=agent)
        return self._call_and_write(req, run_id, now, task, target, built, stream, tools)

    def _call_and_write(self, req: StepRequest, run_id: str, now: datetime, task: str, target: WriteSpec,
                        built: prompt.Prompt, stream: bool, tools: ToolSet) -> StepOutcome:
        agent = req.agent
        self.runs.update(run_id, task=task, prompt=built.messages, sources=built.sources, dropped=built.dropped,
                            details={**req.details, "tokens_counted": built.counted, "tokens_limit": built.limit})
        try:
            on_token = (lambda piece: self.on_event(Token(run_id, piece))) if stream else None
            answer, tool_texts, asked = self._answer(req, built, run_id, now, on_token, tools)
            ask = asked or asking.step_question(req, answer.text, now)
            if ask is not None:  # the step asks the person instead of answering: nothing is written
                return self._wait(req, run_id, now, ask, built, answer)
            # A QA review judges the artifact it was given: its verdict is parsed, not grounded.
            checked = claims.Checked(answer) if req.review else claims.review(
                self.models, self.config, agent, built, answer, tool_texts, (req.as_of or now).date(), run_id)
            answer = checked.answer
            self._phase(run_id, "writing")
            sources = built.sources + [s for s in checked.sources if s not in built.sources]
            if sources != built.sources:  # a note not shown that supported a claim is one of the run's sources
                self.runs.update(run_id, sources=sources)
            with self.write_gate():
                result = self._write(agent, target, answer, run_id, now, sources, held=checked.held)
        except Abandoned as exc:
            self.runs.finish(run_id, "interrupted", str(exc))
            return StepOutcome(run_id, RunStatus.INTERRUPTED, error=exc)
        except AgentStopped as exc:
            return self._fail(run_id, req, exc, now, RunStatus(exc.status))
        except RoutineError as exc:
            status = RunStatus.REFUSED if isinstance(exc, ScopeError) else RunStatus.FAILED
            return self._fail(run_id, req, exc, now, status)
        status = RunStatus.PROPOSAL if result.outcome is WriteOutcome.PROPOSAL else RunStatus.OK
        self.runs.finish(run_id, status, output=answer.text, model=answer.model,
                            wrote={"path": result.rel, "outcome": result.outcome, "proposal": result.proposal_rel,
                                   "message": result.message, **({"why": result.why} if result.why else {})},
                            tokens_in=answer.tokens_in, tokens_out=answer.tokens_out,
                            load_duration_ms=answer.load_duration_ms, warm=answer.warm, grounding=checked.record,
                            details={**req.details, "tokens_counted": built.counted, "tokens_limit": built.limit,
                                     **({"fallback_attempts": answer.attempts} if answer.attempts else {})})
        if self.journal is not None:  # a section that landed: its keep-rate, measured when 48 h old
            keep.written_by_run(self.journal.db, result, target.section, agent.name, req.block, run_id, now)
        self.on_event(Wrote(run_id, result.rel, result.outcome, result.message))
        if result.proposal_rel:
            notify(self.config, proposal_waiting(self.config, result.proposal_rel,
                                                 f"{agent.name} proposes a change to {result.rel}",
                                                 f"Waiting for you: {result.proposal_rel}. Approve it in Obsidian "
                                                 f"(approved: true) or `routine approve`."), now,
                   self.journal.path if self.journal else None)
        return StepOutcome(run_id, status, prompt=built, output=answer.text, wrote=result, model=answer.model,
                           completion=answer)

    def _wait(self, req: StepRequest, run_id: str, now: datetime, ask: asking.Ask, built: Prompt,
              answer: Completion) -> StepOutcome:
        """The step's run waits for the person; its question posed (journal, Inbox/ note, push)."""
        assert req.parent is not None and req.block is not None and req.step_index is not None  # _asks checked
        qid = asking.pose(self.config, self.runs, ask, run=req.parent, step_run=run_id, block=req.block,
                          step=req.step_index, agent=req.agent.name, model=answer.model, now=now)
        self.runs.finish(run_id, RunStatus.WAITING, None, output=answer.text, model=answer.model,
                         tokens_in=answer.tokens_in, tokens_out=answer.tokens_out,
                         load_duration_ms=answer.load_duration_ms, warm=answer.warm,
                         details={**req.details, "question": qid, "tokens_counted": built.counted,
                                  "tokens_limit": built.limit})
        log.info("%s asks the person (%s): %s", req.agent.name, qid, ask.question)
        self.on_event(Asked(run_id, qid, ask.question, ask.deadline.isoformat()))
        return StepOutcome(run_id, RunStatus.WAITING, prompt=built, output=answer.text, model=answer.model,
                           completion=answer, question=qid)

    def _tools(self, agent: AgentSpec, now: datetime, alert: bool) -> ToolSet:
        """The step's tools: its own and its MCP servers' (``routine.tools.toolset``, shared with chats)."""
        from routine.tools.toolset import tool_set  # lazy: jsonschema, which the tools' declarations load

        return tool_set(self.config, agent, now, alert=alert)

    def _answer(self, req: StepRequest, built: Prompt, run_id: str, now: datetime,
                on_token: Callable[[str], None] | None,
                tools: ToolSet) -> tuple[Completion, list[str], asking.Ask | None]:
        """One completion, the tool results the model was given on the way (for an agent with
        tools, the bounded tool loop; its transcript journaled), and the question its `ask_person` asked."""
        agent = req.agent
        if not tools:
            return self.models.complete(agent.model, built.messages, on_token=on_token, run_id=run_id,
                                        prefetch=req.prefetch, on_phase=lambda p: self._phase(run_id, p)), [], None

        ctx = ToolContext(vault=self.config.vault, agent=agent, config=self.config, now=now, run_id=run_id,
                          search=self._search_for_tools, write_gate=self.write_gate, may_ask=asking.may_ask(req))
        loop = LoopResult()
        try:
            tools.run(self.models, agent, built.messages, ctx, loop, run_id, on_token=on_token,
                      on_phase=lambda p: self._phase(run_id, p))
        finally:  # also when a model call fails halfway: the calls made so far are on record
            self.runs.update(run_id, log=loop.log)
        self.on_event(ToolsUsed(run_id, loop.status, loop.result, loop.error, loop.turns, loop.calls, loop.refused))
        if loop.status is not RunStatus.OK:
            raise AgentStopped(loop.status, f"{agent.name} {loop.error}; nothing was written.",
                               f"see the transcript with `routine runs show {run_id}`; raise `max_iterations` or "
                               f"`timeout` in {agent.source} if the task really needs more.")
        return merge_completions(loop.completions, loop.result), loop.shown, (ctx.asked[0] if ctx.asked else None)

    def _phase(self, run_id: str | None, phase: str) -> None:
        """What the step waits on now (loading MODEL, generating, writing), for the person."""
        self.on_event(Phase(run_id, phase))

    def _render_target(self, spec: WriteSpec, variables: Variables, where: str) -> WriteSpec:
        def r(value: str | None) -> str | None:
            return render(value, variables, f"the write target of {where}").strip() if value else value

        return WriteSpec(**{key: r(getattr(spec, key)) for key in WriteSpec.KEYS})

    def _write(self, agent: AgentSpec, target: WriteSpec, answer: Completion, run_id: str, now: datetime,
               sources: list[str], held: str | None = None) -> WriteResult:
        prov = Provenance(agent=agent.name, model=answer.model, run=run_id, generated=now, sources=sources)
        return write_output(self.config.vault, target,
                            _clean_output(answer.text), prov, list(agent.writes),
                            drafts_dir=self.config.layout.drafts, approval_required=agent.approval == "required",
                            approval_why=agent.approval_why,
                            guard=Guard.of(self.config), proposals=agent.proposal_writes, held=held)

    def _fail(self, run_id: str | None, req: StepRequest, exc: RoutineError, now: datetime, status: RunStatus,
              task: str | None = None) -> StepOutcome:
        log.error("%s %s: %s", req.agent.name, status, exc)
        alert = None
        if run_id is not None:
            self.runs.finish(run_id, status, str(exc), **({"task": task} if task else {}))
        if run_id is not None and not (req.retries_left > 0 and exc.transient):  # the last attempt alerts
            cause = cause_of(exc) or req.alert_cause  # failures of one cause (Ollama down…) share one alert note
            alert = raise_alert(self.config, now, cause.title if cause else f"{req.agent.name} {status}",
                                exc.message, exc.fix, run_id=run_id, agent=req.agent.name,
                                cause=cause.key if cause else None,
                                affected=f"{req.block} ({req.agent.name})" if req.block else req.agent.name)
        self.on_event(StepFailed(run_id, status, str(exc), alert))
        return StepOutcome(run_id, status, error=exc, alert=alert)


def _sleep(seconds: float) -> bool:
    time.sleep(seconds)
    return True


def _clean_output(text: str) -> str:
    """Small models like to wrap everything in ```markdown fences; the note wants the markdown."""
    stripped = text.strip()
    if stripped.startswith("```") and stripped.endswith("```"):
        first_newline = stripped.find("\n")
        opener = stripped[3:first_newline].strip().lower() if first_newline > 0 else ""
        if opener in ("", "markdown", "md"):
            stripped = stripped[first_newline + 1:-3].strip()
    # Our own markers in model output would corrupt the section structure.
    return stripped.replace("%% routine:", "%% (routine):") + "\n"


def merge_completions(turns: list[Completion], text: str) -> Completion:
    """The tool loop's turns as one completion for the journal: tokens and times added up."""

    last = turns[-1]

    def total(name: str) -> int:
        return sum(getattr(t, name) or 0 for t in turns)

    return replace(last, text=text, tokens_in=total("tokens_in"), tokens_out=total("tokens_out"),
                   load_duration_ms=total("load_duration_ms"), duration_ms=total("duration_ms"),
                   warm=turns[0].warm, attempts=[a for t in turns for a in t.attempts], tool_calls=[],
                   rejected=[r for t in turns for r in t.rejected])
