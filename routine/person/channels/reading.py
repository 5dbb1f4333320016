"""How a two-way channel keeps reading: one blocking read at a time, and after a broken or
refused connection a wait that doubles (1 s … ``LONGEST``), logged once per distinct failure and
again when it reads again. A connection that lived a while starts the backoff over."""

from __future__ import annotations

import logging
import threading
import time
from typing import Callable

from routine.person.channels.http import HttpFailed

log = logging.getLogger("routine.notify")

FIRST = 1.0
LONGEST = 300.0
LIVED = 30.0  # a connection that lasted this long was a good one: the next wait starts at FIRST


def keep_reading(name: str, stop: threading.Event, read: Callable[[], None]) -> None:
    """Call ``read`` (one connection, read to its end) again and again until ``stop`` is set."""
    wait, said = FIRST, None
    while not stop.is_set():
        began = time.monotonic()
        try:
            read()
            error = None
        except HttpFailed as exc:
            error = str(exc)
        if stop.is_set():
            return
        if error and error != said:
            log.warning("answers by %s: %s; trying again, waiting longer each time (at most %.0f s)",
                        name, error, LONGEST)
        elif said and not error:
            log.info("answers by %s: reading again", name)
        said = error
        wait = FIRST if time.monotonic() - began > LIVED else min(wait * 2, LONGEST)
        if stop.wait(wait):
            return
