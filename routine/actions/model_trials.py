"""`routine models try CANDIDATE [--against ALIAS] [--runs yesterday|today|ID…] [--now]` and
`routine models scores [--json]`: trials of a model on your own runs, and the scoreboard."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from routine.actions.agent_trial import daemon_now, window_text
from routine.config.loader import load_agents
from routine.config.model import Config
from routine.daemon import client, clock
from routine.journal import Journal
from routine.journal.model_events import ModelEvents
from routine.journal.trials import Trials
from routine.models.client import ModelClient
from routine.models.manager import ModelManager
from routine.terminal.output import Kind, print_json, print_table, say
from routine.trials.scores import COLUMNS, overall, ranked, recommendation, table_rows, write_note
from routine.trials.scores import scores as score

if TYPE_CHECKING:
    from routine.journal.trials import Trial
    from routine.jsonvalue import JSONObject, Parsed

def try_model(config: Config, args: argparse.Namespace) -> int:
    from routine.trials.queue import queue  # lazy: jsonschema, which the tools' declarations load
    from routine.trials.select import days_and_ids, runs_to_try  # lazy: jsonschema, which the tools' declarations load

    daemon = client.daemon_running()  # trials go through its model manager, never beside it
    shift, ids = days_and_ids(args.runs)
    journal = Journal()
    try:
        now = clock.now().astimezone()  # the real clock; `--runs today` moves only the day picked
        runs = runs_to_try(config, journal, args.candidate, now, args.against, ids or None, shift)
        added, before = queue(journal, runs, args.candidate)
        if added and not args.now:
            client.nudge("queued")  # a running daemon looks at its queue now
        done = _run_now(config, journal) if args.now and not daemon else []
    finally:
        journal.close()
    if args.json:
        print_json({"queued": added, "tried_before": before, "runs": [r.id for r in runs],
                    "ran": [_trial_json(t) for t in done]})
        return 0
    if not runs:
        day = "" if ids else f" from {'today' if shift else 'yesterday'}"
        hint = (" `--runs today` tries today's instead, or name run ids (`routine runs list`)." if not ids and not shift
                else " Name run ids instead (`routine runs list` shows them).")
        say(f"No runs{day} to try {args.candidate} on (step runs that called a model"
            f"{' on ' + args.against if args.against else ''}, other than {args.candidate}'s own).{hint}")
        return 0
    say(f"Queued {added} trial(s) of {args.candidate} on {len(runs)} run(s)"
        f"{f' ({before} tried or queued before)' if before else ''}.")
    if args.now and daemon:
        say(f"The daemon runs them {daemon_now()}; `routine trials list` shows how they did.")
    elif not args.now:
        window = window_text(config)
        say(f"The daemon runs them in its trials window ({window}), or now with --now." if window else
            "Add `trials: {window: \"01:00-05:00\"}` to routine.yaml for the daemon to run them at night, "
            "or run them now with --now.")
    for trial in done:
        print(_trial_line(trial))
    return 0


def _run_now(config: Config, journal: Journal) -> list[Trial]:
    """Every queued trial, one at a time, in this process (no daemon runs)."""
    from routine.trials.queue import run_next  # lazy: jsonschema, which the tools' declarations load

    agents, _ = load_agents(config, require_vault=True)
    model_client = ModelClient(config, ModelManager(config, events=ModelEvents(journal.db)))
    done = []
    while (trial := run_next(config, agents, journal, model_client)) is not None:
        done.append(trial)
    return done


def _trial_line(trial: Trial) -> str:
    where = f"{trial.agent} run {trial.run} on {trial.candidate}"
    if trial.result is None:
        return f"  {where}: no answer ({trial.error})"
    c = trial.result["candidate"]
    verdict = "landed (passes every check)" if c["passed"] else "rejected: " + "; ".join(_problems(c))
    figures = ", ".join(f for f in (f"{c['tokens_per_s']} tokens/s" if c.get("tokens_per_s") else "",
                                    f"first token {c['ttft_ms']} ms" if c.get("ttft_ms") is not None else "",
                                    f"{c['answer_chars']} chars", f"load {c['load_ms']} ms" if c.get("load_ms") else "",
                                    f"closeness {c['closeness']:.0%}" if c.get("closeness") is not None else "") if f)
    return f"  {where}: {verdict} ({figures})"


def _problems(judged: Parsed) -> list[str]:
    out: list[str] = []
    if judged.get("reply_ok") is False:
        out.append(f"reply {judged.get('reply_problem')}")
    if judged.get("grounding_ok") is False:
        out.append("unsupported: " + ", ".join(judged.get("findings") or []))
    if judged.get("tool_calls_valid") is False:
        out.append("tool calls: " + ", ".join(judged.get("tool_problems") or []))
    return out


def _trial_json(trial: Trial) -> JSONObject:
    return {"id": trial.id, "run": trial.run, "candidate": trial.candidate, "agent": trial.agent,
            "status": trial.status.value, "model": trial.model, "result": trial.result, "error": trial.error}


def scores(config: Config, as_json: bool) -> int:
    journal = Journal()
    try:
        rows = score(config, Trials(journal.db).all())
    finally:
        journal.close()
    note = write_note(config, rows)
    if as_json:
        print_json({"scores": [r.as_dict() for r in ranked(rows)], "overall": [r.as_dict() for r in overall(rows)],
                    "recommendation": recommendation(rows), "note": note})
        return 0
    if not rows:
        print("No trials yet: `routine models try CANDIDATE` queues some.")
        return 0
    print_table([dict(zip(COLUMNS, cells)) for cells in table_rows([*overall(rows), *ranked(rows)])], list(COLUMNS),
                keep=("agent", "as"), kinds={"model": Kind.TEXT})  # a long model name is cut (each still
    # told apart) before a figure is left out; the agent and its role are never left out
    for sentence in recommendation(rows):
        say(f"\n{sentence}")
    say(f"\nWritten to {note}. Nothing was switched: change an agent's `model:` yourself.")
    return 0
