"""`routine artifact qa NOTE [--by AGENT…]` and `routine artifact new PROJECT TEMPLATE`.

QA runs the reviewers as ordinary, journaled steps and records the verdict in the note; an
intellectual artifact that passes becomes an information product. `new` instantiates a
template of the cognitive-artifact library (`Templates/Artifacts/`) into a case file.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from routine.config.loader import load_agents, load_config
from routine.errors import EXIT_JOB_FAILED, UsageError
from routine.flows.qa import run_qa
from routine.flows.step_setup import STEP_SETUP
from routine.journal import Journal
from routine.projects.library import instantiate, templates
from routine.projects.scaffold import project_named
from routine.runner.step import Runner
from routine.terminal.output import print_json
from routine.vault.notes import resolve_wikilink

if TYPE_CHECKING:
    from routine.config.model import Config


def run(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    if args.artifact_command == "new":
        return _new(config, args)
    if args.artifact_command == "templates":
        return _templates(config, args)
    if args.artifact_command == "qa":
        return _qa(config, args)
    raise UsageError("Say what to do: `routine artifact qa NOTE`, `new PROJECT TEMPLATE` or `templates`.",
                     "see `routine artifact --help`.")


def _note(config: Config, text: str) -> str:
    vault = str(config.vault).rstrip("/") + "/"
    text = text.strip()
    rel = resolve_wikilink(config.vault, text.removeprefix(vault))
    if rel is None:
        raise UsageError(f"There is no note {text!r} in the vault.", "give its path, e.g. 'Projects/Acme/Report.md'.")
    return rel


def _qa(config: Config, args: argparse.Namespace) -> int:
    agents, _ = load_agents(config)
    rel = _note(config, args.note)
    journal = Journal()
    runner = Runner(config, journal, setup=STEP_SETUP)
    try:
        result = run_qa(config, agents, runner, rel, runner.clock(),
                        tuple(a.lower() for a in args.by or ()))
    finally:
        runner.close()
        journal.close()
    if args.json:
        print_json(result.summary())
    else:
        verdict = "passed" + (": it is now an information product" if result.promoted else "") if result.passed \
            else "failed: it stays as it was"
        print(f"QA of {rel} {verdict}.")
        for review in result.reviews:
            runs = ", ".join(review.runs) or str(review.run_id)
            print(f"  {review.reviewer}: {review.verdict} (run{'s' if len(review.runs) > 1 else ''} {runs})")
            if review.failed_sections:
                print("    failed in: " + ", ".join(f"§ {name}" for name in review.failed_sections))
            for finding in review.findings:
                print(f"    - {finding}")
    return 0 if result.passed else EXIT_JOB_FAILED


def _new(config: Config, args: argparse.Namespace) -> int:
    project = project_named(config.vault, args.project)
    rel = instantiate(config.vault, project, args.template, owner=args.owner)
    if args.json:
        print_json({"created": rel})
    else:
        print(f"Created {rel} from the template {args.template}.")
    return 0


def _templates(config: Config, args: argparse.Namespace) -> int:
    names = sorted(templates(config.vault))
    if args.json:
        print_json(names)
    else:
        print("\n".join(names) if names else "No templates in Templates/Artifacts/.")
    return 0
