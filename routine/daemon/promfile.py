"""The Prometheus textfile: routine's counters and gauges for node_exporter's textfile collector.

node_exporter reads every ``*.prom`` file in its ``--collector.textfile.directory``; the file
is replaced atomically (a hidden temp file beside it, fsynced, renamed) so it never reads half
of one, and only when its content changed. Counters come from the run journal, so they
survive restarts; gauges from the daemon's state.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, TypedDict

from routine.atomicfile import replace_if_changed
from routine.daemon.status_record import DaemonStatus, HealthState, QueueSnapshot

log = logging.getLogger(__name__)


def _escape(value: object) -> str:
    return str(value).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(labels: dict[str, Any]) -> str:
    if not labels:
        return ""
    return "{" + ",".join(f'{k}="{_escape(v)}"' for k, v in labels.items()) + "}"


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


# One agent's totals over its step runs (``last``: when its last run ended, ISO).
_Totals = TypedDict("_Totals", {"in": int, "out": int, "ms": int, "load": int, "last": str | None})


def _seconds(iso: str | None) -> float | None:
    if not iso:
        return None
    try:
        return datetime.fromisoformat(iso).timestamp()
    except ValueError:
        return None


class _Families:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def add(self, name: str, kind: str, help_text: str, samples: Sequence[tuple[dict[str, Any], float]]) -> None:
        if not samples:
            return
        self.lines += [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}"]
        self.lines += [f"{name}{_labels(labels)} {_number(value)}" for labels, value in samples]


def render(snapshot: DaemonStatus, totals: list[dict[str, Any]]) -> str:
    """The textfile's content from ``routine.daemon.status.snapshot`` and ``Journal.totals``."""
    f = _Families()
    f.add("routine_build_info", "gauge", "The running routine: version and git commit (value is always 1).",
          [({"version": snapshot.version or "", "commit": snapshot.commit or ""}, 1)])
    if snapshot.started_at:
        f.add("routine_start_time_seconds", "gauge", "When the daemon started (Unix time).",
              [({}, round(snapshot.started_at.timestamp()))])
    health = snapshot.health
    f.add("routine_healthy", "gauge", "1 while the health check passes (the systemd watchdog is fed), else 0.",
          [({}, 0 if health and health.state is HealthState.UNHEALTHY else 1)])
    f.add("routine_degraded", "gauge", "1 while a dependency is down or a thread was restarted recently, else 0.",
          [({}, 1 if health and health.state is HealthState.DEGRADED else 0)])
    f.add("routine_dependency_up", "gauge", "1 while a dependency check passes (Ollama per host, the vault, "
          "free space, the scheduler, the watcher), else 0.",
          [({"check": c.name, "target": c.target}, 1 if c.ok else 0) for c in (health.checks if health else ())])
    queue = snapshot.queue or QueueSnapshot()
    f.add("routine_queue_depth", "gauge", "Jobs in the work queue, running and waiting.",
          [({"state": "running"}, len(queue.running)), ({"state": "waiting"}, len(queue.queued))])
    resident = snapshot.resident_models
    if resident is not None:
        f.add("routine_resident_models", "gauge", "Models loaded in Ollama now.", [({}, len(resident))])
        f.add("routine_resident_model_bytes", "gauge", "Memory of each loaded model, as Ollama reports it.",
              [({"model": m.name}, m.size or 0) for m in resident])
    f.add("routine_open_alerts", "gauge", "Alert notes in the vault still marked open.",
          [({}, len(snapshot.open_alerts))])
    fires = [({"block": fire.block}, round(fire.at.timestamp())) for fire in snapshot.next_fires]
    f.add("routine_next_fire_timestamp_seconds", "gauge", "When each schedule block runs next (Unix time).", fires)

    steps = [t for t in totals if t["kind"] == "step"]
    blocks = [t for t in totals if t["kind"] == "block"]
    f.add("routine_runs_total", "counter", "Agent runs (steps) finished, by agent and outcome.",
          [({"agent": t["name"], "status": t["status"]}, t["runs"]) for t in steps])
    f.add(
        "routine_block_runs_total",
        "counter",
        "Schedule block runs, by block and outcome (missed and skipped included).",
        [({"block": t["name"], "status": t["status"]}, t["runs"]) for t in blocks],
    )
    by_agent: dict[str, _Totals] = {}
    for t in steps:
        agg = by_agent.setdefault(t["name"], {"in": 0, "out": 0, "ms": 0, "load": 0, "last": None})
        agg["in"] += t["tokens_in"]
        agg["out"] += t["tokens_out"]
        agg["ms"] += t["duration_ms"]
        agg["load"] += t["load_ms"]
        agg["last"] = max(filter(None, (agg["last"], t["last_ended"])), default=None)
    f.add("routine_tokens_total", "counter", "Tokens sent to and received from models, by agent.",
          [s for name, a in by_agent.items() for s in (({"agent": name, "direction": "in"}, a["in"]),
                                                       ({"agent": name, "direction": "out"}, a["out"]))])
    f.add("routine_run_seconds_total", "counter", "Time spent in agent runs, by agent.",
          [({"agent": name}, a["ms"] / 1000) for name, a in by_agent.items()])
    f.add("routine_model_load_seconds_total", "counter", "Time Ollama spent loading models for runs, by agent.",
          [({"agent": name}, a["load"] / 1000) for name, a in by_agent.items()])
    f.add("routine_last_run_timestamp_seconds", "gauge", "When the agent's last run ended (Unix time).",
          [({"agent": name}, round(ts)) for name, a in by_agent.items() if (ts := _seconds(a["last"])) is not None])
    return "\n".join(f.lines) + "\n"


def write(path: Path, text: str) -> bool:
    """Replace the file atomically when ``text`` differs; True if it was written."""
    return replace_if_changed(path, text, mode=0o644)  # node_exporter runs as another user
