"""`routine status`: the daemon's state, or what can be known without it."""

from __future__ import annotations

import argparse
from dataclasses import replace
from typing import Any

from routine.actions.runs import WroteValue, wrote_paths
from routine.actions.schedule import upcoming
from routine.config.loader import load_agents, load_config, zone_name_of
from routine.daemon import client
from routine.daemon.status import (
    keep_rates,
    open_alerts,
    paused_now,
    recent_runs,
    reminders_waiting,
    resident_models,
    waiting,
)
from routine.daemon.status_record import DaemonState, DaemonStatus, NextFire, RecentRun
from routine.host import unitcheck
from routine.schedule.loader import load_schedules
from routine.schedule.pause import shown
from routine.terminal.output import Clock, print_json, print_table

EXIT_NOT_RUNNING = 3  # systemctl's (and LSB's) convention: "program is not running"


def run(args: argparse.Namespace) -> int:
    final = client.call({"op": "status"})
    if final is None:
        status = _offline(args)
    elif "status" not in final:
        status = DaemonStatus(DaemonState.NOT_ANSWERING, error=final.get("error"))
    else:
        status = DaemonStatus.from_json(final["status"])
    code = EXIT_NOT_RUNNING if status.state is DaemonState.NOT_RUNNING else 0
    status = replace(status, service_gaps=tuple(_service_gaps(args)))
    if args.json:
        print_json(status.to_json())
        return code
    _print(status, Clock.named(zone_name_of(args.config)))
    for line in status.service_gaps:
        print(f"\nservice: {line}")
    return code


def _service_gaps(args: argparse.Namespace) -> list[str]:
    """Hosts routine.yaml names that the installed unit does not let through, each with the fix."""
    try:
        config = load_config(args.config)
    except Exception:  # noqa: BLE001 - a broken config is status's config_error, said elsewhere
        return []
    return [f"{gap.sentence()}; {gap.fix}" for gap in unitcheck.gaps(config)]


def _print(status: DaemonStatus, clock: Clock) -> None:
    line = f"daemon: {status.state}"
    if status.pid:
        line += f" (pid {status.pid}, up {_human(status.uptime_s or 0)}, routine {status.version}"
        line += f" {status.commit})" if status.commit else ")"
    print(line)
    for line in status.paused:
        print(shown(line))  # each line says what ends it (`schedule.pause.in_force`)
    for question in status.waiting:
        print(f"waiting on you: {question.line(clock.zone)} (`routine answer {question.id} TEXT`)")
    health = status.health
    if health is not None:
        said = {"ok": "ok", "degraded": "DEGRADED", "unhealthy": "NOT OK"}[health.state.value]
        print(f"health: {said}" + "".join(f"\n  {p}" for p in health.problems))
    queue = status.queue
    if queue is not None:
        print(f"queue: {len(queue.running)} running, {len(queue.queued)} waiting"
              + "".join(f"\n  running {label}" for label in queue.running))
    models = status.resident_models
    if models is not None:
        print("models: " + (", ".join(m.name for m in models) if models else "none loaded"))
    elif status.models_error:
        print(f"models: unknown: {status.models_error}")
    if status.next_fires:
        print("\nnext fires:")
        print_table([{"at": clock.show(f.at, _WHEN), "block": f.block, "agents": ", ".join(f.agents),
                      "note": f.held_note} for f in status.next_fires[:8]], ["at", "block", "agents", "note"],
                    {"at": clock.label("at")})
    if status.reminders:
        print("\nreminders:" + "".join(f"\n  {line}" for line in status.reminders))
    if status.recent_runs:
        print("\nrecent runs:")
        print_table([_row(r, clock) for r in status.recent_runs],
                    ["id", "status", "block", "agent", "started", "wrote"], {"started": clock.label("started")})
    alerts = status.open_alerts
    print(f"\nopen alerts: {len(alerts)}" + "".join(f"\n  {a}" for a in alerts[:10]))
    if status.dashboard:
        print(f"dashboard: {status.dashboard.path}")
    if status.config_error:
        print(f"\nconfig: {status.config_error}")


def _row(run: RecentRun, clock: Clock) -> dict[str, Any]:
    return {"id": run.id, "status": str(run.status), "block": run.block, "agent": run.agent,
            "started": clock.show(run.started_at, _WHEN), "wrote": _wrote(run.wrote)}


_WHEN = "%a %Y-%m-%d %H:%M"


def _wrote(wrote: WroteValue) -> str | None:
    if isinstance(wrote, dict):
        return wrote.get("proposal") or wrote.get("path")
    return ", ".join(wrote_paths(wrote)) or None


def _human(seconds: int) -> str:
    if seconds < 120:
        return f"{seconds}s"
    if seconds < 7200:
        return f"{seconds // 60}m"
    return f"{seconds // 3600}h" if seconds < 172800 else f"{seconds // 86400}d"


def _offline(args: argparse.Namespace) -> DaemonStatus:
    """No daemon: the same record, with what can be known without it."""
    status = DaemonStatus(DaemonState.NOT_RUNNING, recent_runs=recent_runs(), keep_rates=keep_rates(),
                          waiting=waiting())
    try:
        config = load_config(args.config)
        agents, _ = load_agents(config)
        fires = tuple(NextFire(r["block"], r["at"], tuple(r["agents"]), r.get("held"))
                      for r in upcoming(config, load_schedules(config, agents), 8))
        status = replace(status, next_fires=fires, open_alerts=open_alerts(config), paused=paused_now(config),
                         reminders=reminders_waiting(config))
        resident, error = resident_models(config)
        return replace(status, resident_models=resident, models_error=error)
    except Exception as exc:  # status must work even when the config is broken
        return replace(status, config_error=str(exc))
