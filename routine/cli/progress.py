"""Progress of a long pass (indexing the vault): a bar on a terminal, plain lines otherwise."""

from __future__ import annotations

import sys
import time
from typing import TextIO

BAR_WIDTH = 30
LINE_EVERY_SECONDS = 5.0


class ProgressPrinter:
    """Call with (what, done, total). Writes to stderr, so stdout stays the command's answer."""

    def __init__(self, stream: TextIO | None = None, tty: bool | None = None) -> None:
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self._last_time = 0.0
        self._last_share = -1.0
        self._open_bar = False

    def __call__(self, what: str, done: int, total: int) -> None:
        if total <= 0:
            return
        now = time.monotonic()
        share = done / total
        finished = done >= total
        if self.tty:
            if not finished and now - self._last_time < 0.1:
                return
            filled = int(BAR_WIDTH * share)
            self.stream.write(f"\r{what} [{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {done}/{total} notes")
            self._open_bar = not finished
            if finished:
                self.stream.write("\n")
        else:
            if not (finished or share - self._last_share >= 0.1 or now - self._last_time >= LINE_EVERY_SECONDS):
                return
            self.stream.write(f"{what}: {done}/{total} notes\n")
            self._last_share = share
        self._last_time = now
        self.stream.flush()

    def end(self) -> None:
        """Close an unfinished bar (the pass failed or was interrupted) so messages start clean."""
        if self._open_bar:
            self.stream.write("\n")
            self.stream.flush()
            self._open_bar = False
