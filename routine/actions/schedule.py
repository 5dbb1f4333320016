"""`routine schedule [list|next [N]|validate]`."""

from __future__ import annotations

import argparse
import sys
from datetime import datetime
from typing import TYPE_CHECKING, NotRequired, TypedDict, cast
from zoneinfo import ZoneInfo

from routine import paths
from routine.config.loader import load_agents, load_config
from routine.daemon import client
from routine.errors import ConfigError
from routine.schedule import pause
from routine.schedule.loader import declared_blocks, in_force, load_schedules
from routine.terminal.output import Kind, print_json, print_table

if TYPE_CHECKING:
    from datetime import timedelta

    from routine.config.model import AgentSpec, Config
    from routine.errors import Problem
    from routine.jsonvalue import Parsed
    from routine.schedule.model import Block, Schedules


def run(args: argparse.Namespace) -> int:
    command = getattr(args, "schedule_command", None) or "list"
    config = load_config(args.config)
    agents, agent_problems = load_agents(config, require_vault=True)
    if command == "validate":
        return _validate(config, agents, agent_problems, args.json)
    schedules, broken = in_force(config, agents)
    kept = _kept_by_daemon(broken)
    if command == "next":
        _next(config, schedules, args.n, args.json, kept)
    else:
        _list(schedules, args.json)
    return _say_broken(broken, kept)


def _kept_by_daemon(broken: dict[str, list[Problem]]) -> dict[str, list[Parsed]]:
    """For each broken file, the running daemon's next fires of its blocks: the last good
    version it keeps in force (nothing when no daemon runs)."""
    if not broken:
        return {}
    from pathlib import Path

    final = client.call({"op": "status"})
    if final is None or "status" not in final:
        return {}
    fires = final["status"].get("next_fires") or []
    kept: dict[str, list[Parsed]] = {}
    for file in broken:
        ids = set(declared_blocks(Path(file)))
        rows = [f for f in fires if f.get("block") in ids]
        if rows:
            kept[file] = rows
    return kept


def _say_broken(broken: dict[str, list[Problem]], kept: dict[str, list[Parsed]]) -> int:
    """Name each broken file after what is in force; exit 2 so scripts notice."""
    for file, problems in broken.items():
        held = kept.get(file)
        keeps = (f"the running daemon keeps its last good version ({', '.join(sorted({r['block'] for r in held}))})"
                 if held else "its blocks are not in force")
        print(f"routine: {file} is broken, so {keeps}; shown above is the rest. "
              f"{len(problems)} problem{'s' * (len(problems) != 1)}, first: {problems[0]} "
              "Fix: correct it; `routine schedule validate` lists every problem.", file=sys.stderr)
    return ConfigError.exit_code if broken else 0


def _validate(config: Config, agents: dict[str, AgentSpec], agent_problems: list[Problem], as_json: bool) -> int:
    try:
        schedules = load_schedules(config, agents)
        problems = list(agent_problems)
    except ConfigError as exc:
        schedules, problems = None, list(agent_problems) + exc.problems
    if as_json:
        print_json({"ok": not problems, "problems": [p.__dict__ for p in problems]})
    elif problems:
        raise ConfigError(problems)
    elif schedules is not None:  # None only when loading raised, with problems
        print(
            f"ok: {len(schedules.blocks)} blocks and {len(schedules.triggers)} triggers in "
            f"{len(schedules.files)} files."
        )
    return 0 if not problems else ConfigError.exit_code


class UpcomingFire(TypedDict):
    """A block's next fire, as `schedule next` and `status` show it."""

    block: str
    at: datetime
    agents: list[str]
    dst_shift: str | None  # a DST shift of this fire, or the daemon's last good version of a broken file
    held: NotRequired[str | None]  # why it does not run (``pause.held_slots``)


def block_zone(block: Block, config: Config) -> ZoneInfo | None:
    name = block.timezone or config.timezone
    return ZoneInfo(name) if name else None


def upcoming(config: Config, schedules: Schedules, n: int, now: datetime | None = None) -> list[UpcomingFire]:
    now = now or datetime.now().astimezone()
    held = pause.held_slots(paths.state_dir(), config.holiday, ZoneInfo(config.zone_name()))
    rows: list[UpcomingFire] = []
    for block in schedules.blocks.values():
        if not block.enabled:
            continue
        tz = block_zone(block, config) or cast(ZoneInfo, now.tzinfo)  # the local offset serves as well
        cursor = now
        for _ in range(n):
            fire = block.cron.next_after(cursor, tz)
            if fire is None:
                break
            rows.append({"block": block.id, "at": fire, "agents": block.agents,
                         "dst_shift": _dst_note(block, fire), "held": held(block.id, fire)})
            cursor = fire
    rows.sort(key=lambda r: r["at"])
    return rows[:n]


def _dst_note(block: Block, fire: datetime) -> str | None:
    local = fire.timetz().replace(tzinfo=None)
    if local not in block.cron.times_of_day():
        return f"moved to {local:%H:%M}: the scheduled time does not exist on this day (DST)"
    if fire.replace(fold=1).utcoffset() != fire.replace(fold=0).utcoffset():
        return "runs once, at the first of the repeated hour (DST)"
    return None


def _next(config: Config, schedules: Schedules, n: int, as_json: bool,
          kept: dict[str, list[Parsed]] | None = None) -> int:
    rows = upcoming(config, schedules, n)
    for held in (kept or {}).values():  # the daemon's last good version of a broken file
        rows += [
            {
                "block": f["block"],
                "at": datetime.fromisoformat(f["at"]).astimezone(),
                "agents": f.get("agents") or [],
                "dst_shift": "last good version (the file is broken)",
            }
            for f in held
        ]
    rows = sorted(rows, key=lambda r: r["at"])[:n]
    if as_json:
        print_json([{**r, "at": r["at"].isoformat()} for r in rows])
        return 0
    table = [{"when": f"{r['at']:%a %Y-%m-%d %H:%M %Z}", "block": r["block"], "agents": ", ".join(r["agents"]),
              "note": "; ".join(n for n in (pause.held_note(r.get("held")), r["dst_shift"] or "") if n)} for r in rows]
    print_table(table, ["when", "block", "agents", "note"])
    return 0


def _list(schedules: Schedules, as_json: bool) -> int:
    if as_json:
        print_json(
            {
                "blocks": [
                    {
                        "id": b.id,
                        "file": b.file,
                        "cron": b.cron.expr,
                        "timezone": b.timezone,
                        "missed": b.missed,
                        "grace": b.grace.total_seconds(),
                        "enabled": b.enabled,
                        "description": b.description,
                        "steps": [
                            {"agent": s.agent, "write": s.describe_write()} for s in b.steps
                        ],
                    }
                    for b in schedules.blocks.values()
                ],
                "triggers": [
                    {"id": t.id, "on": t.on, "path": t.path, "agent": t.agent, "debounce": t.debounce.total_seconds(),
                     **({"event": t.event, "block": t.block} if t.event else {})}
                    for t in schedules.triggers
                ],
            }
        )
        return 0
    rows = [
        {
            "block": b.id,
            "cron": b.cron.expr,
            "missed": f"{b.missed} ({_human(b.grace)})" if b.missed == "catch-up" else b.missed,
            "steps": " → ".join(b.agents),
            "writes": "; ".join(s.describe_write() or "" for s in b.steps if s.write),
        }
        for b in schedules.blocks.values()
    ]
    print_table(rows, ["block", "cron", "missed", "steps", "writes"], kinds={"cron": Kind.ID})
    if schedules.triggers:
        print()
        print_table([{"trigger": t.id, "on": t.on, "path": t.path or f"event {t.event}",
                      "agent": t.agent or f"block {t.block}"} for t in schedules.triggers],
                    ["trigger", "on", "path", "agent"])
    return 0


def _human(delta: timedelta) -> str:
    s = int(delta.total_seconds())
    return f"{s // 86400}d" if s % 86400 == 0 else f"{s // 3600}h" if s % 3600 == 0 else f"{s // 60}m"
