"""The daemon's clock: the system clock, or, in tests only, a clock the test drives.

The injection point is the environment variable ``ROUTINE_TEST_CLOCK``: the path of a file that
holds a number of seconds (``90.5``). While it is set, the daemon's clock is the system clock
moved forward by that many seconds; the test writes a larger number to jump ahead (to just
before a slot, say) and the daemon sees it within ``POLL_SECONDS``: its timers are planned again
and every block is asked what it owes, as after a restart. The slot then fires on the real timer,
so a test of per-minute blocks waits seconds, not minutes. Without the variable (production)
none of this runs: the clock is ``datetime.now(timezone.utc)`` and the timers plan in real time.
"""

from __future__ import annotations

import logging
import os
import threading
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Callable

log = logging.getLogger(__name__)

CLOCK_ENV = "ROUTINE_TEST_CLOCK"
POLL_SECONDS = 0.05


class DrivenClock:
    """The system clock plus the offset a test writes into ``path`` (missing or unreadable: 0,
    or the last offset read)."""

    def __init__(self, path: Path):
        self.path = path
        self._offset = timedelta(0)
        self._seen: tuple[int, int] | None = None
        self._stop = threading.Event()
        self.refresh()

    def offset(self) -> timedelta:
        return self._offset

    def now(self) -> datetime:
        return datetime.now(timezone.utc) + self._offset

    def refresh(self) -> bool:
        """Read the file again if it changed; True when the offset moved."""
        try:
            st = os.stat(self.path)
            stamp = (st.st_mtime_ns, st.st_ino)
            if stamp == self._seen:
                return False
            offset = timedelta(seconds=float(self.path.read_text(encoding="utf-8").strip() or 0))
        except (OSError, ValueError):
            return False
        self._seen = stamp
        moved, self._offset = offset != self._offset, offset
        if moved:
            log.info("test clock: %+.1fs from the system clock, now %s", offset.total_seconds(), self.now().isoformat())
        return moved

    def watch(self, on_jump: Callable[[], None]) -> None:
        """Call ``on_jump`` (in a thread of its own) each time the test moves the clock."""
        def loop() -> None:
            while not self._stop.wait(POLL_SECONDS):
                if self.refresh():
                    on_jump()

        threading.Thread(target=loop, name="test-clock", daemon=True).start()

    def stop(self) -> None:
        self._stop.set()


def driven_clock() -> DrivenClock | None:
    """The test's clock when ``ROUTINE_TEST_CLOCK`` is set, else None (the system clock)."""
    path = os.environ.get(CLOCK_ENV)
    return DrivenClock(Path(path)) if path else None


def now() -> datetime:
    """The daemon's clock read from outside the daemon (`routine pause`, `runs keep`, status): the
    system clock; in tests only, the driven clock the daemon reads too."""
    driven = driven_clock()
    return driven.now() if driven else datetime.now(timezone.utc)
