"""`routine project new|adopt|list|show|assign|unassign`: projects as notes.

Every command edits notes the person could edit in Obsidian (the home note, a task line, a
People/ note); a running daemon sees the edit like any other and follows it.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from routine.config.loader import load_agents, load_config
from routine.projects.model import list_projects
from routine.projects.overview import summary
from routine.projects.scaffold import adopt_project, assign, new_project, project_named, unassign
from routine.schedule.project_cadence import project_blocks
from routine.terminal.output import Clock, print_json, print_table, say

if TYPE_CHECKING:
    from routine.config.model import Config
    from routine.schedule.model import Block


def run(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    command = args.project_command or "list"
    return {"new": _new, "adopt": _adopt, "list": _list, "show": _show, "assign": _assign,
            "unassign": _unassign}[command](config, args)


def _new(config: Config, args: argparse.Namespace) -> int:
    result = new_project(config.vault, args.name, args.goal or "")
    return _done(args, result, f"Created the project {result['project']}: {result['home']} "
                               f"(manager {result['manager']}).")


def _adopt(config: Config, args: argparse.Namespace) -> int:
    result = adopt_project(config.vault, args.name)
    made = ", ".join(result["created"]) or "nothing new; missing properties added"
    return _done(args, result, f"Adopted Projects/{result['project']}/ ({made}).")


def _assign(config: Config, args: argparse.Namespace) -> int:
    result = assign(config.vault, args.name, args.member, task=args.task, behaviour=args.behaviour,
                    role=args.role, due=args.due)
    what = f" the task: {result['task']}" if result["task"] else ""
    how = f" as {result['behaviour']}" if result.get("behaviour") else ""
    return _done(
        args, result, f"{result['member']} ({result['kind']}{how}) is on {result['project']}{';' if what else ''}{what}"
    )


def _unassign(config: Config, args: argparse.Namespace) -> int:
    result = unassign(config.vault, args.name, args.member, task=args.task)
    text = (f"The task is unassigned: {result['task']}" if args.task
            else f"{result['member']} is no longer on {result['project']}.")
    return _done(args, result, text)


def _done(args: argparse.Namespace, result: Mapping[str, object], message: str) -> int:
    if args.json:
        print_json(result)
    else:
        print(message)
    return 0


def _blocks(config: Config) -> dict[str, Block]:
    agents, _ = load_agents(config)
    return project_blocks(config, agents)[0]


def _list(config: Config, args: argparse.Namespace) -> int:
    now, clock = datetime.now(UTC), Clock.named(config.zone_name())
    blocks = _blocks(config)
    rows = [summary(config.vault, p, blocks, now, config.zone_name()) for p in list_projects(config.vault)]
    if getattr(args, "json", False):
        print_json(rows)
        return 0
    if not rows:
        print("No projects yet. `routine project new NAME --goal TEXT` makes one.")
        return 0
    print_table([{"project": r["project"], "status": r["status"], "manager": r["manager"],
                  "members": len(r["members"]), "open tasks": sum(len(v) for v in r["open_tasks"].values()),
                  "next": clock.show(r["next_fires"][0]["at"], _WHEN) if r["next_fires"] else None} for r in rows],
                ["project", "status", "manager", "members", "open tasks", "next"], {"next": clock.label("next")})
    return 0


def _show(config: Config, args: argparse.Namespace) -> int:
    project = project_named(config.vault, args.name)
    info = summary(config.vault, project, _blocks(config), datetime.now(UTC), config.zone_name())
    if args.json:
        print_json(info)
        return 0
    print(f"{info['project']} ({info['status']}) — {info['goal'] or 'no goal set'}")
    print(f"Manager: {info['manager'] or 'none'}   Key results: {', '.join(info['key_results']) or 'none'}")
    print("\nMembers:")
    print_table(
        [
            {"member": m["name"], "kind": m["kind"], "behaviour": m["behaviour"], "role": m["role"]}
            for m in info["members"]
        ],
        ["member", "kind", "behaviour", "role"],
    ) if info["members"] else print("  none")
    print("\nOpen tasks:")
    rows = [{"assignee": who, "task": t["text"], "state": t["state"], "due": t["due"]}
            for who, tasks in info["open_tasks"].items() for t in tasks]
    print_table(rows, ["assignee", "task", "state", "due"]) if rows else print("  none")
    print("\nBlockers: " + ("; ".join(info["blockers"]) or "none"))
    arts = [{"type": kind, "qa": qa, "artifacts": ", ".join(paths)} for kind, by in info["artifacts"].items()
            for qa, paths in by.items()]
    print("\nArtifacts:")
    print_table(arts, ["type", "qa", "artifacts"]) if arts else print("  none")
    print(f"\nLast digest: {info['last_digest'] or 'none yet'}")
    clock = Clock.named(config.zone_name())
    say("Next: " + ("; ".join(f"{f['block']} at {clock.show(f['at'], _WHEN + ' %Z')}" for f in info["next_fires"])
                    or "no cadence"))
    for problem in info["problems"]:
        print(f"Problem: {problem}")
    return 0


_WHEN = "%a %Y-%m-%d %H:%M"  # a next fire, in routine's zone (`Sun 2026-11-29 09:00`)
