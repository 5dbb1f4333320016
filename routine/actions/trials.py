"""`routine trials list [--json]`: every trial, of another model (`models try`) and of a changed
agent note (`agent try`, the Watcher's advice): queued, running, or done with its verdict."""

from __future__ import annotations

import argparse
from typing import Any

from routine.config.loader import zone_name_of
from routine.journal import Journal
from routine.journal.prompt_trials import PromptTrialQueue, PromptTrials
from routine.journal.trials import Trial, Trials
from routine.terminal.output import Clock, Kind, print_json, print_table

COLUMNS = ["kind", "id", "agent", "what", "state", "verdict"]


def run(args: argparse.Namespace) -> int:
    journal, clock = Journal(), Clock.named(zone_name_of(args.config))
    try:
        rows = [_model_row(t) for t in Trials(journal.db).all()]
        rows += [_prompt_row(r, clock) for r in PromptTrials(journal.db).all()]
        rows += [_queued_row(r, clock) for r in PromptTrialQueue(journal.db).unfinished()]
    finally:
        journal.close()
    if args.json:
        print_json({"trials": rows})
        return 0
    if not rows:
        print("No trials yet: `routine models try ALIAS` tries another model, `routine agent try NAME --variant "
              "NOTE` a changed agent note.")
        return 0
    # A prompt trial's id is when it ran; the verdict is what the list is for: cut, never left out.
    print_table(rows, COLUMNS, {"id": clock.label("id")}, keep=("id", "verdict"), kinds={"verdict": Kind.TEXT})
    return 0


def _model_row(trial: Trial) -> dict[str, Any]:
    return {"kind": "model", "id": f"run {trial.run}", "agent": trial.agent or "", "what": trial.candidate,
            "state": trial.status.value, "verdict": _model_verdict(trial)}


def _model_verdict(trial: Trial) -> str:
    if trial.error:
        return f"could not be tried: {trial.error}"
    if trial.result is None:
        return ""
    return "passes every check" if trial.result["candidate"].get("passed") else "rejected (`models scores` says why)"


def _prompt_row(row: dict[str, Any], clock: Clock) -> dict[str, Any]:
    passed = f"{row['variant_passed']}/{row['runs']} vs {row['current_passed']}/{row['runs']} checks passed"
    verdict = (f"better: {passed}; proposed in {row['proposal']}" if row["better"] and row["proposal"] else
               f"not better: {passed}; not proposed")  # the figures first: a cut keeps them
    return {"kind": "prompt", "id": clock.show(row["at"], "%Y-%m-%d %H:%M"), "agent": row["agent"],
            "what": row["variant_note"], "state": "done", "verdict": verdict}


def _queued_row(row: dict[str, Any], clock: Clock) -> dict[str, Any]:
    failed = row["status"] == "failed"
    return {"kind": "prompt", "id": f"queued {clock.show(row['queued_at'], '%Y-%m-%d %H:%M')}", "agent": row["agent"],
            "what": row["origin"], "state": "done" if failed else row["status"],
            "verdict": f"could not be tried: {row['error']}" if failed else ""}
