"""`routine trigger NAME [--input KEY=VALUE …] [--payload FILE|-]`: an outside event (a script, Home
Assistant, a git hook). The triggers declared for it (`"on": event`, `event: NAME` in a schedule
file) run with the payload as data (``schedule.events``: bounded, never a template).

With the daemon running, they are queued through its control socket and the command returns at
once (exit 0: queued; the runs are journaled `trigger: event:NAME`, `routine runs list` shows them).
Without it they run here, one after another, as `routine fire` does, and the exit code says how
they ended. One a pause or a holiday holds waits (``schedule.held``) and fires once when it ends.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from routine import paths
from routine.config.loader import load_agents, load_config
from routine.daemon import client, clock
from routine.daemon.event_op import held_event, no_trigger
from routine.errors import EXIT_JOB_FAILED
from routine.flows.events import run_event
from routine.flows.step_setup import STEP_SETUP
from routine.journal import Journal
from routine.journal.status import succeeded
from routine.jsonvalue import JSONObject
from routine.runner.step import Runner
from routine.schedule import held, pause
from routine.schedule.events import MAX_BYTES, Payload, checked, from_file, from_inputs, triggers_for
from routine.schedule.loader import load_schedules
from routine.terminal.output import print_json

if TYPE_CHECKING:
    from routine.jsonvalue import Parsed


def run(args: argparse.Namespace) -> int:
    payload = _payload(args)
    final = client.call({"op": "event", "event": args.event, "payload": payload.data})
    if final is not None:
        return _said(final, args.json)
    return _in_process(args, payload)


def _payload(args: argparse.Namespace) -> Payload:
    data: JSONObject = {}
    if args.payload_file:
        stdin = sys.stdin.buffer.read(MAX_BYTES + 1) if args.payload_file == "-" else None
        data = from_file(args.payload_file, stdin)
    return checked({**data, **from_inputs(args.input)})


def _said(final: Parsed, as_json: bool) -> int:
    if final.get("error"):
        print(f"routine: {final['error']}" + (f" Fix: {final['fix']}" if final.get("fix") else ""), file=sys.stderr)
        return int(final.get("exit", EXIT_JOB_FAILED))
    result = final["result"]
    if as_json:
        print_json(result)
        return 0
    for item in result["queued"]:
        print(f"queued: {item['trigger']} runs {item['runs']} (`routine runs list` shows it)")
    for item in result["held"]:
        print(f"held: {item['trigger']}: {_waits(item['held'])}")
    return 0


def _in_process(args: argparse.Namespace, payload: Payload) -> int:
    config = load_config(args.config)
    agents, _ = load_agents(config, require_vault=True)
    schedules = load_schedules(config, agents)
    found = triggers_for(schedules.triggers, args.event)
    if not found:
        raise no_trigger(args.event, schedules.triggers)
    zone = ZoneInfo(config.zone_name())
    results: list[dict[str, object]] = []
    failed = False
    journal = Journal()
    runner = Runner(config, journal, setup=STEP_SETUP)
    try:
        for trigger in found:
            now = clock.now().astimezone(zone)
            why = pause.holder(paths.state_dir(), config.holiday, trigger.id, zone)(now)
            if why:  # kept: the daemon fires it when the hold ends (or as it starts, if it has ended)
                held.hold(paths.state_dir(), held_event(trigger, args.event, payload, now, why))
                results.append({"trigger": trigger.id, "held": why})
                continue
            result = run_event(runner, trigger, agents, schedules.blocks, payload)
            failed = failed or not succeeded(str(result.get("status")))
            results.append(result)
    finally:
        runner.close()
        journal.close()
    if args.json:
        print_json({"event": args.event, "ran": results})
    else:
        for result in results:
            runs = result.get("block") or result.get("agent")
            print(f"{result['trigger']}: " + (f"held: {_waits(str(result['held']))}" if "held" in result
                                              else f"{runs} {result['status']} (run {result['run']})"))
    return EXIT_JOB_FAILED if failed else 0


def _waits(why: str) -> str:
    """A held run's line: that it waits, and what holds it (``why``: ``skipped: paused, …``)."""
    return f"waits, to fire once when this ends: {why.removeprefix('skipped: paused, ')}"
