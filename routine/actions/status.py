"""`routine status`: the daemon's state, or what can be known without it."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from routine.cli.output import print_json, print_table

EXIT_NOT_RUNNING = 3  # systemctl's (and LSB's) convention: "program is not running"


def run(args) -> int:
    from routine import control

    final = control.call({"op": "status"})
    if final is None:
        status = _offline(args)
    elif "status" not in final:
        status = {"state": "not answering", "error": final.get("error")}
    else:
        status = final["status"]
    code = EXIT_NOT_RUNNING if status["state"] == "not running" else 0
    if args.json:
        print_json(status)
        return code
    _print(status)
    return code


def _print(status: dict) -> None:
    line = f"daemon: {status['state']}"
    if status.get("pid"):
        line += f" (pid {status['pid']}, up {_human(status['uptime_s'])}, routine {status.get('version')}"
        line += f" {status['commit']})" if status.get("commit") else ")"
    print(line)
    health = status.get("health")
    if health is not None:
        state = health.get("state") or ("ok" if health["ok"] else "unhealthy")
        said = {"ok": "ok", "degraded": "DEGRADED", "unhealthy": "NOT OK"}.get(state, state)
        print(f"health: {said}" + "".join(f"\n  {p}" for p in health["problems"]))
    queue = status.get("queue") or {}
    if queue:
        print(f"queue: {len(queue.get('running', []))} running, {len(queue.get('queued', []))} waiting"
              + "".join(f"\n  running {label}" for label in queue.get("running", [])))
    if "resident_models" in status:
        models = status["resident_models"]
        if models is None:
            print(f"models: unknown: {status.get('models_error') or 'Ollama is not reachable.'}")
        else:
            print("models: " + (", ".join(m["name"] for m in models) if models else "none loaded"))
    if status.get("next_fires"):
        print("\nnext fires:")
        print_table([{"at": _local(f["at"]), "block": f["block"], "agents": ", ".join(f.get("agents") or [])}
                     for f in status["next_fires"][:8]], ["at", "block", "agents"])
    if status.get("recent_runs"):
        print("\nrecent runs:")
        rows = [{**r, "started_at": _local(r.get("started_at")), "wrote": _wrote(r.get("wrote"))} for r in status["recent_runs"]]
        print_table(rows, ["id", "status", "block", "agent", "started_at", "wrote"])
    alerts = status.get("open_alerts") or []
    print(f"\nopen alerts: {len(alerts)}" + "".join(f"\n  {a}" for a in alerts[:10]))
    dashboard = status.get("dashboard")
    if dashboard:
        print(f"dashboard: {dashboard['path']}")
    if status.get("config_error"):
        print(f"\nconfig: {status['config_error']}")


def _local(iso: str | None) -> str:
    if not iso:
        return "-"
    return f"{datetime.fromisoformat(iso).astimezone():%a %Y-%m-%d %H:%M}"


def _wrote(wrote) -> str | None:
    if isinstance(wrote, dict):
        return wrote.get("proposal") or wrote.get("path")
    if isinstance(wrote, list):
        return ", ".join(wrote)
    return wrote


def _human(seconds: int) -> str:
    if seconds < 120:
        return f"{seconds}s"
    if seconds < 7200:
        return f"{seconds // 60}m"
    return f"{seconds // 3600}h" if seconds < 172800 else f"{seconds // 86400}d"


def _offline(args) -> dict:
    from routine.daemon.status import recent_runs

    status: dict[str, Any] = {"state": "not running", "recent_runs": recent_runs(), "next_fires": [], "open_alerts": []}
    try:
        from routine.actions.schedule import upcoming
        from routine.config.loader import load_agents, load_config
        from routine.daemon.status import open_alerts, resident_models
        from routine.schedule.loader import load_schedules

        config = load_config(args.config)
        agents, _ = load_agents(config)
        status["next_fires"] = [{"block": r["block"], "at": r["at"].isoformat(), "agents": r["agents"]}
                                for r in upcoming(config, load_schedules(config, agents), 8)]
        status["open_alerts"] = open_alerts(config)
        status["resident_models"], status["models_error"] = resident_models(config)
    except Exception as exc:  # status must work even when the config is broken
        status["config_error"] = str(exc)
    return status
