"""`routine runs retry ID`: resume a failed or interrupted block run from its failed step.

The steps that ended well are not run again: their outputs (from the journal) feed the steps
after them, and the new step runs join the same block run. Through the daemon when it runs.
"""

from __future__ import annotations

import argparse

from routine.actions.fire import fire_block, through_daemon
from routine.config.loader import load_agents, load_config
from routine.errors import UsageError
from routine.journal import Journal
from routine.journal.runs import RunRecord
from routine.runner.resume import block_run_of, resume_point
from routine.schedule.loader import block_from_files


def retry(args: argparse.Namespace, journal: Journal, run: RunRecord) -> int:
    run = block_run_of(journal, run)
    fire_args = argparse.Namespace(target=run.block, task=None, dry_run=False, json=args.json, config=args.config)

    code = through_daemon(fire_args, resume=run.id)
    if code is not None:
        return code

    config = load_config(args.config)
    agents, _ = load_agents(config, require_vault=True)
    assert run.block is not None  # block_run_of gave a block's run
    block = block_from_files(config, agents, run.block)
    if block is None:
        raise UsageError(f"Block {run.block} of run {run.id} is no longer in the schedules.",
                         "restore it in its schedule file, or fire its agents one by one.")
    return fire_block(config, agents, block, fire_args, resume=resume_point(journal, run, block), trigger="retry")
