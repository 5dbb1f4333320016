"""`routine pause [--until DATE|DURATION|DAY] [BLOCK…]` and `routine resume [BLOCK…]`.

The pause is written to the state dir (`schedule.pause`); the daemon reads it when a block
comes due, so it needs no daemon and holds from the next slot on. Its "now" (the day `tomorrow`
ends) is the daemon's clock, in the daemon's zone.
"""

from __future__ import annotations

import argparse
from zoneinfo import ZoneInfo

from routine import paths
from routine.config.loader import load_agents, load_config
from routine.config.model import Config
from routine.daemon import client, clock
from routine.errors import UsageError, did_you_mean
from routine.schedule import pause
from routine.schedule.loader import in_force
from routine.terminal.output import print_json


def run(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    zone = ZoneInfo(config.zone_name())
    now = clock.now().astimezone(zone)
    _known_names(config, args.blocks)
    state = paths.state_dir()
    if args.command == "resume":
        _, ended = pause.resume(state, args.blocks, now)
        said = ([f"resumed {'everything' if n == pause.EVERYTHING else n}" for n in ended]
                or ["nothing was paused" + (f" of {', '.join(args.blocks)}" if args.blocks else "")])
    else:
        pause.pause(state, args.blocks, pause.until_from(args.until, now), now)
        said = []
    held = pause.in_force(state, config.holiday, now, zone)

    client.call({"op": "held"})  # a running daemon shows it at once (the dashboard); None without one
    if args.json:
        print_json({"said": said, "paused": list(held)})
        return 0
    for line in said:
        print(line)
    for line in held:
        print(pause.shown(line))
    if args.command == "pause" and any("a holiday" not in line for line in held):
        print("Slots that come due are journaled `skipped: paused`; `routine fire` still runs what you fire; "
              "`routine resume` ends it.")
    return 0


def _known_names(config: Config, names: list[str]) -> None:
    """Every name must be a block or trigger of the schedule in force (a typo would pause nothing)."""
    if not names:
        return
    agents, _ = load_agents(config)
    schedules, _ = in_force(config, agents)
    known = {*schedules.blocks, *(t.id for t in schedules.triggers)}
    for name in names:
        if name not in known:
            raise UsageError(f"No block or trigger named {name!r}.{did_you_mean(name, known)}",
                             "`routine schedule list` shows the blocks and triggers.")
