"""A change to one block of a schedule file, as advice proposes it (issue 40): new values for
its ``cron``, ``grace``, ``missed`` or ``description``, written into the file's own lines (its
comments and the rest of it kept), checked by the schedule loader as the daemon would load it,
and shown with the block's next fires before and after. Applied only when the person approves
the proposal, and only to the block as it was when proposed (``base``: the hash of its values).
"""

from __future__ import annotations

import json
import re
import tempfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from routine.atomicfile import replace as replace_file
from routine.config.model import AgentSpec, Config
from routine.errors import RoutineError, UsageError
from routine.jsonvalue import Parsed
from routine.outside.yamlread import CONFIG, REPLY, load_yaml
from routine.schedule.loader import load_file
from routine.schedule.model import Block
from routine.vault.approvals import SCHEDULE_KIND
from routine.vault.proposals import write_proposal
from routine.vault.sections import content_sha

SETTABLE = ("cron", "grace", "missed", "description")
NEXT = 3  # fires shown before and after


@dataclass(frozen=True)
class ScheduleChange:
    file: str                 # a file in the schedules folder, e.g. "weekly.yaml"
    block: str
    values: dict[str, str]    # settable key → its new value
    why: str = ""


def change_of(data: Parsed) -> ScheduleChange | str:
    """A change block's fields as a schedule change, or why they are none."""
    file, block, values = data.get("schedule"), data.get("block"), data.get("set")
    if not isinstance(file, str) or "/" in file or not file.endswith(".yaml"):
        return "`schedule:` names no file of the schedules folder (e.g. `schedule: weekly.yaml`)"
    if not isinstance(block, str) or not isinstance(values, dict) or not values:
        return "a change to a schedule needs `block:` and `set:` (e.g. `set: {cron: \"30 7 * * *\"}`)"
    unknown = sorted(set(map(str, values)) - set(SETTABLE))
    if unknown:
        return f"`set:` may change only {', '.join(SETTABLE)} of a block, not {', '.join(unknown)}"
    return ScheduleChange(file, block, {str(k): str(v) for k, v in values.items()}, str(data.get("why") or ""))


def values_text(values: dict[str, str]) -> str:
    """The values as the proposal shows them (and as its ``base`` hashes them)."""
    return "".join(f"{key}: {json.dumps(values[key], ensure_ascii=False)}\n" for key in SETTABLE if key in values)


def current_values(config: Config, change: ScheduleChange) -> dict[str, str]:
    """The block's present values of the keys ``change`` sets ("" for one it does not give)."""
    data = load_yaml(_read(config, change.file), change.file, CONFIG) or {}
    raw = (data.get("blocks") or {}).get(change.block) if isinstance(data, dict) else None
    if not isinstance(raw, dict):
        raise UsageError(f"{change.file} has no block {change.block!r}.", "name a block of that file.")
    return {key: str(raw.get(key) or "") for key in change.values}


def checked(config: Config, agents: dict[str, AgentSpec], change: ScheduleChange, now: datetime) -> tuple[str, str]:
    """(the file as changed, the block's next fires before → after); a change the loader refuses
    raises with its located problem."""
    text = _read(config, change.file)
    new = _edited(text, change)
    before, after = _load(config, agents, change.file, text), _load(config, agents, change.file, new)
    if change.block not in after:
        raise UsageError(f"The change would leave no block {change.block!r} in {change.file}.",
                         "change its values only.")
    return new, f"next fires now: {_fires(config, before.get(change.block), now)}; " \
                f"with the change: {_fires(config, after[change.block], now)}"


def apply(config: Config, agents: dict[str, AgentSpec], change: ScheduleChange, base: str, now: datetime) -> str:
    """Write the approved change, if the block's values are as they were when it was proposed."""
    if content_sha(values_text(current_values(config, change))) != base:
        raise RoutineError(f"Block {change.block} of {change.file} changed after this proposal was written, so it "
                           "was not applied.", "reject it, and edit the schedule by hand if you still want it.")
    new, _ = checked(config, agents, change, now)
    replace_file(config.schedules_dir / change.file, new)
    return f"Changed {', '.join(change.values)} of block {change.block} in {change.file}."


def propose(config: Config, agents: dict[str, AgentSpec], change: ScheduleChange, agent: str, run: str,
            now: datetime) -> str:
    """The change, checked, as a proposal in Drafts/ with the block's next fires; its path."""
    _, fires = checked(config, agents, change, now)
    current = values_text(current_values(config, change))
    if current == values_text(change.values):
        raise UsageError(f"It leaves block {change.block} of {change.file} as it is.", "nothing to propose.")
    reason = (f"{change.why.rstrip('.')}. " if change.why else "") + (
        f"Advice of run {run}: a change to block {change.block} of {change.file} (in {config.schedules_dir}), "
        f"checked as the daemon loads schedules; {fires}. Approving writes these values into that block "
        "(their lines replaced); the file's other lines and comments stay.")
    return write_proposal(config.vault, config.layout.drafts, target_rel=f"schedules/{change.file}",
                          section=change.block, proposed=values_text(change.values), current=current, reason=reason,
                          agent=agent, model="advice", run=run, generated=now, sources=[], kind=SCHEDULE_KIND,
                          target_existed=True)


def from_proposal(target: str, block: str | None, proposed: str) -> ScheduleChange:
    """The change an approved schedule proposal carries (its values as the person left them)."""
    link = target.strip().removeprefix("[[").removesuffix("]]")
    data = load_yaml(proposed.strip().strip("`"), "the proposal's values", REPLY) if proposed.strip() else None
    change = change_of({"schedule": link.removeprefix("schedules/"), "block": block, "set": data})
    if isinstance(change, str):
        raise UsageError(f"This schedule proposal cannot be applied: {change}.", "reject it, or fix its values.")
    return change


def _read(config: Config, file: str) -> str:
    path = config.schedules_dir / file
    if not path.is_file():
        raise UsageError(f"There is no schedule file {file} in {config.schedules_dir}.", "name one that is there.")
    return path.read_text(encoding="utf-8")


def _edited(text: str, change: ScheduleChange) -> str:
    """``text`` with the block's keys set in place (a key it lacks added below its name)."""
    lines = text.splitlines(keepends=True)
    head = next((i for i, line in enumerate(lines) if re.match(rf"^(\s+){re.escape(change.block)}:\s*(#.*)?$", line)),
                None)
    if head is None:
        raise UsageError(f"Block {change.block!r} is not in {change.file}.", "name a block of that file.")
    indent = len(lines[head]) - len(lines[head].lstrip())
    end = next((i for i in range(head + 1, len(lines)) if lines[i].strip() and not lines[i].lstrip().startswith("#")
                and len(lines[i]) - len(lines[i].lstrip()) <= indent), len(lines))
    inner = min((len(line) - len(line.lstrip()) for line in lines[head + 1:end] if line.strip()), default=indent + 2)
    for key in reversed([k for k in SETTABLE if k in change.values]):
        value = f"{' ' * inner}{key}: {json.dumps(change.values[key], ensure_ascii=False)}\n"
        at = next((i for i in range(head + 1, end) if re.match(rf"^ {{{inner}}}{key}:", lines[i])), None)
        if at is None:
            lines.insert(head + 1, value)
            continue
        stop = next((i for i in range(at + 1, end) if lines[i].strip()
                     and len(lines[i]) - len(lines[i].lstrip()) <= inner), end)  # a folded value's lines go too
        lines[at:stop] = [value]
    return "".join(lines)


def _load(config: Config, agents: dict[str, AgentSpec], file: str, text: str) -> dict[str, Block]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / file
        path.write_text(text, encoding="utf-8")
        result = load_file(path, config, agents)
    if result.problems:
        problem = result.problems[0]
        raise UsageError(f"{file}:{problem.line or '?'}: {problem.message}", "change it so the schedule loads.")
    return result.blocks


def _fires(config: Config, block: Block | None, now: datetime) -> str:
    if block is None or not block.timed:
        return "none"
    zone = ZoneInfo(block.timezone or config.zone_name())
    fires, at = [], now
    for _ in range(NEXT):
        nxt = block.cron.next_after(at, zone)
        if nxt is None:
            break
        fires.append(nxt)
        at = nxt
    year = now.astimezone(zone).year  # a fire in another year names it: `Fri 01 Jan 2027 03:00`
    shown = [f.astimezone(zone) for f in fires]
    return ", ".join(f"{f:%a %d %b %H:%M}" if f.year == year else f"{f:%a %d %b %Y %H:%M}" for f in shown) or "none"
