"""An agent assigned a task picks it up: it runs with the task, writes the result into the
case file, and the task line links it and shows progress.

    - [ ] Draft the FAQ [assignee:: [[Builder]]]                       assigned (pending)
    - [/] Draft the FAQ [assignee:: [[Builder]]] [result:: [[Draft the FAQ]]]   being worked on
    - [x] Draft the FAQ [assignee:: [[Builder]]] [result:: [[Draft the FAQ]]] ✅ 2026-11-22
    - [/] … [proposal:: [[Drafts/…]]]      a semi-autonomous member's result waits for approval

The line itself is the state, so a restart loses nothing: a pending task is picked up at
start, an interrupted one (in progress, no result note, no proposal) again. The journal keeps
who ran what (the run's agent, `project` and `details.task`).

A pickup that fails puts the line back to open, so it would be picked up again at once: the
daemon waits ``Backoff`` before the next try (doubled after each failure, per task), and the
failures of one task share one alert (``pickup_cause``) that resolves itself when it succeeds.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from routine.causes import Cause
from routine.config.model import AgentSpec, WriteSpec
from routine.errors import RoutineError
from routine.flows.qa import run_qa
from routine.journal.status import RunStatus
from routine.jsonvalue import JSONObject
from routine.person.alerts import raise_alert, resolve_alerts
from routine.projects.artifacts import ArtifactType, artifact_type_of, set_properties, type_properties
from routine.projects.assignees import agent_aliases, loose_tasks, own_behaviour
from routine.projects.model import Project, Status, link_target, list_projects
from routine.projects.tasks import (
    Task,
    TaskState,
    parse_line,
    project_tasks,
    update_task,
    with_field,
    with_mark,
    without_field,
)
from routine.prompts import template
from routine.runner.request import StepRequest
from routine.vault.notes import read_note, resolve_wikilink, wikilink_for, wikilinks

if TYPE_CHECKING:
    from routine.flows.qa import QAResult
    from routine.runner.request import StepOutcome
    from routine.runner.step import Runner

_UNSAFE = re.compile(r'[\\/:*?"<>|#^\[\]%]+')
_QA_TASK = re.compile(r"^(?:QA|Review)\b", re.IGNORECASE)
_LINK = re.compile(r"\[\[([^\]|#]+)")


@dataclass(frozen=True)
class Pickup:
    project: Project
    task: Task
    agent: AgentSpec

    @property
    def key(self) -> str:
        return f"task:{self.task.key}"

    @property
    def qa_target(self) -> str | None:
        """`- [ ] QA [[Market report]] [assignee:: [[Critic]]]`: a QA of that artifact by the assignee."""
        link = _LINK.search(self.task.text) if _QA_TASK.match(self.task.text) else None
        return link.group(1).strip() if link else None

    @property
    def result_name(self) -> str:
        if self.qa_target:
            return self.qa_target.rsplit("/", 1)[-1]
        return self.task.result or (_UNSAFE.sub("-", self.task.text).strip(" -.")[:80] or "Task result")

    @property
    def result_rel(self) -> str:
        return self.project.note_rel(self.result_name)


def pickup_cause(pick: Pickup) -> Cause:
    """The alert cause its failures share: one per task (hashed, so no task's is a prefix of another's)."""
    digest = hashlib.sha256(pick.task.key.encode("utf-8", "replace")).hexdigest()[:16]
    return Cause(f"task-pickup:{digest}", f"task not done - {pick.task.text[:60]}")


MAX_BACKOFF = 3600.0  # seconds: a failing task is still tried once an hour


@dataclass
class Backoff:
    """Per task: when a failed pickup may be tried again (``base`` seconds after the first
    failure, doubled after each, at most MAX_BACKOFF). Times are the caller's clock (monotonic)."""

    base: float
    failures: dict[str, int] = field(default_factory=dict)
    not_before: dict[str, float] = field(default_factory=dict)

    def failed(self, key: str, now: float) -> float:
        """Record a failure; the seconds until the next try."""
        n = self.failures[key] = self.failures.get(key, 0) + 1
        delay = min(MAX_BACKOFF, self.base * 2.0 ** (n - 1))
        self.not_before[key] = now + delay
        return delay

    def succeeded(self, key: str) -> None:
        self.failures.pop(key, None)
        self.not_before.pop(key, None)

    def wait(self, key: str, now: float) -> float:
        """Seconds before ``key`` may be tried again (0: now)."""
        return max(0.0, self.not_before.get(key, 0.0) - now)


def _agent_for(vault: Path, name: str, agents: dict[str, AgentSpec]) -> AgentSpec | None:
    key = name.lower()
    for agent in agents.values():
        if key in agent_aliases(vault, agent.name, agent.source):
            return agent
    return None


def pending(vault: Path, agents: dict[str, AgentSpec], folder: str | None = None,
            interrupted: bool = False) -> list[Pickup]:
    """Tasks assigned to an agent and not yet picked up (with ``interrupted``: also those left
    in progress by a stop, with no result note and no proposal)."""
    found = []
    for project in list_projects(vault):
        if project.status != Status.ACTIVE or (folder and project.folder != folder):
            continue
        tasks, _ = project_tasks(vault, project.folder)
        for task in tasks:
            if not task.assignee:
                continue
            agent = _agent_for(vault, task.assignee, agents)
            member = project.member(task.assignee)
            if agent is None or (member is not None and member.behaviour and not member.behaviour.picks_up_tasks):
                continue
            found += _waiting(vault, Pickup(project, task, agent), interrupted)
    for agent in agents.values():  # tasks outside every project, in the notes its `tasks:` names
        if not own_behaviour(agent.behaviour).picks_up_tasks:
            continue
        for project, task in loose_tasks(vault, agent.name, agent.source):
            if not folder or project.folder == folder:
                found += _waiting(vault, Pickup(project, task, agent), interrupted)
    return found


def _waiting(vault: Path, pick: Pickup, interrupted: bool) -> list[Pickup]:
    """[pick] when its task waits to be picked up (open, no result yet; with ``interrupted``: also
    left in progress by a stop, with no result note and no proposal), else []."""
    task = pick.task
    if task.state == TaskState.OPEN and not task.result:
        return [pick]
    stopped = (interrupted and task.state == TaskState.IN_PROGRESS and "[proposal::" not in task.line
               and not (Path(vault) / pick.result_rel).exists())
    return [pick] if stopped else []


def start(vault: Path, pick: Pickup) -> bool:
    """Mark the task in progress and name its result note (so the agent may write it)."""

    name = pick.result_name
    taken = {}

    def take(line: str) -> str:
        now = parse_line(pick.task.file, 0, line)
        if now is None or now.state != pick.task.state or now.assignee != pick.task.assignee:
            return line  # done, cancelled or reassigned since it was queued: not ours to start
        taken["ok"] = True
        marked = with_mark(line, TaskState.IN_PROGRESS)
        return marked if pick.qa_target else with_field(marked, "result", f"[[{name}]]")

    return update_task(vault, pick.task, take) and bool(taken)


def request(pick: Pickup) -> StepRequest:
    return StepRequest(agent=pick.agent, task=template("project_task.md.j2"),
                       # the result note is named from the task's text: a value, never part of a template
                       write=WriteSpec(note="{{ result_note }}"), trigger=f"task:{pick.task.file}",
                       variables={"task_text": pick.task.text, "task_due": pick.task.due or "",
                                  "result_note": pick.result_rel, "task_note": pick.task.file,
                                  # a task outside every project: no project, no brief (else `for_run`'s)
                                  **({} if pick.project.name else {"project": "", "project_brief": ""})},
                       details={"project": pick.project.name, "task": pick.task.text, "task_file": pick.task.file,
                                "assignee": pick.task.assignee}, alert_cause=pickup_cause(pick))


def finish(vault: Path, pick: Pickup, outcome: StepOutcome, today: datetime) -> None:
    """Record the outcome on the task line: done with its result, waiting on a proposal, or
    back to open (the run failed; its alert says why)."""
    wrote = getattr(outcome, "wrote", None)
    if outcome.status is RunStatus.OK and wrote is not None:
        updates = result_properties(vault, pick, wrote.rel, getattr(outcome.prompt, "sources", None) or [])
        if updates:
            set_properties(vault, wrote.rel, updates)
        update_task(vault, pick.task, lambda line: with_mark(line, TaskState.DONE).rstrip()
                    + f" ✅ {today:%Y-%m-%d}")
    elif outcome.status is RunStatus.PROPOSAL and wrote is not None and wrote.proposal_rel:
        link = f"[[{wrote.proposal_rel[:-3]}]]"
        update_task(vault, pick.task, lambda line: with_field(line, "proposal", link))
    else:
        update_task(vault, pick.task, lambda line: without_field(with_mark(line, TaskState.OPEN), "result"))


def result_properties(vault: Path, pick: Pickup, rel: str, sources: list[str]) -> JSONObject:
    """What makes a task's result an intellectual artifact from the start: owned by the agent,
    derived from the note holding the task, the notes the task links and those its run read,
    a draft that needs QA. A note that already is an artifact is left as it is; properties the
    person already set are kept."""
    try:
        props = read_note(vault, rel).frontmatter
    except OSError:
        return {}
    if artifact_type_of(props) is not None:
        return {}
    derived: dict[str, str] = {}
    for link in [wikilink_for(pick.task.file), *(f"[[{t}]]" for t in wikilinks(pick.task.text)),
                 *(wikilink_for(s) for s in sources if s != rel)]:
        derived.setdefault(link_target(link).lower(), link)
    derived.pop(link_target(rel).lower(), None)
    wanted = {"owner": f"[[{Path(pick.agent.source).stem}]]", "derived_from": list(derived.values()),
              "status": "draft", "qa": "needed"}
    return {**type_properties({}, ArtifactType.INTELLECTUAL), **{k: v for k, v in wanted.items() if k not in props}}


def run_pickup(runner: Runner, vault: Path, pick: Pickup, now: datetime,
               agents: dict[str, AgentSpec] | None = None) -> bool | None:
    """Start, run the agent, finish: the whole life of a picked-up task. True when it
    succeeded (its failures' alert, if any, is resolved), False when it failed, None when it
    did not start (the person changed or removed the line meanwhile)."""
    if not start(vault, pick):
        return None
    if pick.qa_target and agents is not None:
        ok = _run_qa_task(runner, vault, pick, now, agents) is not None
    else:
        outcome = runner.run_step(request(pick))
        finish(vault, pick, outcome, now)
        ok = outcome.status.succeeded
    if ok:
        resolve_alerts(
            runner.config, now, pickup_cause(pick).key, f"the task {pick.task.text!r} was picked up and ran."
        )
    return ok


def _run_qa_task(runner: Runner, vault: Path, pick: Pickup, now: datetime,
                 agents: dict[str, AgentSpec]) -> QAResult | None:
    """A task asking for QA runs the QA step with its assignee as the reviewer; the task line
    records the verdict (`[qa:: passed]`) and is done either way (the QA ran)."""
    rel = resolve_wikilink(vault, pick.qa_target or "")
    try:
        if rel is None:
            raise RoutineError(f"The task asks for QA of [[{pick.qa_target}]], which is not a note.", "fix the link.")
        result = run_qa(runner.config, agents, runner, rel, now, reviewers=(pick.agent.name,))
    except RoutineError as exc:
        cause = pickup_cause(pick)
        raise_alert(runner.config, now, cause.title, f"QA task of {pick.agent.name} failed: {exc.message}", exc.fix,
                    cause=cause.key, affected=pick.agent.name)
        update_task(vault, pick.task, lambda line: without_field(with_mark(line, TaskState.OPEN), "result"))
        return None
    verdict = "passed" if result.passed else "failed"
    update_task(vault, pick.task, lambda line: with_field(with_mark(line, TaskState.DONE), "qa", verdict).rstrip()
                + f" ✅ {now:%Y-%m-%d}")
    return result
