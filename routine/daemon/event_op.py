"""The control socket's ``event`` request: `routine trigger NAME` while the daemon runs. Each trigger
declared for the event (``schedule.events``) becomes one job in the work queue, with the payload
checked again here (never trusted from the socket); the answer comes once they are queued, so a
script or a hook is not held while a model works. A pause of everything (or of the trigger, by its
id) or a holiday holds it, said in the answer: it waits (``schedule.held``, one per trigger and
payload) and fires once when the hold ends, as a vault trigger's run does (``vault_events``)."""

from __future__ import annotations

import logging
from datetime import datetime
from functools import partial
from typing import Any, Callable, Protocol
from zoneinfo import ZoneInfo

from routine import paths
from routine.daemon.ports import Jobs
from routine.daemon.work import Work
from routine.errors import UsageError
from routine.flows.events import run_event
from routine.journal import Journal
from routine.schedule import pause
from routine.schedule.events import Payload, checked, event_names, triggers_for
from routine.schedule.held import HeldTrigger, Origin
from routine.schedule.model import Trigger

log = logging.getLogger(__name__)


class Host(Jobs, Protocol):
    """What an event needs of the daemon: its queue (``Jobs``), and a place to keep a run a pause holds."""

    def hold(self, item: HeldTrigger) -> bool: ...


def event(jobs: Host, message: dict[str, Any], send: Callable[[dict[str, Any]], None]) -> None:
    result = queue_event(jobs, message["event"], checked(message.get("payload") or {}))
    send({"done": True, "result": result, "exit": 0})


def queue_event(jobs: Host, name: str, payload: Payload) -> dict[str, Any]:
    """Queue each trigger of event ``name`` (also the webhook's, ``daemon.webhook``); one a pause
    holds waits for its end. What was queued and what held. No trigger declared for it: a
    UsageError naming those declared."""
    live = jobs.live
    found = triggers_for(live.schedules.triggers, name)
    if not found:
        raise no_trigger(name, live.schedules.triggers)
    zone = ZoneInfo(live.config.zone_name())
    queued, held = [], []
    for trigger in found:
        why = pause.holder(paths.state_dir(), live.config.holiday, trigger.id, zone)(jobs.now_local())
        if why:
            new = jobs.hold(held_event(trigger, name, payload, jobs.now_local(), why))
            held.append({"trigger": trigger.id, "held": why})
            log.info("event %s: trigger %s held until the pause ends%s: %s", name, trigger.id,
                     "" if new else " (this payload waits already)", why)
            continue
        submit_event(jobs, trigger, payload)
        queued.append({"trigger": trigger.id, "runs": trigger.block or trigger.agent})
        log.info("event %s fires trigger %s (%s)", name, trigger.id, trigger.block or trigger.agent)
    return {"event": name, "queued": queued, "held": held}


def held_event(trigger: Trigger, name: str, payload: Payload, now: datetime, why: str) -> HeldTrigger:
    """The run of ``trigger`` a pause holds, kept with its payload (`routine trigger` without a daemon too)."""
    return HeldTrigger(trigger.id, name, name, now, why, origin=Origin.EVENT, payload=payload.data)


def submit_event(jobs: Jobs, trigger: Trigger, payload: Payload, since: datetime | None = None) -> None:
    """Queue ``trigger``'s run with ``payload``; ``since``: a held run released, journaled with when it was held."""
    live = jobs.live
    agents = live.schedules.blocks[trigger.block].agents if trigger.block in live.schedules.blocks \
        else [trigger.agent]
    jobs.queue.submit(Work(key=f"event:{trigger.id}", label=f"event {trigger.event} ({trigger.id})",
                           run=partial(_run, jobs, trigger, payload, since), models=jobs.model_keys(agents)))


def _run(jobs: Jobs, trigger: Trigger, payload: Payload, since: datetime | None) -> None:
    live, journal = jobs.live, Journal()
    try:
        run_event(jobs.make_runner(journal), trigger, live.agents, live.schedules.blocks, payload, held=since)
    finally:
        journal.close()


def no_trigger(name: str, triggers: list[Trigger]) -> UsageError:
    known = event_names(triggers)
    return UsageError(f"No trigger is declared for the event {name!r}"
                      + (f" (declared: {', '.join(known)})." if known else "; no schedule declares any event."),
                      f'add one to a schedule file: triggers: [{{"on": event, event: {name}, block: BLOCK}}] '
                      "(or agent: AGENT with its task).")
