"""Benchmark: a simulated day of the default schedules (plus manual fires and triggers) against
the stand-in Ollama, with real HTTP loads and a load delay, in virtual time.

Prints, for the scheduled day alone and with unscheduled work mixed in:
- model loads under routine's policy (the real ModelManager + Preloader + ModelClient calls),
- the Belady lower bound for the same request sequence,
- Ollama's own policy with OLLAMA_MAX_LOADED_MODELS=2 (the stand-in keeps Ollama's rules:
  load on demand, keep_alive 5m, evict the idle model that expires soonest),
- peak resident models, and the share of scheduled steps that started on a warm model.

    make bench-residency        # or: .venv/bin/python bench/residency.py [--load-delay 0.3]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO))

from fake_ollama import FakeOllama  # noqa: E402

TZ = ZoneInfo("Europe/Berlin")
DAY = datetime(2026, 11, 25, tzinfo=TZ)  # a Wednesday
STEP = timedelta(minutes=2)
# Unscheduled work of a plausible day: (time, agent, kind).
EXTRA = [("09:10", "librarian", "trigger"), ("09:20", "strategist", "manual"), ("11:05", "builder", "manual"),
         ("12:40", "librarian", "trigger"), ("13:30", "research", "manual"), ("17:45", "scribe", "manual"),
         ("18:15", "librarian", "trigger"), ("21:30", "librarian", "trigger")]


class VirtualClock:
    def __init__(self, now: datetime):
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def time(self) -> float:
        return self.now.timestamp()


def setup_home(root: Path, url: str) -> dict:
    env = {**os.environ, "ROUTINE_CONFIG": str(root / "config/routine.yaml"), "ROUTINE_STATE_DIR": str(root / "state"),
           "OLLAMA_HOST": url, "PYTHONPATH": str(REPO)}
    subprocess.run([sys.executable, "-m", "routine", "init", str(root / "Vault")], env=env, check=True,
                   capture_output=True)
    config = root / "config/routine.yaml"
    config.write_text(config.read_text().replace("# timezone: Europe/Berlin", "timezone: Europe/Berlin"))
    os.environ.update({k: env[k] for k in ("ROUTINE_CONFIG", "ROUTINE_STATE_DIR", "OLLAMA_HOST")})
    return env


def day_uses(config, agents, schedules, with_extra: bool):
    from routine.models.plan import Use, alias_key, upcoming_uses

    uses = upcoming_uses(config, agents, schedules.blocks.values(), DAY, DAY + timedelta(days=1), TZ)
    if with_extra:
        for hhmm, agent, kind in EXTRA:
            h, m = map(int, hhmm.split(":"))
            alias = agents[agent].model
            uses.append(Use(DAY.replace(hour=h, minute=m), alias_key(config, alias), alias, agent, None, 0, kind))
    return sorted(uses, key=lambda u: (u.at, u.block or "", u.step))


def run_ours(config, uses, load_delay: float) -> dict:
    from routine.journal import Journal
    from routine.journal.model_events import ModelEvents
    from routine.models.client import ModelClient
    from routine.models.manager import ModelManager
    from routine.models.plan import Forecast
    from routine.models.preloader import Preloader, learned_lead

    clock = VirtualClock(DAY)
    srv = FakeOllama(max_loaded=3, load_delay=load_delay, clock=clock.time).start()
    config = _with_host(config, srv.url)
    uses = [_rehost(u, srv.url) for u in uses]
    scheduled = [u for u in uses if u.kind == "schedule"]
    journal = Journal(Path(tempfile.mkdtemp()) / "journal.sqlite3")
    events = ModelEvents(journal.db)
    running: set = set()  # models the block in progress still needs after its current step

    def forecast(key, now):
        return now if key in running else Forecast(scheduled).next_use(key, now)

    manager = ModelManager(config, events=events, forecast=forecast, clock=clock, managed=True)
    client = ModelClient(config, manager)
    preloader = Preloader(manager, lambda: config, lambda a, b: [u for u in scheduled if a <= u.at <= b],
                          lambda key: learned_lead(events.load_durations_ms(*key)), clock=clock)
    warm, started = [], time.monotonic()
    wake = preloader.run_due(clock.now)
    for i, use in enumerate(uses):
        while wake <= use.at:  # the preloader's own wake-ups between steps
            clock.now = wake
            wake = preloader.run_due(clock.now)
        clock.now = max(clock.now, use.at)
        rest = [u for u in uses[i + 1:] if u.block == use.block and u.block and u.at - use.at < timedelta(minutes=30)]
        running.clear()
        running.update(u.model for u in rest)
        answer = client.complete(use.alias, [{"role": "user", "content": f"{use.agent}: {use.block or use.kind}"}])
        if rest and rest[0].model != use.model:  # what ModelClient's prefetch does during the step
            alias = config.models[rest[0].alias]
            manager.preload(alias, alias.primary, needed_at=clock.now, reason="preload:next-step")
        if use.kind == "schedule":
            warm.append(answer.warm)
        clock.now += STEP
        running.clear()
        wake = min(wake, preloader.run_due(clock.now))
    reloads = sum(e["kind"] == "reload" for e in srv.events)
    result = {"loads": srv.load_count(), "peak": srv.peak_resident, "warm": sum(warm) / len(warm),
              "reloads": reloads, "seconds": time.monotonic() - started}
    srv.stop()
    journal.close()
    return result


def run_ollama_alone(uses, load_delay: float) -> dict:
    import ollama

    clock = VirtualClock(DAY)
    srv = FakeOllama(max_loaded=2, load_delay=load_delay, clock=clock.time).start()
    client = ollama.Client(host=srv.url)
    warm = []
    for use in uses:
        clock.now = use.at
        was_resident = use.model[1] in srv.resident()
        client.chat(model=use.model[1], messages=[{"role": "user", "content": use.agent}], options={"num_ctx": 8192})
        if use.kind == "schedule":
            warm.append(was_resident)
    result = {"loads": srv.load_count(), "peak": srv.peak_resident, "warm": sum(warm) / len(warm)}
    srv.stop()
    return result


def _with_host(config, url):
    from dataclasses import replace

    models = {n: replace(a, deployments=tuple(replace(d, api_base=url) for d in a.deployments))
              for n, a in config.models.items()}
    return replace(config, ollama_host=url, models=models)


def _rehost(use, url):
    from dataclasses import replace

    return replace(use, model=(url, use.model[1]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--load-delay", type=float, default=0.3, help="real seconds per model load (default 0.3)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        setup = FakeOllama().start()
        setup_home(Path(tmp), setup.url)
        setup.stop()
        from routine.config.loader import load_agents, load_config
        from routine.models.plan import belady_loads
        from routine.schedule.loader import load_schedules

        config = load_config()
        agents, _ = load_agents(config)
        schedules = load_schedules(config, agents)
        print(f"Simulated day: {DAY:%A %Y-%m-%d} ({TZ}), default schedules, max_resident=2, "
              f"load delay {args.load_delay}s per load (real HTTP to the stand-in Ollama)\n")
        print(f"{'scenario':<34}{'steps':>6}{'routine':>9}{'belady':>8}{'ollama':>8}{'peak':>6}"
              f"{'warm(routine)':>15}{'warm(ollama)':>14}{'reloads':>9}")
        for label, extra in (("default schedule", False), ("+ 4 manual fires, 4 triggers", True)):
            uses = day_uses(config, agents, schedules, extra)
            ours = run_ours(config, uses, args.load_delay)
            theirs = run_ollama_alone(uses, args.load_delay)
            bound = belady_loads([u.model[1] for u in uses], 2)
            print(f"{label:<34}{len(uses):>6}{ours['loads']:>9}{bound:>8}{theirs['loads']:>8}{ours['peak']:>6}"
                  f"{ours['warm']:>15.0%}{theirs['warm']:>14.0%}{ours['reloads']:>9}")
        print("\nroutine: loads under routine's manager; belady: the fewest loads possible for the same requests;"
              "\nollama: Ollama alone with OLLAMA_MAX_LOADED_MODELS=2; warm: share of scheduled steps whose model "
              "was resident when they began.")


if __name__ == "__main__":
    main()
