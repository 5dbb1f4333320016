"""`routine agent publish NAME --to LIBRARY` and `routine agent install NAME[@VERSION] --from LIBRARY`."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from routine.agents.install import install as install_version
from routine.agents.library import library_named, version
from routine.agents.publish import publish as publish_agent
from routine.errors import UsageError
from routine.terminal.output import print_json

if TYPE_CHECKING:
    from routine.config.model import AgentSpec, Config


def publish(config: Config, agent: AgentSpec, args: argparse.Namespace) -> int:
    done = publish_agent(config, agent, library_named(config, args.to), with_grounding=args.with_grounding,
                         force=args.force)
    found = done.version
    if args.json:
        print_json({"name": found.name, "version": found.number, "folder": str(found.folder),
                    "files": [{"path": path, "source": source, "bytes": size} for path, source, size in done.files],
                    "left_out": list(done.left_out), "author": done.author,
                    "author_from": done.author_from.name.lower()})
        return 0
    lock = " (locked)" if found.manifest.get("locked") else ""
    print(f"Published {found.label}{lock} to the {found.library.name} library ({found.folder}), "
          f"{len(done.files)} file{'s' if len(done.files) != 1 else ''}:")
    width = max(len(path) for path, _, _ in done.files)
    for path, source, size in done.files:
        print(f"  {path:<{width}}  {size:>9,} bytes  from {source}")
    print(f"Author: {done.author or '(none)'} (from {done.author_from.value}).")
    if done.left_out:
        print(f"Left out its grounding ({', '.join(done.left_out)}): add --with-grounding to publish it too.")
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
