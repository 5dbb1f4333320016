"""`routine index [--rebuild]`: bring the vault search index up to date and say what changed."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from routine.config.loader import load_config
from routine.daemon import client
from routine.runner.events import IndexProgress, from_json
from routine.terminal.output import print_json
from routine.terminal.progress import ProgressPrinter

if TYPE_CHECKING:
    from routine.jsonvalue import Parsed


def run(args: argparse.Namespace) -> int:
    progress = ProgressPrinter(quiet=args.quiet or args.json)

    def on_line(line: Parsed) -> None:
        event = from_json(line)
        if isinstance(event, IndexProgress):
            progress(event.what, event.count, event.total)

    try:
        final = client.call({"op": "index", "rebuild": args.rebuild}, on_event=on_line)
        if final is not None:  # the daemon runs: it is the index's one writer
            stats = client.result_of(final)
        else:
            from routine.memory import VaultIndex  # lazy: numpy, only when no daemon indexes

            with VaultIndex(load_config(args.config)) as index:
                stats = (index.rebuild if args.rebuild else index.reconcile)(progress).as_dict()
    finally:
        progress.end()
    if args.json:
        print_json(stats)
    else:
        print(summary(stats))
    return 0


def summary(stats: Parsed) -> str:
    parts = [f"{stats[key]} {key}" for key in ("added", "changed", "removed") if stats[key]]
    what = ", ".join(parts) if parts else "nothing changed"
    line = (f"Search index: {stats['notes']} notes, {stats['chunks']} chunks ({what}; "
            f"{stats['embedded']} chunks embedded, {stats['seconds']:.1f} s).")
    if stats.get("no_text"):
        line += "\nPDFs with no text layer (scans; found by their names only): " + _listed(stats["no_text"])
    if stats.get("unreadable"):
        line += "\nPDFs left out (not readable within routine's limits; the log says why): " \
            + _listed(stats["unreadable"])
    if stats.get("rebuilt") and stats["rebuilt"] not in ("missing", "rebuild asked for"):
        line += f"\nIt was rebuilt from the vault: the index {stats['rebuilt']}."
    return line


def _listed(names: list[str]) -> str:
    return ", ".join(names[:10]) + (" …" if len(names) > 10 else "")
