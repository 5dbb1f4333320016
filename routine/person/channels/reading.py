"""How a two-way channel keeps reading: one blocking read at a time, and after a broken or
refused connection a wait that doubles (1 s … ``LONGEST``), logged once per distinct failure and
again when it reads again. A connection that lived a while starts the backoff over. ``trouble``
hears of a failure that lasts (``TRIES`` in a row: the daemon raises an alert) and of the end of
it (None: the alert resolves)."""

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
TRIES = 4  # failures in a row (about 15 s of backoff) before ``trouble`` hears of it

# The one connection's read: it calls its argument once the server has accepted (the stream opened,
# a poll answered), then reads to the end; HttpFailed when refused or broken.
Read = Callable[[Callable[[], None]], None]
Trouble = Callable[[str | None], None]


def keep_reading(name: str, stop: threading.Event, read: Read, trouble: Trouble | None = None) -> None:
    """Call ``read`` (one connection, read to its end) again and again until ``stop`` is set."""
    wait, said, failures = FIRST, None, 0

    def connected() -> None:
        nonlocal said, failures
        if said:
            log.info("answers by %s: reading again", name)
        if failures >= TRIES and trouble is not None:
            trouble(None)
        said, failures = None, 0

    while not stop.is_set():
        began = time.monotonic()
        try:
            read(connected)
            error = None
        except HttpFailed as exc:
            error = str(exc)
        if stop.is_set():
            return
        if error:
            failures += 1
            if error != said:
                log.warning("answers by %s: %s; trying again, waiting longer each time (at most %.0f s)",
                            name, error, LONGEST)
            if failures == TRIES and trouble is not None:
                trouble(error)
            said = error
        wait = FIRST if time.monotonic() - began > LIVED else min(wait * 2, LONGEST)
        if stop.wait(wait):
            return
