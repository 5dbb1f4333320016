"""`routine fire AGENT [--task TEXT] [--dry-run]`: run one agent now and say where it wrote."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Callable

from routine.config.loader import agent_named, agent_note_problems, load_agents, load_config
from routine.config.overrides import known_alias, on_model, on_models
from routine.daemon import client
from routine.errors import EXIT_JOB_FAILED, UsageError
from routine.flows.step_setup import STEP_SETUP
from routine.journal import Journal
from routine.journal.status import RunStatus, succeeded
from routine.runner import events as ev
from routine.runner.block import run_block
from routine.runner.events import from_json
from routine.runner.request import StepRequest
from routine.runner.step import Runner
from routine.schedule.loader import block_from_files, declared_block_ids
from routine.terminal.output import print_json
from routine.terminal.progress import ProgressPrinter, StepProgress

if TYPE_CHECKING:
    from routine.config.model import AgentSpec, Config
    from routine.jsonvalue import Parsed
    from routine.runner.block import Resume
    from routine.runner.events import RunEvent
    from routine.runner.request import StepOutcome
    from routine.schedule.model import Block


def run(args: argparse.Namespace) -> int:
    if args.write and not args.model:
        raise UsageError("--write applies to a run on another model.", "add --model ALIAS, or leave out --write.")
    if not args.dry_run:
        code = through_daemon(args)
        if code is not None:
            return code
    config = load_config(args.config)
    if args.model:
        known_alias(config, args.model)
    agents, problems = load_agents(config, require_vault=True)
    blocks = None
    if args.target.lower() not in agents and not agent_note_problems(problems, args.target):
        block = _block_named(config, agents, args.target)
        if block is not None:
            return fire_block(config, agents, block, args)

        blocks = declared_block_ids(config)
    agent = on_model(config, agent_named(agents, problems, args.target, blocks), args.model, args.write)

    request = StepRequest.for_agent(config, agent, args.task, model_override=args.model)
    if args.dry_run:
        runner = _dry_runner(config)
        try:
            outcome = runner.run_step(request, dry_run=True)
        finally:
            runner.close()
        if outcome.error:
            raise outcome.error
        return _print_dry_run(outcome, args.json)

    interactive = live(args)
    journal = Journal()
    runner = Runner(config, journal, on_event=_progress(interactive), setup=STEP_SETUP)
    try:
        outcome = runner.run_step(request, stream=interactive)
    finally:
        runner.close()
        journal.close()
    if args.json:
        print_json(outcome.summary())
    else:
        _print_outcome(outcome)
    return 0 if succeeded(outcome.status) else EXIT_JOB_FAILED


def through_daemon(args: argparse.Namespace, resume: str | None = None) -> int | None:
    """When the daemon runs, the job goes through it: one model manager, one index writer.
    ``resume``: a failed block run to pick up (`routine runs retry`)."""
    interactive = live(args)

    progress = _progress(interactive)
    message = {"op": "fire", "target": args.target, "task": args.task, **({"resume": resume} if resume else {}),
               **({"model": args.model, "write": args.write} if getattr(args, "model", None) else {})}

    def on_line(line: Parsed) -> None:
        event = from_json(line)
        if event is not None:
            progress(event)

    final = client.call(message, on_event=on_line)
    if final is None:
        return None
    if final.get("error") and "result" not in final:
        print(f"routine: {final['error']}" + (f" Fix: {final['fix']}" if final.get("fix") else ""), file=sys.stderr)
        return int(final.get("exit", EXIT_JOB_FAILED))
    result = final["result"]
    if args.json:
        print_json(result)
    else:
        for step in result.get("steps", [result]):
            wrote = step.get("wrote")
            if step.get("question"):
                print(_waits_line(str(step["question"]), step["run"]))
            elif step.get("error"):
                print(f"routine: {step['error']}", file=sys.stderr)
            elif wrote:
                print(_wrote_line(wrote["message"], wrote["outcome"], step["run"]))
    return int(final.get("exit", 0))


def _block_named(config: Config, agents: dict[str, AgentSpec], name: str) -> Block | None:
    """The block called ``name``; a problem in another schedule file does not stop it."""
    return block_from_files(config, agents, name)


def fire_block(
    config: Config,
    agents: dict[str, AgentSpec],
    block: Block,
    args: argparse.Namespace,
    resume: Resume | None = None,
    trigger: str = "manual",
) -> int:
    """Run ``block`` in this process (no daemon), or pick up a failed run of it (``resume``)."""
    if args.task:
        raise UsageError(
            "--task applies to one agent, not a block.",
            f"fire one of the block's agents ({', '.join(block.agents)}) with --task.",
        )

    agents = on_models(config, agents, block.agents, getattr(args, "model", None), getattr(args, "write", False))
    if args.dry_run:
        runner = _dry_runner(config)
        try:
            outcome = run_block(runner, block, agents, dry_run=True)
        finally:
            runner.close()
        for step in outcome.steps:
            if step.error:
                raise step.error
            _print_dry_run(step, args.json)
        return 0

    interactive = live(args)
    journal = Journal()
    runner = Runner(config, journal, on_event=_progress(interactive), setup=STEP_SETUP)
    try:
        outcome = run_block(runner, block, agents, trigger=trigger, stream=interactive, resume=resume)
    finally:
        runner.close()
        journal.close()
    if args.json:
        print_json({"run": outcome.run_id, "status": outcome.status, "steps": [s.summary() for s in outcome.steps]})
    else:
        for step in outcome.steps:
            _print_outcome(step)
    return 0 if ended_well(outcome.status) else EXIT_JOB_FAILED


def _dry_runner(config: Config) -> Runner:
    """A runner for --dry-run: while the daemon runs, searches go to its index (it holds the lock)."""
    memory = client.DaemonMemory() if client.daemon_running() else None
    return Runner(config, journal=None, memory=memory, on_event=_progress(False),
                  setup=STEP_SETUP)  # only indexing progress


def _print_outcome(outcome: StepOutcome) -> None:
    if outcome.question is not None:
        print(_waits_line(outcome.question, outcome.run_id))
    elif outcome.error is None:
        wrote = outcome.wrote
        assert wrote is not None  # a step that did not fail wrote (or proposed) its note
        print(_wrote_line(wrote.message, wrote.outcome, outcome.run_id))
    else:
        print(f"routine: {outcome.error}", file=sys.stderr)
        if outcome.alert:
            print(f"An alert note is in {outcome.alert}. Details: routine runs show {outcome.run_id}", file=sys.stderr)


def _waits_line(question: str, run_id: str | None) -> str:
    """A step asked the person: where the block waits, and how to answer."""
    return (f"The step asked you a question and its block waits (run {run_id}): see the note in Inbox/, "
            f"or answer with `routine answer {question} TEXT`.")


def ended_well(status: str | None) -> bool:
    """The job's exit: a block that waits on the person's answer did what it should so far."""
    return succeeded(status) or status == RunStatus.WAITING.value


def _wrote_line(message: str, outcome: str, run_id: str | None) -> str:
    """The writer's own sentence ("Wrote Alignment in Daily/….md.", "… was already up to date."),
    with the run id to look it up."""
    return message if outcome == "proposal" else f"{message.rstrip('.')} (run {run_id})."


_SAID = {"created": "wrote", "replaced": "rewrote", "appended": "appended to", "unchanged": "left unchanged",
         "proposal": "proposed"}


def live(args: argparse.Namespace) -> bool:
    """Whether a fired job shows its progress: on a terminal, without --json or --quiet."""
    return sys.stderr.isatty() and not args.json and not getattr(args, "quiet", False)


def _progress(interactive: bool) -> Callable[[RunEvent], None]:
    """The runner's events as the terminal shows them (``routine.terminal.progress``); an index pass's
    bar even when the rest is quiet."""
    indexing = ProgressPrinter()
    steps = StepProgress(interactive)

    def on_event(event: ev.RunEvent) -> None:
        if isinstance(event, ev.Indexing):  # the search index catching up before a step's search
            indexing(event.what, event.count, event.total)
        elif isinstance(event, ev.BlockStarted):
            steps.block(event.steps)
        elif isinstance(event, ev.BlockStep):
            steps.step(event.index)
        elif isinstance(event, ev.StepStarted):
            steps.started(event.agent, event.model)
        elif isinstance(event, ev.Phase):  # what the step waits on: loading MODEL, generating, writing
            steps.phase(event.phase)
        elif isinstance(event, ev.Token):
            steps.token()
        elif isinstance(event, ev.Wrote):
            steps.ended(True, f"{_SAID.get(event.outcome, event.outcome)} {event.path}")
        elif isinstance(event, ev.StepFailed):
            steps.ended(False, f"{event.status}: {(event.error.splitlines() or [''])[0]}")
        elif isinstance(event, ev.Retrying):
            steps.note(f"{event.agent}: {event.error} Trying again in {event.wait_s:g} s "
                       f"(attempt {event.attempt} of {event.attempts}) …")
        elif isinstance(event, ev.Asked):
            steps.ended(True, f"asks you: {event.text}")
        elif isinstance(event, ev.Queued) and event.ahead:
            steps.note(f"queued behind {event.ahead} job(s) in the daemon …")

    return on_event


def _print_dry_run(outcome: StepOutcome, as_json: bool) -> int:
    p = outcome.prompt
    assert p is not None  # a dry run stops with the prompt built
    if as_json:
        agent = outcome.agent  # as it would run: the globs its reads and writes are checked against
        scopes = None if agent is None else {"reads": list(agent.reads), "writes": list(agent.writes),
                                             "proposal_writes": list(agent.proposal_writes), "approval": agent.approval}
        print_json({"model": outcome.model, "messages": p.messages, "sources": p.sources,
                    "dropped": p.dropped, "missing": p.missing, "tools": p.tools,
                    "tokens": {"counted": p.counted, "limit": p.limit}, "scopes": scopes})
        return 0
    print(f"# Dry run: nothing sent to {outcome.model}, nothing written.\n")
    for message in p.messages:
        print(f"----- {message['role']} -----")
        print(message["content"])
        print()
    print(f"----- {p.counted} tokens counted, of {p.limit} the window leaves beside the answer -----")
    print("----- sources -----")
    for source in p.sources or ["(none)"]:
        print(f"  {source}")
    for item in p.dropped:
        print(f"  dropped {item['label']}: {item['reason']}")
    for rel in p.missing:
        print(f"  missing {rel}")
    if p.tools:
        from routine.tools.registry import TOOLS  # lazy: jsonschema, which the tools' declarations load

        print("----- tools offered -----")
        for name in p.tools:
            print(f"  {name}: {TOOLS[name].description}" if name in TOOLS else f"  {name}")
    return 0
