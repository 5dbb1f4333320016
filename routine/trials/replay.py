"""One trial: a real run's journaled request (its exact messages, the agent's tools) sent to a
candidate alias through the models layer, and the answer judged as the run's own was — the
reply checks, the grounding check, tool-call validity, Ollama's figures — beside the original.
Nothing is written into the vault: a trial only reads it (the grounds, the section the person kept).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field, replace
from datetime import date, datetime
from difflib import SequenceMatcher
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from routine.access import scoped
from routine.access.resolve import reader
from routine.config.model import AgentSpec, Config
from routine.errors import ReplyRejected, RoutineError, UsageError
from routine.host import sysmetrics
from routine.journal import RunRecord
from routine.models import providers
from routine.models import reply as replies
from routine.models.client import ModelClient, prepare
from routine.tools.base import ToolError, checked_arguments
from routine.tools.calls import Call, calls_in_text, native_calls
from routine.tools.registry import TOOLS, tools_for
from routine.vault.files import read_text
from routine.vault.grounding import Strictness, check, grounds_for
from routine.vault.scope import resolve
from routine.vault.sections import content_sha, section_of_run

if TYPE_CHECKING:
    from routine.models.client import Completion
    from routine.models.tokens import Message


@dataclass
class Judged:
    """What one answer (the candidate's, or the original run's) is worth, and its figures."""

    reply_ok: bool | None = None      # None: not judged (an answer that is only tool calls)
    reply_problem: str | None = None
    grounding_ok: bool | None = None  # None: the agent's grounding check is off, or no text
    findings: list[str] = field(default_factory=list)
    tool_calls: int = 0
    tool_calls_valid: bool | None = None  # None: no tool calls
    tool_problems: list[str] = field(default_factory=list)
    answer_chars: int = 0
    tokens_in: int | None = None
    tokens_out: int | None = None
    tokens_per_s: float | None = None
    ttft_ms: int | None = None        # the first token, from the request (a load included)
    load_ms: int | None = None
    duration_ms: int | None = None
    closeness: float | None = None    # to the section as the person kept it (difflib ratio), if edited
    memory_mb: float | None = None    # the model's size in memory as Ollama's `ps` reports it after the answer

    @property
    def passed(self) -> bool:
        return self.reply_ok is not False and self.grounding_ok is not False and self.tool_calls_valid is not False

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "passed": self.passed}


@dataclass(frozen=True)
class Replayed:
    model: str | None       # the LiteLLM model that answered
    answer: str | None
    candidate: Judged
    original: Judged

    def result(self) -> dict[str, Any]:
        return {"candidate": self.candidate.as_dict(), "original": self.original.as_dict()}


def solo(client: ModelClient, alias: str) -> ModelClient:
    """A client on the same model manager (the same residency, `max_resident`) where ``alias``
    has no fallbacks: a trial judges the candidate, never another model answering for it."""
    config = client.config
    models = {**config.models, alias: replace(config.models[alias], fallbacks=())}
    return ModelClient(replace(config, models=models), client.manager, calibration=client.calibration)


def replay(config: Config, agents: dict[str, AgentSpec], run: RunRecord, candidate: str,
           client: ModelClient) -> Replayed:
    """Send ``run``'s request to ``candidate`` and judge the answer beside the run's own."""
    problem = row_problem(run)
    if problem:
        raise UsageError(f"Run {run.id} cannot be replayed: {problem}.", "try a step run that called a model.")
    agent = agents.get((run.agent or "").lower())
    if agent is None:
        raise UsageError(f"Run {run.id}'s agent {run.agent} is no longer defined.", "try runs of current agents.")
    return replay_messages(config, scoped(config, agent), run, run.prompt, candidate, client)


def replay_messages(config: Config, agent: AgentSpec, run: RunRecord, messages: list[Message], candidate: str,
                    client: ModelClient) -> Replayed:
    """Send ``messages`` (``run``'s request, or a variant of it) to ``candidate``, and judge the
    answer beside the run's own: the same checks, the same grounds, the same section kept."""
    tools = tools_for(agent)
    specs = [t.spec() for t in tools] or None
    day = _day_of(config, run)
    kept = _kept_section(config, run)

    prepare(config)  # the library's import is not the model's first token
    first: list[float] = []
    started = time.monotonic()
    completion: Completion | None = None
    judged = Judged()
    try:
        completion = solo(client, candidate).complete(
            candidate, messages, tools=specs, on_token=lambda _: first.append(time.monotonic()) if not first else None)
    except ReplyRejected as exc:
        judged.reply_ok, judged.reply_problem = False, exc.problem
        judged.duration_ms = int((time.monotonic() - started) * 1000)
    if completion is not None:
        judged = _judge_completion(completion, agent, messages, config, day, kept)
        judged.ttft_ms = int((first[0] - started) * 1000) if first else completion.duration_ms
        judged.memory_mb = _memory_mb(config, candidate, completion.model)
    original = _judge_text(run.output or "", run.model, agent, messages, config, day, kept)
    original.tokens_in, original.tokens_out, original.load_ms = run.tokens_in, run.tokens_out, run.load_duration_ms
    original.tokens_per_s = (run.metrics or {}).get("tokens_per_s") if isinstance(run.metrics, dict) else None
    original.duration_ms = run.duration_ms
    return Replayed(completion.model if completion else None, completion.text if completion else None,
                    judged, original)


def _judge_completion(completion: Completion, agent: AgentSpec, messages: list[Message], config: Config, day: date,
                      kept: str | None) -> Judged:
    calls = native_calls(completion.tool_calls) or calls_in_text(completion.text, {t.name for t in tools_for(agent)})
    if calls:
        problems = _tool_problems(calls, agent)
        judged = Judged(tool_calls=len(calls), tool_calls_valid=not problems, tool_problems=problems)
    else:
        judged = _judge_text(completion.text, completion.model, agent, messages, config, day, kept)
    judged.tokens_in, judged.tokens_out = completion.tokens_in, completion.tokens_out
    judged.load_ms, judged.duration_ms = completion.load_duration_ms, completion.duration_ms
    judged.tokens_per_s = sysmetrics.tokens_per_s(completion)
    return judged


def _judge_text(text: str, model: str | None, agent: AgentSpec, messages: list[Message], config: Config, day: date,
                kept: str | None) -> Judged:
    problem = replies.problem_with(text, None, model)
    judged = Judged(reply_ok=problem is None, reply_problem=problem.value if problem else None,
                    answer_chars=len(text.strip()))
    strictness = Strictness(agent.grounding_check)
    if strictness is not Strictness.OFF and text.strip():
        grounds = grounds_for(config.vault, reader(config, agent), [str(m.get("content") or "") for m in messages], day,
                              skip=(config.layout.drafts,))
        judged.findings = [f.line() for f in check(text, grounds, strictness)]
        judged.grounding_ok = not judged.findings
    if kept is not None:
        judged.closeness = round(SequenceMatcher(None, text.strip(), kept.strip()).ratio(), 3)
    return judged


def _tool_problems(calls: list[Call], agent: AgentSpec) -> list[str]:
    problems = []
    for call in calls:
        if call.name not in agent.tools or call.name not in TOOLS:
            problems.append(f"{call.name or '(no name)'}: not one of the agent's tools")
        elif call.arguments is None:
            problems.append(f"{call.name}: {call.problem}")
        else:
            try:
                checked_arguments(TOOLS[call.name], call.arguments)
            except ToolError as exc:
                problems.append(str(exc))
    return problems


def _memory_mb(config: Config, alias: str, model: str) -> float | None:
    """What the model that answered takes in memory, by its managed server's own `ps` (None: not a
    managed server, or gone)."""
    dep = next((d for d in config.models[alias].deployments if d.model == model), None)
    if dep is None or not dep.provider.manages_residency:
        return None
    try:
        found = providers.resident(dep.api_base)
    except RoutineError:
        return None
    names = {dep.served_name, f"{dep.served_name}:latest"}
    return next((round(r.size / 2**20, 1) for r in found if r.name in names and r.size), None)


def row_problem(run: RunRecord) -> str | None:
    """What makes ``run``'s journal row unfit to replay (damaged or tampered), or None: its request
    must be a list of messages (each a role and a text), its start a time, its output a text."""
    prompt = run.prompt
    if not isinstance(prompt, list) or not prompt:
        return "its journaled request is missing or is not a list of messages"
    if not all(isinstance(m, dict) and isinstance(m.get("role"), str)
               and isinstance(m.get("content"), (str, type(None))) for m in prompt):
        return "its journaled request holds something other than messages with a role and a text"
    try:
        datetime.fromisoformat(str(run.started_at))
    except ValueError:
        return f"its start {str(run.started_at)[:40]!r} is not a time"
    if not isinstance(run.output, (str, type(None))) or not isinstance(run.wrote, (dict, type(None))):
        return "its output or what it wrote is not what a run records"
    return None


def _day_of(config: Config, run: RunRecord) -> date:
    """The run's own day, in the person's time zone (what its dates were checked against)."""
    return datetime.fromisoformat(run.started_at).astimezone(ZoneInfo(config.zone_name())).date()


def _kept_section(config: Config, run: RunRecord) -> str | None:
    """The section ``run`` wrote, as the person kept it, when they edited it since; else None."""
    wrote = run.wrote if isinstance(run.wrote, dict) else {}
    rel = wrote.get("path")
    if not rel or wrote.get("outcome") == "proposal":
        return None
    try:
        body = read_text(resolve(config.vault, rel)[0])
    except (OSError, ValueError):
        return None
    span = section_of_run(body, run.id)
    if span is None or span.sha is None or content_sha(span.content) == span.sha:
        return None
    return span.content
