"""Advice that becomes a change (issue 40). A step with ``advice: true`` (the Watcher's **Fix
first**, the weekly capability proposal) may end its reply with fenced ``change`` blocks, each
naming an agent and a change to its note's instructions::

    ```change
    agent: planner
    why: the plans held more than the day on four days this week
    add: Plan at most five hours of blocks.
    ```

(``instructions:`` instead of ``add:`` gives the whole new body.) Each is queued as a prompt trial
of that variant on the agent's step runs of the last ``RECENT`` days; the daemon tries it in its
trials window (one model at a time, through its model manager: ``daemon/trials.py``), and only a
variant that did better becomes a proposal to the agent note, its figures in it
(``trials/advice.py``). A change to a schedule (``schedule: weekly.yaml``, ``block:``, ``set:``
new values of its cron, grace, missed or description) needs no model: it is checked as the daemon
loads schedules and proposed at once with the block's next fires before and after
(``schedule/edit.py``). A block that is no change is said in the log and left as advice.
"""

from __future__ import annotations

import logging
import re
import sqlite3
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from routine.config.model import AgentSpec, Config
from routine.errors import OutsideTextRefused, RoutineError
from routine.journal.prompt_trials import PromptTrialQueue, QueuedVariant
from routine.outside.yamlread import REPLY, load_yaml
from routine.person.notifications import notify, proposal_waiting
from routine.schedule.edit import ScheduleChange, change_of, propose

if TYPE_CHECKING:
    from routine.jsonvalue import Parsed

log = logging.getLogger(__name__)

RECENT = timedelta(days=7)  # the runs a change is tried on: the agent's own of the week before the advice
_KEYS = ("agent", "why", "add", "instructions", "schedule", "block")
_FENCE = re.compile(r"^```change[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


@dataclass(frozen=True)
class Change:
    agent: str
    body: str  # the agent note's instructions as they would become
    why: str


def changes_in(text: str, agents: dict[str, AgentSpec]) -> list[Change | ScheduleChange]:
    """The changes a reply names; each block that is none is said in one sentence and skipped."""
    found = []
    for number, match in enumerate(_FENCE.finditer(text), 1):
        change = _change(match.group(1), agents)
        if isinstance(change, str):
            log.warning("change block %d of the advice is not tried: %s", number, change)
        else:
            found.append(change)
    return found


def _fields(block: str) -> Parsed | str:
    """The block's keys: YAML, or (a small model's `add: Rule: text`, which YAML refuses) one
    `key: value` per line, the value all that follows the first colon."""
    try:  # the one bounded reader: 446 bytes of aliases are refused, not 40 s and 2.4 GB
        data = load_yaml(block, "the change block", REPLY)
    except OutsideTextRefused as exc:
        lines = [line.partition(":") for line in block.splitlines() if line.strip()]
        if all(sep and key.strip() in _KEYS for key, sep, _ in lines):
            return {key.strip(): value.strip().strip('"') for key, _, value in lines}
        said = exc.problem.message.rstrip(".")
        return f"it is not YAML ({said.removeprefix('YAML syntax error: ')})" if said.startswith("YAML syntax") \
            else f"it is not read ({said})"
    return data if isinstance(data, dict) else "it is no list of `agent:`, `why:` and `add:` or `instructions:`"


def _change(block: str, agents: dict[str, AgentSpec]) -> Change | ScheduleChange | str:
    data = _fields(block)
    if isinstance(data, str):
        return data
    if "schedule" in data:
        return change_of(data)
    if not isinstance(data.get("agent"), str):
        return "it names no `agent:` (nor a `schedule:` file)"
    agent = agents.get(data["agent"].strip().lower())
    if agent is None:
        return f"there is no agent {data['agent']!r} (known: {', '.join(sorted(agents))})"
    add, instructions = data.get("add"), data.get("instructions")
    if isinstance(instructions, str) and instructions.strip():
        body = instructions.strip()
    elif isinstance(add, str) and add.strip():
        body = f"{agent.system_prompt.rstrip()}\n{add.strip()}"
    else:
        return "it gives neither `add:` (a rule to add) nor `instructions:` (the whole new instructions)"
    if body.strip() == agent.system_prompt.strip():
        return f"it leaves {agent.name}'s instructions as they are"
    return Change(agent.name, body + "\n", str(data.get("why") or "").strip())


def queue_advice(config: Config, db: sqlite3.Connection, text: str, agents: dict[str, AgentSpec], by: str,
                 run_id: str, now: datetime) -> int:
    """Queue each change to an agent ``text`` names as a prompt trial, and propose each change to a
    schedule that loads (it needs no model: its check is the loader's); how many were new."""
    queue = PromptTrialQueue(db)
    added = 0
    for change in changes_in(text, agents):
        if isinstance(change, ScheduleChange):
            added += _propose_schedule(config, agents, change, by, run_id, now)
            continue
        variant = QueuedVariant(change.agent, change.body, f"advice of run {run_id}", change.why, now - RECENT, now)
        if queue.add(variant, now):
            added += 1
            log.info("advice of run %s: a change to %s is queued for the trials window", run_id, change.agent)
        else:
            log.info("advice of run %s: this change to %s was tried before", run_id, change.agent)
    return added


def _propose_schedule(config: Config, agents: dict[str, AgentSpec], change: ScheduleChange, by: str, run_id: str,
                      now: datetime) -> int:
    try:
        rel = propose(config, agents, change, by, run_id, now)
    except RoutineError as exc:
        log.warning("advice of run %s: the change to %s of %s is not proposed: %s", run_id, change.block,
                    change.file, exc.message)
        return 0
    log.info("advice of run %s: a change to block %s of %s is proposed in %s", run_id, change.block, change.file, rel)
    notify(config, proposal_waiting(config, rel, f"{by} proposes a change to block {change.block} of {change.file}",
                                    f"Waiting for you: {rel}. Approve it in Obsidian (approved: true) or "
                                    "`routine approve`."), now)
    return 1
