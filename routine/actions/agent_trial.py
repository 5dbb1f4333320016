"""`routine agent try NAME --variant NOTE [--runs yesterday|today|ID…] [--json]`: a prompt trial.

The agent's real runs are asked again with the variant's instructions, on the agent's own model,
and each answer is judged beside the one the current note gave. With no daemon running, in this
process; while the daemon runs, the trial is queued for its trials window (its model manager, so
no third model is loaded beside the day's work). When the variant does better, a proposal to the
agent note carries its figures; approving it changes the note.
"""

from __future__ import annotations

import argparse
from datetime import datetime
from typing import TYPE_CHECKING

from routine.config.model import AgentSpec, Config
from routine.daemon import client, clock
from routine.journal import Journal
from routine.journal.model_events import ModelEvents
from routine.journal.prompt_trials import PromptTrialQueue, QueuedVariant
from routine.models.client import ModelClient
from routine.models.manager import ModelManager
from routine.runner.step import local_time
from routine.terminal.output import print_json

if TYPE_CHECKING:
    from routine.journal import RunRecord
    from routine.trials.advice import Outcome


def try_prompt(config: Config, agent: AgentSpec, args: argparse.Namespace) -> int:
    from routine.trials.select import agent_runs, days_and_ids, runs_day  # lazy: jsonschema
    from routine.trials.variants import load_variant  # lazy: jsonschema, which the tools' declarations load

    variant = load_variant(config, agent, args.variant)
    shift, ids = days_and_ids(args.runs)
    journal = Journal()
    try:
        now = local_time(config, clock.now())  # the real clock, in routine's zone: the trial and its proposal
        runs = agent_runs(config, journal, agent.name, now, ids or None, shift)
        if not runs:
            print(f"No runs of {agent.name} to try the variant on (step runs that called a model"
                  f"{'' if ids else ', yesterday' if not shift else ', today'}); `--runs today` or run ids.")
            return 0
        if client.daemon_running():
            return _queue(config, journal, agent, variant, args, runs_day(config, now, shift), runs)
        from routine.trials.advice import judge  # lazy: jsonschema, which the tools' declarations load

        model_client = ModelClient(config, ModelManager(config, events=ModelEvents(journal.db)))
        outcome = judge(config, journal, model_client, agent, variant, runs, args.variant, "", now)
    finally:
        journal.close()
    return _report(agent, args.variant, outcome, args.json)


def _queue(config: Config, journal: Journal, agent: AgentSpec, variant: AgentSpec, args: argparse.Namespace,
           day: tuple[datetime, datetime], runs: list[RunRecord]) -> int:
    """The daemon runs: the trial waits for its trials window, on the runs chosen now (`--now`: at once,
    this variant or the same one queued before and not tried yet)."""
    queue = PromptTrialQueue(journal.db)
    added = queue.add(QueuedVariant(agent.name, variant.system_prompt, args.variant, "", *day,
                                    tuple(r.id for r in runs)), local_time(config, clock.now()))
    status = "queued" if added else queue.status_of(agent.name, variant.system_prompt)
    window = window_text(config)
    if added:
        client.nudge("queued")  # the daemon looks at its queue now, not at its next minute
    when = ((daemon_now() if status == "queued" else "now") if args.now else f"in its trials window ({window})"
            if window else "once routine.yaml has a trials window (`trials: {window: \"01:00-05:00\"}`), or now "
            "with --now")
    said = _said(agent.name, args.variant, len(runs), added, status, when)
    if args.json:
        print_json({"agent": agent.name, "variant": args.variant, "queued": added, "runs": [r.id for r in runs],
                    "window": window})
    else:
        print(said)
    return 0


def _said(agent: str, variant: str, runs: int, added: bool, status: str | None, when: str) -> str:
    """What became of the variant asked for: queued now, queued before (and when it runs), being
    tried, or tried before."""
    if added:
        return (f"Queued: the daemon tries {variant} on {runs} run(s) of {agent} {when}; a variant that does "
                "better is proposed then.")
    if status == "queued":
        return f"This variant of {agent} is queued already: the daemon tries it {when}; a better one is proposed then."
    if status == "running":
        return f"The daemon is trying this variant of {agent} now; `routine trials list` shows how it did."
    return (f"This variant of {agent} was tried before (`routine trials list` shows how it did); nothing new "
            "is queued.")


def window_text(config: Config) -> str | None:
    """The trials window as a person writes it (`01:00-05:00`), or None when there is none."""
    span = config.trials.window if config.trials else None
    return f"{span[0]:%H:%M}-{span[1]:%H:%M}" if span else None


def daemon_now() -> str:
    """Ask the running daemon to try what is queued now (`--now`): when it starts, in words."""
    final = client.call({"op": "trials_now"})
    waits = (final or {}).get("result", {}).get("waits") if final else None
    return f"as soon as {waits} is over (it holds the models now)" if waits else "now"


def _report(agent: AgentSpec, variant: str, outcome: Outcome, as_json: bool) -> int:
    verdict, proposal = outcome.verdict, outcome.proposal
    if as_json:
        print_json({"agent": agent.name, "variant": variant, "runs": [t.run for t in verdict.tried],
                    "passed": {"current": verdict.passed("current"), "variant": verdict.passed("variant")},
                    "grounded": {"current": verdict.grounded("current"), "variant": verdict.grounded("variant")},
                    "closeness": {"current": verdict.closeness("current"), "variant": verdict.closeness("variant")},
                    "better": verdict.better, "proposal": proposal})
        return 0
    print(f"{agent.name} on {len(verdict.tried)} run(s): {verdict.figures()}.")
    if proposal:
        print(f"The variant did better: proposed in {proposal} (approve it to change {agent.source}).")
    else:
        print(f"The variant did not do better; {agent.source} is unchanged and nothing was proposed.")
    return 0
