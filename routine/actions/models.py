"""`routine models [ps|plan|try|scores|tokens]`: what is resident now, the model-load plan for the coming
day, how well each alias's prompts are counted; trials and their scoreboard (`actions/model_trials.py`)."""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from routine import paths
from routine.actions import model_trials
from routine.config.loader import load_agents, load_config
from routine.errors import RoutineError
from routine.journal import Journal
from routine.journal.model_events import ModelEvents
from routine.journal.token_samples import TokenSamples
from routine.models import providers
from routine.models.calibration import Calibration
from routine.models.plan import belady_loads, key_label, simulate_ollama, simulate_ours, upcoming_uses
from routine.models.preloader import learned_lead
from routine.schedule import pause
from routine.schedule.loader import load_schedules
from routine.terminal.output import Clock, Kind, print_json, print_table, say

if TYPE_CHECKING:
    from routine.config.model import Config
    from routine.jsonvalue import Parsed
    from routine.models.plan import Decision, ModelKey


def run(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    command = getattr(args, "models_command", None)
    if command == "plan":
        return _plan(config, args.hours, args.json)
    if command in ("try", "scores"):
        return model_trials.try_model(config, args) if command == "try" else model_trials.scores(config, args.json)
    if command == "tokens":
        return _tokens(config, args.json)
    return _ps(config, args.json)


def _ps(config: Config, as_json: bool) -> int:
    journal = Journal()
    try:
        events = ModelEvents(journal.db)
        rows, unreachable, who = [], [], []
        clock = Clock.named(config.zone_name())
        for host in config.managed_hosts:
            try:
                resident = providers.resident(host)
            except RoutineError as exc:
                unreachable.append({"host": host, "error": exc.message, "fix": exc.fix})
                continue
            for r in resident:
                ours = events.last_load(host, r.name)
                rows.append({"host": host, "model": r.name, "context": r.context_length,
                             "size_gib": round(r.size / 2**30, 1) if r.size else None,
                             "loaded_by": _loaded_by(ours), "run": (ours or {}).get("run_id"),
                             "expires": _expires(r.expires_at, clock)})
                who.append(_loaded_by(ours, with_run=False))
    finally:
        journal.close()
    if as_json:
        print_json({"resident": rows, "unreachable": unreachable, "max_resident": config.max_resident})
        return 0 if not unreachable else 1
    for u in unreachable:
        print(f"routine: {u['error']} Fix: {u['fix']}")
    if not rows:
        print("No models are resident." if not unreachable else "")
    else:
        print_table([{**r, "loaded_by": by} for r, by in zip(rows, who)],  # the run in a column of its own, never cut
                    ["model", "host", "context", "size_gib", "loaded_by", "run", "expires"])
        print(f"\n{len(rows)} resident (routine keeps at most {config.max_resident} per host).")
    return 0 if not unreachable else 1


def _loaded_by(event: Parsed | None, with_run: bool = True) -> str:
    if event is None:
        return "another client"
    return f"routine ({event['reason']}{', run ' + str(event['run_id']) if with_run and event.get('run_id') else ''})"


def _expires(text: str | None, clock: Clock) -> str:
    if not text:
        return "-"
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return text
    if when.year > 2100:
        return "never (routine unloads it)"
    return clock.show(when, "%H:%M:%S %Z")


def _plan(config: Config, hours: int, as_json: bool) -> int:
    agents, _ = load_agents(config, require_vault=True)
    schedules = load_schedules(config, agents)
    tz = ZoneInfo(config.zone_name())
    now = datetime.now(timezone.utc)
    check = pause.held_slots(paths.state_dir(), config.holiday, tz)
    skipped: dict[tuple[str, datetime], str] = {}

    def held(block: str, at: datetime) -> str | None:
        why = check(block, at)
        if why:
            skipped[(block, at)] = why
        return why

    uses = upcoming_uses(config, agents, schedules.blocks.values(), now, now + timedelta(hours=hours), tz, held=held)
    clock = Clock(tz)
    held_rows = [{"block": block, "at": at.isoformat(), "why": why} for (block, at), why in sorted(skipped.items())]
    slots = config.max_resident
    ours = simulate_ours(uses, slots, idle_unload=timedelta(seconds=config.idle_unload))
    naive = simulate_ollama(uses, slots)
    bound = belady_loads([u.model for u in uses], slots)
    leads = _leads(config, {u.model for u in uses})
    named = {u.model: u.alias for u in uses}  # a model by the alias routine.yaml calls it (short, never cut)
    rows = []
    for mine, theirs in zip(ours.decisions, naive.decisions):
        use = mine.use
        evicted = f", evicts {named.get(theirs.evicted, key_label(theirs.evicted))}" if theirs.evicted else ""
        rows.append(
            {
                "at": use.at.astimezone(tz).strftime("%a %H:%M"),
                "block": use.block,
                "agent": use.agent,
                "alias": use.alias,
                "routine": _ours_cell(mine, leads[use.model], tz),
                "ollama alone": "warm" if theirs.warm else "load" + evicted,
                "model": key_label(use.model),
            }
        )
    summary = {"hours": hours, "steps": len(uses), "max_resident": slots,
               "loads": {"routine": ours.loads, "belady_bound": bound, "ollama_alone": naive.loads,
                         "idle_unloads": ours.idle_unloads},
               "warm_share": {"routine": round(ours.warm_share, 3), "ollama_alone": round(naive.warm_share, 3)}}
    if as_json:
        print_json({**summary, "steps_detail": rows, "held": held_rows})
        return 0
    for block in dict.fromkeys(r["block"] for r in held_rows):  # paused or a holiday: no run, no model loaded
        times = [r for r in held_rows if r["block"] == block]
        more = f" and {len(times) - 1} more slot{'s' * (len(times) > 2)}" if len(times) > 1 else ""
        print(f"held: {block} at {clock.show(times[0]['at'], '%a %H:%M')}{more}: "
              f"{times[0]['why'].removeprefix('skipped: ')}")
    if not rows:
        print(f"No scheduled steps in the next {hours} h.")
        return 0
    # "preload 19:59": its time is never cut; the model's full name, the widest, goes first on a narrow terminal
    print_table(rows, ["at", "block", "agent", "alias", "routine", "ollama alone", "model"],
                kinds={"routine": Kind.ID, "alias": Kind.ID, "model": Kind.ID}, spare=("model",))
    idle = (f"; routine also unloads idle models {ours.idle_unloads} time(s) (ollama.idle_unload), "
            "which frees memory at the cost of a later load" if ours.idle_unloads else "")
    say(f"\nModel loads in the next {hours} h: {ours.loads} with routine's plan "
          f"(the fewest possible with models kept loaded: {bound}{idle}), {naive.loads} with Ollama alone "
          f"(OLLAMA_MAX_LOADED_MODELS={slots}, keep_alive 5m).")
    say(
        f"Steps starting on a warm model: {ours.warm_share:.0%} with routine, {naive.warm_share:.0%} with Ollama alone."
    )
    return 0


def _ours_cell(decision: Decision, lead: timedelta, tz: ZoneInfo) -> str:
    if not decision.loaded:
        return "warm"
    cell = f"preload {(decision.use.at - lead).astimezone(tz):%H:%M}"
    return cell + (f", evicts {decision.evicted[1]}" if decision.evicted else "")


def _leads(config: Config, keys: Iterable[ModelKey]) -> dict[ModelKey, timedelta]:
    journal = Journal()
    try:
        events = ModelEvents(journal.db)
        return {k: learned_lead(events.load_durations_ms(*k)) for k in keys}
    finally:
        journal.close()


def _tokens(config: Config, as_json: bool) -> int:
    """Per alias: the method its prompts are counted with, and the mean error against the server's counts."""
    journal = Journal()
    try:
        calibration = Calibration(TokenSamples(journal.db))
        rows: list[dict[str, object]] = []
        for alias in config.models.values():
            acc = calibration.accuracy(alias.model, alias.tokenizer)
            rows.append({"alias": alias.name, "model": alias.primary.served_name, "method": acc.method.value,
                         "samples": acc.samples, "error_pct": acc.error_now, "error_when_sent_pct": acc.error_sent,
                         "mean error": _pct(acc.error_now), "when sent": _pct(acc.error_sent)})
    finally:
        journal.close()
    if as_json:
        print_json({"aliases": [{k: v for k, v in r.items() if k not in ("mean error", "when sent")} for r in rows]})
        return 0
    print_table(rows, ["alias", "samples", "mean error", "method", "when sent", "model"])
    say("\nMean error: the count as it is now against what the server reported for the latest requests "
        "(positive: counted high, the safe side). When sent: as counted then.")
    return 0


def _pct(value: float | None) -> str | None:
    return None if value is None else f"{value:+.1f}%"
