"""`routine status` is one record (``DaemonStatus``) whether the daemon runs or not: the same
fields, and its JSON survives the trip through the record with nothing lost."""

from __future__ import annotations

import json

from routine.daemon.status_record import DaemonState, DaemonStatus, HealthState, WatchMode
from test_daemon import MINUTELY, daemon, only_schedule, status

FULL = {
    "state": "running", "pid": 4242, "uptime_s": 3600, "started_at": "2026-11-22T06:00:00+00:00",
    "version": "0.1.0", "commit": "abc1234", "config": "/c/routine.yaml", "vault": "/v",
    "health": {"ok": False, "state": "degraded", "problems": ["ollama (h): not reachable"],
               "checks": [{"name": "ollama", "target": "h", "ok": False, "detail": "not reachable"}]},
    "queue": {"running": ["morning @ 2026-11-22T07:00Z"], "queued": ["fire strategist"]},
    "next_fires": [{"block": "morning", "at": "2026-11-23T07:00:00+01:00", "agents": ["librarian", "strategist"],
                    "held": None},
                   {"block": "evening", "at": "2026-11-24T18:00:00+01:00", "agents": ["scribe"],
                    "held": "skipped: paused, 2026-11-24 is a holiday (`holiday:` in routine.yaml)"}],
    "resident_models": [{"name": "mistral:7b", "size": 4 << 30, "host": "h", "expires_at": "2026-11-22T07:05:00Z",
                         "loaded_by": "routine", "in_use": True}],
    "models_error": None,
    "recent_runs": [{"id": "20261122-070000-3f9a", "kind": "step", "status": "proposal", "block": "morning",
                     "agent": "librarian", "trigger": "schedule", "model": "mistral:7b",
                     "started_at": "2026-11-22T06:00:00.000+00:00", "ended_at": "2026-11-22T06:00:05.000+00:00",
                     "duration_ms": 5000, "error": None,
                     "wrote": {"path": "Daily/x.md", "outcome": "proposal", "proposal": "Drafts/x.md"}}],
    "open_alerts": ["Routine/Alerts/2026-11-22 ollama.md"],
    "dashboard": {"path": "Routine/Dashboard.md", "checked": "2026-11-22T07:00:00.123+00:00", "updated": None},
    "metrics_textfile": "/var/lib/node_exporter/routine.prom",
    "vault_watch": {"mode": "reconcile only", "problem": "the inotify watch limit is reached"},
    "paused": ["everything until Sun 27 Dec 2026 08:00"],
    "reminders": ["#3 Sat 28 Nov 15:00: Call Priya (note, in [[Inbox/Calls]])"],
    "keep_rates": [{"by": "agent", "name": "strategist", "sections": 4, "kept": 0.75, "untouched": 2, "edited": 1,
                    "deleted": 1, "approved": 1, "approved_kept": 1.0}],
    "waiting": [{"id": "q-7f3a9c", "block": "morning", "agent": "strategist", "question": "Which meeting matters?",
                 "choices": ["Board prep", "Hiring sync"], "deadline": "2026-11-22T09:00:00+00:00",
                 "default": "Board prep", "note": "Inbox/Question q-7f3a9c.md"}],
    "service_gaps": ["routine.yaml names 192.168.1.31, which the installed unit does not let through; "
                     "run `sudo routine service install` again"],
}


def same_json(d: dict) -> None:
    record = DaemonStatus.from_json(d)
    assert json.dumps(record.to_json()) == json.dumps(d)  # every field, in its order, with its value
    assert DaemonStatus.from_json(record.to_json()) == record


def test_a_status_round_trips_through_its_record_with_nothing_lost():
    same_json(FULL)
    record = DaemonStatus.from_json(FULL)
    assert record.state is DaemonState.RUNNING and record.health and record.health.state is HealthState.DEGRADED
    assert record.vault_watch and record.vault_watch.mode is WatchMode.RECONCILE_ONLY
    assert record.resident_models and record.resident_models[0].in_use is True
    same_json({**FULL, "resident_models": None, "models_error": "Ollama is not reachable.",
               "vault_watch": {"mode": "inotify", "reconcile_every_s": 600, "pending": 1, "reconciles": 2,
                               "recent": [{"path": "Daily/2026-11-22.md", "outcome": "own write", "at": 1.5}]},
               "dashboard": None})
    same_json({**FULL, "state": "not running", "config_error": "routine.yaml: line 3: not YAML."})


def test_status_without_the_daemon_has_the_daemons_fields(initialised, ollama):
    """One record for both: `routine status --json` with and without a daemon name the same
    fields, in the same order, so a script reading one reads the other."""
    home = initialised
    only_schedule(home, MINUTELY.replace('"* * * * *"', '"0 3 * * *"'))
    with daemon(home):
        home.run("fire", "strategist", check=True)
        running = status(home)
    same_json(running)  # the daemon's own answer, a run and a loaded model in it
    assert running["recent_runs"] and running["resident_models"]
    offline = home.run("status", "--json")
    assert offline.returncode == 3
    stopped = json.loads(offline.stdout)
    assert stopped["state"] == "not running" and stopped["pid"] is None and stopped["health"] is None
    assert list(stopped) == list(running)
    assert [r["id"] for r in stopped["recent_runs"]] == [r["id"] for r in running["recent_runs"]]
    assert stopped["next_fires"][0]["block"] == running["next_fires"][0]["block"] == "every-minute"
