"""`routine agent publish NAME --to LIBRARY` and `routine agent install NAME[@VERSION] --from LIBRARY`."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from routine.agents.library import library_named, version
from routine.agents.install import install as install_version
from routine.agents.publish import publish as publish_agent
from routine.terminal.output import print_json
from routine.errors import UsageError

if TYPE_CHECKING:
    from routine.config.model import AgentSpec, Config


def publish(config: Config, agent: AgentSpec, args: argparse.Namespace) -> int:
    found = publish_agent(config, agent, library_named(config, args.to))
    if args.json:
        print_json({"name": found.name, "version": found.number, "folder": str(found.folder)})
    else:
        lock = " (locked)" if found.manifest.get("locked") else ""
        print(f"Published {found.label}{lock} to the {found.library.name} library ({found.folder}).")
    return 0


def _name_and_version(text: str) -> tuple[str, int | None]:
    name, _, number = text.partition("@")
    if number and not number.isdigit():
        raise UsageError(f"{text!r}: a version is a whole number, as in {name}@2.", "see `routine library show`.")
    return name, int(number) if number else None


def install(config: Config, args: argparse.Namespace) -> int:

    name, number = _name_and_version(args.name)
    done = install_version(config, version(library_named(config, args.library), name, number), force=args.force)
    if args.json:
        print_json({"name": done.version.name, "version": done.version.number, "note": done.note,
                    "files": list(done.files), "replaced": list(done.replaced), "model": done.model_note,
                    "grounding": done.grounding_note})
        return 0
    print(f"Installed {done.version.label} from the {done.version.library.name} library as {done.note}.")
    if done.replaced:
        print(f"Your edited copy was kept in: {', '.join(done.replaced)}.")
    if done.model_note:
        print(f"Note: {done.model_note}")
    if done.grounding_note:
        print(f"Note: {done.grounding_note}")
    return 0
