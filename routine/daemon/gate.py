"""The write gate: held by a step while it writes; refuses once shutdown has abandoned the running
steps, or the person called the run off (Ctrl-C on `routine fire`)."""

from __future__ import annotations

import threading

from routine.errors import Abandoned


class WriteGate:
    def __init__(self, lock: threading.Lock, abandon: threading.Event, cancel: threading.Event | None = None):
        self.lock, self.abandon, self.cancel = lock, abandon, cancel

    def __enter__(self) -> "WriteGate":
        self.lock.acquire()
        if self.abandon.is_set() or (self.cancel is not None and self.cancel.is_set()):
            self.lock.release()
            raise Abandoned()
        return self

    def __exit__(self, *exc: object) -> None:
        self.lock.release()
