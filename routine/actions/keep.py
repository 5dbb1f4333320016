"""`routine runs keep [--days N]`: how much of each generated section the person kept.

Measures first every section that is 48 h old and not measured yet (the daemon's health monitor
does the same each round), then shows the keep-rate per agent and per block, and each section of
the last ``--days`` days: kept, edited, deleted, superseded, or still waiting for its 48 h.
"""

from __future__ import annotations

import argparse
from datetime import datetime, timedelta

from routine.config.loader import load_config
from routine.daemon import clock
from routine.journal import Journal
from routine.journal.keep import KeepRates
from routine.terminal.output import Clock, Kind, print_json, print_table


def now() -> datetime:
    """The system clock; in tests only, the driven clock (``ROUTINE_TEST_CLOCK``, as the daemon's)."""
    return clock.now()


def keep(args: argparse.Namespace, journal: Journal) -> int:
    config = load_config(args.config)
    at = now()
    clock = Clock.named(config.zone_name())
    rates = KeepRates(journal.db)
    measured = rates.measure_due(config.vault, at)
    since = at - timedelta(days=args.days)
    found, sections = rates.rates(since), rates.sections(since)
    if args.json:
        print_json({"measured_now": measured, "rates": [r.to_json() for r in found], "sections": sections})
        return 0
    if not sections:
        print(f"No generated sections in the last {args.days} days.")
        return 0
    if found:
        print_table([{**r.to_json(), "kept": _share(r.kept), "approved_kept": _share(r.approved_kept)}
                     for r in found],
                    ["by", "name", "sections", "kept", "untouched", "edited", "deleted", "approved", "approved_kept"],
                    keep=("by", "name"))  # the two tell the rows apart
        print()
    print_table([{**s, "kept": "waiting (48 h)" if s["kept"] is None else _share(s["kept"]),
                  "written": clock.show(s["written_at"], "%Y-%m-%d %H:%M")} for s in sections],
                ["written", "agent", "block", "note", "section", "via", "kept", "ending"],
                {"written": clock.label("written")}, kinds={"kept": Kind.ID})  # "waiting (48 h)" whole
    return 0


def _share(kept: float | None) -> str:
    return "-" if kept is None else f"{kept:.0%}"
