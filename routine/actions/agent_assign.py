"""`routine agent assign|unassign|reassign NAME --project P | --task NOTE`."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from routine.agents import assign as edits
from routine.config.loader import agent_named

if TYPE_CHECKING:
    from routine.config.model import AgentSpec, Config
    from routine.errors import Problem


def assignment(
    config: Config, agents: dict[str, AgentSpec], problems: list[Problem], agent: AgentSpec, command: str,
    args: argparse.Namespace
) -> int:
    if command == "assign":
        if args.project:
            rel = edits.assign_project(config, agent, args.project, args.behaviour)
            print(f"Assigned {agent.name} in {rel}; it may now read and write that case file.")
        else:
            rel = edits.assign_task(config, agent, args.task, args.item)
            print(f"Assigned {agent.name} a task in {rel}; {edits.picks_up(agent, rel)}")
    elif command == "unassign":
        rel = (edits.unassign_project(config, agent, args.project) if args.project
               else edits.unassign_task(config, agent, args.task))
        print(f"Took {agent.name} off {rel}.")
    else:
        to = agent_named(agents, problems, args.to)
        rel = (edits.reassign_project(config, agent, to, args.project) if args.project
               else edits.unassign_task(config, agent, args.task, to=to))
        print(f"Handed {agent.name}'s place in {rel} to {to.name}.")
    return 0
