"""What `routine status` shows: daemon state, queue, next fires, recent runs, open alerts."""

from __future__ import annotations

import os
import time


def snapshot(daemon) -> dict:
    from routine.journal import Journal

    journal = Journal()
    try:
        recent = [{k: r.row.get(k) for k in ("id", "status", "block", "agent", "trigger", "started_at", "error")}
                  for r in journal.recent(10)]
    finally:
        journal.close()
    fires = daemon.timers.next_fires() if daemon.timers else {}
    return {
        "state": "stopping" if daemon.stopping.is_set() else "running",
        "pid": os.getpid(),
        "uptime_s": int(time.time() - daemon.started_at),
        "config": str(daemon.live.config.path),
        "vault": str(daemon.live.config.vault),
        "queue": daemon.queue.snapshot(),
        "resident_models": daemon.residency.manager.snapshot() if daemon.residency else [],
        "vault_watch": _watch_state(daemon),
        "next_fires": sorted(({"block": b, "at": t.isoformat()} for b, t in fires.items()), key=lambda f: f["at"]),
        "recent_runs": recent,
        "open_alerts": open_alerts(daemon.live.config),
    }


def open_alerts(config) -> list[str]:
    from routine.vault import read_note

    folder = config.vault / config.layout.alerts
    out = []
    for path in sorted(folder.glob("*.md"), reverse=True)[:200] if folder.is_dir() else []:
        rel = path.relative_to(config.vault).as_posix()
        try:
            if read_note(config.vault, rel).frontmatter.get("status", "open") == "open":
                out.append(rel)
        except OSError:
            continue
    return out


def _watch_state(daemon) -> dict:
    watcher = daemon.vault_watcher
    if watcher is None:
        return {"mode": "off"}
    if watcher.degraded:
        return {"mode": "reconcile only", "problem": watcher.degraded}
    return {"mode": "inotify", "reconcile_every_s": int(watcher.reconcile_every)}
