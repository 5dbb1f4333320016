"""`routine library list|show`: the agent libraries and what they hold (grounding of locked
agents named, never previewed)."""

from __future__ import annotations

import argparse
from typing import Any

from routine.actions.agent_library import _name_and_version
from routine.agents.library import agents_in, library_named, preview, version
from routine.config.loader import load_config
from routine.config.model import LibrarySource
from routine.terminal.output import print_json, print_table


def run(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    if getattr(args, "library_command", None) == "show":
        library = library_named(config, args.library)
        if args.agent:
            return _show_agent(library, args.agent, args.json)
        return _show(library, args.json)
    rows: list[dict[str, Any]] = [
        {"name": lib.name, "path": str(lib.path), "agents": len(agents_in(lib)), "tools": list(lib.tools)}
        for lib in config.libraries.values()
    ]
    if args.json:
        print_json(rows)
        return 0
    print_table([{**r, "tools": ", ".join(r["tools"])} for r in rows], ["name", "agents", "path", "tools"])
    return 0


def _show(library: LibrarySource, as_json: bool) -> int:
    rows = agents_in(library)
    if as_json:
        print_json({"name": library.name, "path": str(library.path), "agents": rows})
        return 0
    if not rows:
        print(f"The {library.name} library ({library.path}) holds no agents yet.")
        return 0
    print_table([{**r, "locked": "yes" if r.get("locked") else "", "tools": ", ".join(r.get("tools", [])),
                  "grounding": ", ".join(g.rsplit("/", 1)[-1] for g in r.get("grounding", []))} for r in rows],
                ["name", "version", "locked", "description", "author", "tools", "grounding"])
    return 0


def _show_agent(library: LibrarySource, text: str, as_json: bool) -> int:
    name, number = _name_and_version(text)
    found = version(library, name, number)
    data = {k: v for k, v in found.manifest.items() if k != "files"}
    data["grounding"] = preview(found)
    if as_json:
        print_json(data)
        return 0
    lock = ", locked: grounding content hidden" if data.get("locked") else ""
    print(f"{found.label} — {data.get('description', '')} (by {data.get('author') or 'unknown'}{lock})")
    print(f"  tools: {', '.join(data.get('tools', [])) or 'none'}; model: {data.get('model', {}).get('alias')}")
    for item in data["grounding"]:
        print(f"  {item['file']}" + (f": {item['preview']}" if item.get("preview") else ""))
    return 0

