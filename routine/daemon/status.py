"""What `routine status` shows (and the dashboard, STATUS= and the metrics textfile are made
from): daemon state and health, queue, next fires, resident models, recent runs, open alerts.
"""

from __future__ import annotations

import os
import time
from datetime import datetime, timezone

from routine import __version__
from routine.errors import RoutineError

RECENT_RUNS = 10
RUN_FIELDS = ("id", "kind", "status", "block", "agent", "trigger", "model", "started_at", "ended_at",
              "duration_ms", "error", "wrote")


def snapshot(daemon, health_problems: list[str] | None = None) -> dict:
    from routine import sysmetrics
    from routine.daemon import health
    from routine.vault.presence import vault_problem

    problems = health.problems(daemon) if health_problems is None else health_problems
    resident, models_error = daemon.resident_models()
    config = daemon.live.config
    missing = vault_problem(config.vault)  # not healthy, but no watchdog restart: waiting is the cure
    problems = [*problems, missing] if missing else problems
    return {
        "state": "stopping" if daemon.stopping.is_set() else "running",
        "pid": os.getpid(),
        "uptime_s": int(time.time() - daemon.started_at),
        "started_at": datetime.fromtimestamp(daemon.started_at, timezone.utc).isoformat(timespec="seconds"),
        "version": __version__,
        "commit": sysmetrics.commit(),
        "config": str(config.path),
        "vault": str(config.vault),
        "health": health.summary(daemon, problems),
        "queue": daemon.queue.snapshot(),
        "next_fires": next_fires(daemon),
        "resident_models": resident,
        "models_error": models_error,
        "recent_runs": recent_runs(),
        "open_alerts": open_alerts(config),
        "dashboard": daemon.publisher.dashboard_state() if daemon.publisher else None,
        "metrics_textfile": str(config.metrics_textfile) if config.metrics_textfile else None,
        "vault_watch": _watch_state(daemon),
    }


def next_fires(daemon) -> list[dict]:
    fires = daemon.timers.next_fires() if daemon.timers else {}
    blocks = daemon.live.schedules.blocks
    rows = [{"block": b, "at": t.isoformat(), "agents": list(blocks[b].agents) if b in blocks else []}
            for b, t in fires.items()]
    return sorted(rows, key=lambda f: f["at"])


def recent_runs(limit: int = RECENT_RUNS) -> list[dict]:
    from routine.journal import Journal

    journal = Journal()
    try:
        return [{k: r.as_dict()[k] for k in RUN_FIELDS} for r in journal.recent(limit)]
    finally:
        journal.close()


def open_alerts(config) -> list[str]:
    from routine.vault import read_note

    folder = config.vault / config.layout.alerts
    out = []
    for path in sorted(folder.glob("*.md"), reverse=True)[:200] if folder.is_dir() else []:
        rel = path.relative_to(config.vault).as_posix()
        try:
            if read_note(config.vault, rel).frontmatter.get("status", "open") == "open":
                out.append(rel)
        except (OSError, RoutineError):  # a pipe or a huge file named like an alert
            continue
    return out


def _watch_state(daemon) -> dict:
    watcher = daemon.vault_events.watcher if daemon.vault_events else None
    if watcher is None:
        return {"mode": "off"}
    # What the last saves turned into (a change, routine's own write, unchanged): why a trigger
    # did or did not fire; and how many paths still wait to settle.
    seen = {"pending": watcher.pending(), "reconciles": watcher.reconciles,
            "recent": [s.as_dict() for s in watcher.recent()]}
    if watcher.degraded:
        return {"mode": "reconcile only", "problem": watcher.degraded, **seen}
    return {"mode": "inotify", "reconcile_every_s": int(watcher.reconcile_every), **seen}


def resident_models(config) -> tuple[list[dict] | None, str | None]:
    """Models loaded in every Ollama the config uses, from Ollama's own /api/ps; (None, why)
    when an Ollama cannot be asked."""
    from routine.errors import RoutineError
    from routine.models import ollama_host

    found: list[dict] = []
    for host in config.ollama_hosts:
        try:
            found += [{"name": m.name, "size": m.size, "host": host, "expires_at": m.expires_at}
                      for m in ollama_host.resident(host, timeout=3)]
        except RoutineError as exc:
            return None, exc.message
    return found, None


def status_line(snap: dict, tz=None) -> str:
    """The one line `systemctl status` shows (STATUS=): next fire, resident models, queue."""
    parts = []
    health = snap.get("health") or {}
    if health.get("state") == "degraded":
        parts.append("degraded: " + "; ".join(health.get("problems") or []))
    fires = snap.get("next_fires") or []
    if fires:
        at = datetime.fromisoformat(fires[0]["at"]).astimezone(tz)
        parts.append(f"next {fires[0]['block']} {at:%a %H:%M}")
    else:
        parts.append("nothing scheduled")
    resident = snap.get("resident_models")
    if resident is None:
        parts.append("Ollama not reachable")
    else:
        parts.append("models: " + (", ".join(m["name"] for m in resident) if resident else "none loaded"))
    queue = snap.get("queue") or {}
    running, waiting = len(queue.get("running", [])), len(queue.get("queued", []))
    if running or waiting:
        parts.append(f"{running} running, {waiting} waiting")
    alerts = len(snap.get("open_alerts") or [])
    if alerts:
        parts.append(f"{alerts} open alert{'s' if alerts != 1 else ''}")
    return "; ".join(parts)
