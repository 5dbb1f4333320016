"""`routine agent new|list|show|assign|unassign|reassign|publish|install|export|import`."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from routine.actions.agent_assign import assignment
from routine.actions.agent_library import install, publish
from routine.actions.agent_trial import try_prompt
from routine.agents.authoring import NewAgent, create
from routine.agents.describe import MemoryShown, details, summary
from routine.agents.smolagents_format import export, import_folder
from routine.config.loader import agent_named, load_agents, load_config
from routine.errors import UsageError
from routine.terminal.output import Clock, print_json, print_table

if TYPE_CHECKING:
    from routine.config.model import AgentSpec, Config


def run(args: argparse.Namespace) -> int:
    command = getattr(args, "agent_command", None) or "list"
    config = load_config(args.config)
    if command == "new":
        return _new(config, args)
    if command == "import":
        return _import(config, args)
    if command == "install":
        return install(config, args)
    agents, problems = load_agents(config)
    if command == "list":
        return _list(agents, args.json)
    agent = agent_named(agents, problems, args.name)
    if command == "show":
        return _show(config, agent, args.json)
    if command == "publish":
        return publish(config, agent, args)
    if command == "export":
        return _export(config, agent, Path(args.dir))
    if command == "try":
        return try_prompt(config, agent, args)

    return assignment(config, agents, problems, agent, command, args)


def _new(config: Config, args: argparse.Namespace) -> int:
    path = create(config, NewAgent(args.name, tuple(args.sources), args.model, tuple(args.tools), args.behaviour,
                                   args.role, args.locked))
    print(f"Made {path.relative_to(config.vault)}; its sandbox is its grounding, "
          f"{config.layout.agents}/{args.name}/ and what you assign it. "
          f"Try `routine agent show {args.name}`.")
    return 0


def _list(agents: dict[str, AgentSpec], as_json: bool) -> int:
    rows = [summary(a) for a in sorted(agents.values(), key=lambda a: a.name)]
    if as_json:
        print_json(rows)
        return 0
    table = [{**row, "kind": ("custom" if row["custom"] else "built-in") + (", locked" if row["locked"] else ""),
              "tools": ", ".join(row["tools"]) or "-"} for row in rows]
    print_table(table, ["name", "kind", "model", "role", "tools"])
    return 0


def _show(config: Config, agent: AgentSpec, as_json: bool) -> int:
    data = details(config, agent)
    if as_json:
        print_json(data)
        return 0
    kind = "custom agent" if agent.custom else "agent"
    print(f"{agent.name} ({kind}{', locked' if agent.locked else ''}) — {agent.role}")
    for key in ("model", "behaviour", "author", "version", "approval", "note"):
        if data.get(key):
            print(f"  {key}: {data[key]}")
    print(f"  tools: {', '.join(data['tools']) or 'none'}")
    for t in data["mcp_tools"]:
        print(f"    {t['problem']}" if t.get("problem") else f"    {t['name']} (MCP server {t['server']}"
              + ("; may change things: " + ("a proposal you approve" if t["proposal"] else "runs directly")
                 if t["changes"] else "; read-only") + ")")
    print(f"  reads: {', '.join(data['reads']) or 'none'}")
    print(f"  writes: {', '.join(data['writes']) or 'none'}")
    if data["proposal_writes"]:
        print(f"  writes only as proposals: {', '.join(data['proposal_writes'])}")
    if data["hidden"] or data["denied"]:
        print(f"  taken out: {len(data['hidden'])} note(s) grounding locked agents, "
              f"{len(data['denied'])} artifact(s) of others")
    print("  grounding:" + ("" if data["grounding"] else " none")
          + (" (locked: content hidden)" if agent.locked and data["grounding"] else ""))
    for item in data["grounding"]:
        state = "" if item["exists"] else " (missing)"
        print(f"    {item['link']}{state}" + (f": {item['preview']}" if item.get("preview") else ""))
    assigned = data["assignments"]
    print(f"  projects: {', '.join(assigned['projects']) or 'none'}")
    print(f"  tasks in: {', '.join(assigned['tasks']) or 'none'}")
    _show_memory(data["memory"])
    runs = data["last_runs"]
    clock = Clock.named(config.zone_name())
    print("  last runs:" + ("" if runs else " none"))
    for r in runs:
        started = clock.show(r["started_at"], "%Y-%m-%d %H:%M:%S %Z")
        print(f"    {r['id']}  {r['status']}  {started}  {r['wrote'] or ''}")
    return 0


def _show_memory(memory: MemoryShown) -> None:
    held = f"{memory['entries']} learned line(s), {memory['own']} of yours" if memory["exists"] else "nothing yet"
    print(f"  memory: {memory['note']} ({held})")
    print("    What routine learns from its days and gives it every run: what you kept or rewrote of its\n"
          "    sections, proposals you decided, the Critic's verdicts, rules you state in a chat with it\n"
          "    (\"Remember: no meetings before 10:00\"). Each line names its source; edit or delete any line\n"
          "    (a deleted one is not learned again), or add your own.")
    for line in memory["newest"]:
        print(f"    {line}")


def _export(config: Config, agent: AgentSpec, folder: Path) -> int:
    dropped = export(config, agent, folder)
    print(f"Wrote {agent.name} to {folder} in smolagents' folder format "
          f"(load it with ToolCallingAgent.from_folder({str(folder)!r})).")
    if dropped:
        print(f"Not exported (routine-only tools): {', '.join(dropped)}.")
    if agent.locked:
        print(
            f"{agent.name} is locked: the folder holds its grounding in full (grounding/, prompts); share it with care."
        )
    return 0


def _import(config: Config, args: argparse.Namespace) -> int:
    folder = Path(args.dir)
    if not folder.is_dir():
        raise UsageError(f"There is no folder {folder}.", "point at a folder an agent was saved or exported to.")
    note, dropped = import_folder(config, folder, args.name)
    print(f"Imported {note.relative_to(config.vault)}.")
    if dropped:
        print(f"Tools an imported agent may not have (or routine has none such) were left out: {', '.join(dropped)}.")
    return 0
