"""`routine approve [NOTE] [--reject]`: decide a proposal from the terminal, or list those waiting.

Setting `approved: true` (or `false`) on the proposal in Obsidian does the same; either way the
change is applied to the target as it is now, or the proposal says why it could not be.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from routine.config.loader import load_agents, load_config
from routine.daemon import client
from routine.errors import EXIT_JOB_FAILED, RoutineError, UsageError
from routine.flows.approval import decide
from routine.journal import Journal
from routine.journal.decisions import Outcome
from routine.terminal.output import print_json, print_table
from routine.vault.approvals import read_proposal
from routine.vault.notes import resolve_wikilink
from routine.vault.proposals import ProposalStatus

if TYPE_CHECKING:
    from routine.config.model import Config


def run(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    if not args.note:
        return _list(config, args.json)
    rel = _proposal_path(config, args.note)
    decision = not args.reject

    force = bool(getattr(args, "force", False))
    final = client.call({"op": "decide", "rel": rel, "approved": decision, "force": force})
    if final is not None:
        if final.get("error"):
            print(f"routine: {final['error']}" + (f" Fix: {final['fix']}" if final.get("fix") else ""), file=sys.stderr)
            return int(final.get("exit", EXIT_JOB_FAILED))
        result = final["result"]
    else:
        result = _decide_here(config, rel, decision, force)
    if args.json:
        print_json(result)
    else:
        print(result["message"])
    return 0 if Outcome(result["outcome"]).settled else EXIT_JOB_FAILED


def _decide_here(config: Config, rel: str, decision: bool, force: bool = False) -> dict[str, str | None]:
    from datetime import datetime

    agents, _ = load_agents(config, require_vault=True)
    journal = Journal()
    try:
        return decide(config, agents, journal, rel, "cli", datetime.now().astimezone(), decision,
                      force).summary()
    finally:
        journal.close()


def _proposal_path(config: Config, note: str) -> str:
    text = note.strip()
    vault = str(config.vault).rstrip("/") + "/"
    if text.startswith(vault):
        text = text[len(vault):]
    rel = resolve_wikilink(config.vault, text)
    if rel is None:
        raise UsageError(f"There is no note {note!r} in the vault.",
                         "give the proposal's path (e.g. 'Drafts/….md') or its name; `routine approve` lists them.")
    return rel


def _list(config: Config, as_json: bool) -> int:
    folder = config.vault / config.layout.drafts
    rows = []
    for path in sorted(folder.glob("*.md")) if folder.is_dir() else []:
        rel = path.relative_to(config.vault).as_posix()
        try:
            proposal = read_proposal(config.vault, rel)
        except (OSError, RoutineError):  # not a file routine reads (a pipe, a huge file)
            continue
        if proposal is None or proposal.status not in (ProposalStatus.PROPOSED, ProposalStatus.CONFLICT):
            continue
        rows.append({"proposal": rel, "status": proposal.status, "agent": proposal.agent,
                     "target": proposal.target_rel, "section": proposal.section,
                     "why": proposal.properties.get("conflict")})
    if as_json:
        print_json(rows)
    elif not rows:
        print("No proposals are waiting.")
    else:
        print_table(rows, ["proposal", "status", "agent", "target", "section"])
        print("\nApprove with `routine approve NOTE` (or `approved: true` in Obsidian); reject with --reject.")
    return 0
