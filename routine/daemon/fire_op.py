"""The control socket's ``fire`` request: `routine fire` (and `routine runs retry`) while the
daemon runs. An agent or a block goes through the same work queue, model client and journal as
scheduled work, its progress streamed back as JSON lines (protocol: ``routine.daemon.client``); the
end ``{"done": true, "result": the run's summary, "exit"}``.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any, Callable

from routine import paths
from routine.causes import is_disk_full
from routine.config.loader import agent_named
from routine.config.overrides import known_alias, on_model, on_models
from routine.daemon.ports import Jobs
from routine.daemon.work import Work
from routine.errors import Abandoned, RoutineError, StateDiskFull, UsageError
from routine.journal import Journal
from routine.journal.status import RunStatus, succeeded
from routine.runner.block import run_block
from routine.runner.events import Queued, RunEvent
from routine.runner.request import StepRequest
from routine.runner.resume import block_run_of, resume_point

if TYPE_CHECKING:
    from routine.jsonvalue import JSONObject
    from routine.runner.block import Resume
    from routine.schedule.model import Block

log = logging.getLogger(__name__)


def fire(jobs: Jobs, message: dict[str, Any], send: Callable[[dict[str, Any]], None], gone: threading.Event) -> None:
    """Run an agent or a block through the queue; if the CLI goes away (Ctrl-C), the run stops
    at its next token or write and is journaled as interrupted."""
    live = jobs.live
    target = message["target"]
    done = threading.Event()
    result: JSONObject = {}

    def on_event(event: RunEvent) -> None:
        if gone.is_set():

            raise Abandoned("the person interrupted `routine fire` (Ctrl-C), so this run stopped and wrote nothing.")
        send(event.to_json())

    block = live.schedules.blocks.get(target)
    if message.get("resume") and block is None:
        raise UsageError(f"Block {target} of run {message['resume']} is no longer in the schedules.",
                         "restore it in its schedule file, or fire its agents one by one.")
    job = Work(key="", label=f"fire {target}")
    alias, write = message.get("model") or None, bool(message.get("write"))
    if alias is not None:
        known_alias(live.config, str(alias))
    if block is not None and target.lower() not in live.agents:
        resume = _resume(message.get("resume"), block)  # refused here, before anything is queued
        agents = on_models(live.config, live.agents, block.agents, alias, write)

        def run(journal: Journal) -> JSONObject:
            outcome = run_block(jobs.make_runner(journal, on_event, job, gone), block, agents,
                                trigger="retry" if resume else _trigger(message), stream=True,
                                resume=resume)
            if alias is None:  # a run on another model writes proposals: nothing to review yet
                jobs.follow(block.id, outcome)
            return dict(status=outcome.status, run=outcome.run_id, steps=[s.summary() for s in outcome.steps])
        job.key, job.models = f"block:{block.id}", jobs.model_keys(block.agents, alias)
    else:
        agent = on_model(live.config, agent_named(live.agents, [], target), alias, write)
        request = StepRequest.for_agent(live.config, agent, message.get("task"), _trigger(message),
                                        model_override=alias)

        def run(journal: Journal) -> JSONObject:
            return jobs.make_runner(journal, on_event, cancel=gone).run_step(request, stream=True).summary()
        job.key, job.models = f"agent:{agent.name}", jobs.model_keys([agent.name], alias)
    errors: list[RoutineError] = []
    job.run = _journaled(run, result, errors, done, job.label)
    jobs.queue.submit(job)
    snapshot = jobs.queue.snapshot()
    if snapshot.queued and snapshot.ahead():  # nothing ahead of it: nothing to wait for, nothing said
        send(Queued(snapshot.ahead()).to_json())
    done.wait()
    if errors:  # the run could not even be journaled: the person gets the sentence, not an empty exit 1
        raise errors[0]
    status = result.get("status")  # a RunStatus (a str), as the run's summary gives it
    failed = not (succeeded(status if isinstance(status, str) else None) or status == RunStatus.WAITING.value)
    send({"done": True, "result": result, "exit": 1 if failed else 0})


def _journaled(run: Callable[[Journal], JSONObject], result: JSONObject, failed: list[RoutineError],
               done: threading.Event, label: str) -> Callable[[], None]:
    """A fire's work: its own journal connection, the run's summary into ``result``; a failure
    the person can act on (a full state disk) into ``failed``, logged in one line."""

    def work() -> None:
        journal = None
        try:
            journal = Journal()
            result.update(run(journal))
        except Exception as exc:
            error = exc if isinstance(exc, RoutineError) else \
                StateDiskFull(paths.journal_file(), str(exc)) if is_disk_full(exc) else None
            if error is None:
                raise
            log.error("%s: %s", label, error)
            failed.append(error)
        finally:
            if journal is not None:
                journal.close()
            done.set()
    return work


def _resume(run_id: str | None, block: Block) -> Resume | None:
    """Where `routine runs retry` picks the block up (None for a plain fire)."""
    if not run_id:
        return None

    journal = Journal()
    try:
        run = journal.get(run_id)
        return resume_point(journal, block_run_of(journal, run), block) if run is not None else None
    finally:
        journal.close()


def _trigger(message: dict[str, Any]) -> str:
    """Who fired: the person (`routine fire`), or another program through `routine mcp`."""
    return "mcp" if message.get("trigger") == "mcp" else "manual"
