"""`routine agent try NAME --variant NOTE [--runs yesterday|today|ID…] [--json]`: a prompt trial.

The agent's real runs are asked again with the variant's instructions, on the agent's own model,
in this process (the daemon's model manager is not shared: stop the daemon first, as for
`models try --now`); each answer is judged beside the one the current note gave. When the variant
does better, a proposal to the agent note carries its figures; approving it changes the note.
"""

from __future__ import annotations

import argparse
from datetime import datetime, timedelta

from routine.cli.output import print_json
from routine.config.model import AgentSpec, Config
from routine.errors import UsageError


def try_prompt(config: Config, agent: AgentSpec, args: argparse.Namespace) -> int:
    from routine import control
    from routine.journal import Journal
    from routine.journal.model_events import ModelEvents
    from routine.journal.prompt_trials import PromptTrial, PromptTrials, version_of
    from routine.models.client import ModelClient
    from routine.models.manager import ModelManager
    from routine.trials.select import agent_runs, days_and_ids
    from routine.trials.variants import load_variant, try_variant

    if control.daemon_running():
        raise UsageError("The daemon is running: a prompt trial calls the models beside it, which could load a "
                         "third model.", "stop the daemon (`systemctl --user stop routine`), try, and start it again.")
    variant = load_variant(config, agent, args.variant)
    shift, ids = days_and_ids(args.runs)
    journal = Journal()
    try:
        now = datetime.now().astimezone() + timedelta(days=shift)
        runs = agent_runs(config, journal, agent.name, now, ids or None)
        if not runs:
            print(f"No runs of {agent.name} to try the variant on (step runs that called a model"
                  f"{'' if ids else ', yesterday' if not shift else ', today'}); `--runs today` or run ids.")
            return 0
        client = ModelClient(config, ModelManager(config, events=ModelEvents(journal.db)))
        verdict = try_variant(config, agent, variant, runs, client)
        proposal = _propose(config, agent, variant, verdict, now) if verdict.better else None
        PromptTrials(journal.db).record(PromptTrial(
            agent.name, version_of(agent.system_prompt), version_of(variant.system_prompt), args.variant,
            len(verdict.tried), verdict.passed("current"), verdict.passed("variant"), verdict.closeness("current"),
            verdict.closeness("variant"), verdict.better, proposal), now)
    finally:
        journal.close()
    return _report(agent, args.variant, verdict, proposal, args.json)


def _propose(config: Config, agent: AgentSpec, variant: AgentSpec, verdict: object, now: datetime) -> str:
    from routine.journal.prompt_trials import version_of
    from routine.trials.variants import Verdict
    from routine.vault.frontmatter import parse_frontmatter
    from routine.vault.notes import load_note_text
    from routine.vault.proposals import write_proposal

    assert isinstance(verdict, Verdict)
    note = load_note_text(config.vault / agent.source)
    current = parse_frontmatter(note.text).body if note is not None else ""
    reason = (f"A prompt trial on {len(verdict.tried)} of {agent.name}'s real runs did better with the variant "
              f"({verdict.figures()}). Approving replaces the instructions of {agent.source} with it; its "
              "properties (model, reads, writes) stay as they are.")
    return write_proposal(config.vault, config.layout.drafts, target_rel=agent.source, section=None,
                          proposed=variant.system_prompt.strip() + "\n", current=current, reason=reason,
                          agent=agent.name, model=f"prompt trial {version_of(variant.system_prompt)}",
                          run=f"trial-{now:%Y%m%d-%H%M%S}", generated=now, sources=[], kind="note",
                          target_existed=True)


def _report(agent: AgentSpec, variant: str, verdict: object, proposal: str | None, as_json: bool) -> int:
    from routine.trials.variants import Verdict

    assert isinstance(verdict, Verdict)
    if as_json:
        print_json({"agent": agent.name, "variant": variant, "runs": [t.run for t in verdict.tried],
                    "passed": {"current": verdict.passed("current"), "variant": verdict.passed("variant")},
                    "closeness": {"current": verdict.closeness("current"), "variant": verdict.closeness("variant")},
                    "better": verdict.better, "proposal": proposal})
        return 0
    print(f"{agent.name} on {len(verdict.tried)} run(s): {verdict.figures()}.")
    if proposal:
        print(f"The variant did better: proposed in {proposal} (approve it to change {agent.source}).")
    else:
        print(f"The variant did not do better; {agent.source} is unchanged and nothing was proposed.")
    return 0
