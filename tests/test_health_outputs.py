"""A degraded daemon says which dependency is down in every output: STATUS=, the dashboard,
the metrics textfile (pure renderers, fed the status snapshot's health)."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone

from routine.daemon import dashboard, promfile
from routine.daemon.status_record import DaemonState, DaemonStatus, status_line

DOWN = "ollama (http://127.0.0.1:11434): not reachable: Ollama is not reachable at http://127.0.0.1:11434."
SNAP = DaemonStatus.from_json({
    "state": "running", "version": "0.1.0", "started_at": "2026-11-22T07:00:00+00:00",
    "health": {"ok": False, "state": "degraded", "problems": [DOWN],
               "checks": [{"name": "ollama", "target": "http://127.0.0.1:11434", "ok": False, "detail": "x"},
                          {"name": "vault", "target": "/v", "ok": True, "detail": ""}]},
    "next_fires": [], "resident_models": None, "models_error": "not reachable", "queue": {},
    "recent_runs": [], "open_alerts": [],
})


def test_status_line_starts_with_what_is_degraded():
    assert status_line(SNAP, timezone.utc).startswith(f"degraded: {DOWN}; nothing scheduled")


def test_dashboard_says_degraded_and_as_of(tmp_path):
    at = datetime(2026, 11, 22, 8, 5, tzinfo=timezone.utc)
    text = dashboard.render(SNAP, tmp_path, timezone.utc, as_of=at)
    assert f"running since Sun 22 Nov 07:00: degraded: {DOWN} (as of Sun 22 Nov 08:05)." in text
    stopped = dashboard.render(replace(SNAP, state=DaemonState.STOPPED), tmp_path, timezone.utc, as_of=at)
    assert "stopped at Sun 22 Nov 08:05" in stopped and "running since" not in stopped


def test_metrics_say_degraded_and_which_check_is_down():
    text = promfile.render(SNAP, [])
    assert "routine_healthy 1" in text  # degraded is not unhealthy: the watchdog is still fed
    assert "routine_degraded 1" in text
    assert 'routine_dependency_up{check="ollama",target="http://127.0.0.1:11434"} 0' in text
    assert 'routine_dependency_up{check="vault",target="/v"} 1' in text
