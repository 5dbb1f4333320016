"""`routine status`: the daemon's state, or what can be known without it."""

from __future__ import annotations

from routine.cli.output import print_json, print_table


def run(args) -> int:
    from routine import control

    final = control.call({"op": "status"})
    if final is None:
        status = _offline(args)
    else:
        status = final["status"]
    if args.json:
        print_json(status)
        return 0
    print(f"daemon: {status['state']}" + (f" (pid {status['pid']}, up {status['uptime_s']}s)" if status.get("pid") else ""))
    queue = status.get("queue") or {}
    if queue:
        print(f"queue: {len(queue.get('running', []))} running, {len(queue.get('queued', []))} waiting"
              + "".join(f"\n  running {label}" for label in queue.get("running", [])))
    if status.get("next_fires"):
        print("\nnext fires:")
        print_table([{"at": f["at"][:16].replace("T", " "), "block": f["block"]} for f in status["next_fires"][:8]], ["at", "block"])
    if status.get("recent_runs"):
        print("\nrecent runs:")
        print_table(status["recent_runs"], ["id", "status", "block", "agent", "trigger", "started_at"])
    alerts = status.get("open_alerts") or []
    print(f"\nopen alerts: {len(alerts)}" + "".join(f"\n  {a}" for a in alerts[:10]))
    return 0


def _offline(args) -> dict:
    from routine.journal import Journal

    journal = Journal()
    try:
        recent = [{k: r.row.get(k) for k in ("id", "status", "block", "agent", "trigger", "started_at", "error")}
                  for r in journal.recent(10)]
    finally:
        journal.close()
    status = {"state": "not running", "recent_runs": recent, "next_fires": [], "open_alerts": []}
    try:
        from routine.actions.schedule import upcoming
        from routine.config.loader import load_agents, load_config
        from routine.daemon.status import open_alerts
        from routine.schedule.loader import load_schedules

        config = load_config(args.config)
        agents, _ = load_agents(config)
        status["next_fires"] = [{"block": r["block"], "at": r["at"].isoformat()}
                                for r in upcoming(config, load_schedules(config, agents), 8)]
        status["open_alerts"] = open_alerts(config)
    except Exception as exc:  # status must work even when the config is broken
        status["config_error"] = str(exc)
    return status
