"""The daemon's signals, taken on the main thread without a lock (a self-pipe).

A Python signal handler runs on the main thread between two bytecodes, wherever that thread is:
one that takes a lock (``Event.set``, ``Thread.start``) can find it held by the very code it
interrupted and wait forever: a stop that never comes. So the handler only writes the signal's
number to a pipe; the main thread reads it there and acts (``Daemon.serve_forever``).
"""

from __future__ import annotations

import os
import signal


class SignalPipe:
    def __init__(self, signals: tuple[signal.Signals, ...]):
        self._read, self._write = os.pipe()
        os.set_blocking(self._write, False)  # a burst of signals never blocks the handler
        for sig in signals:
            signal.signal(sig, self._handle)

    def _handle(self, signum: int, _frame: object) -> None:
        try:
            os.write(self._write, bytes([signum]))
        except BlockingIOError:  # 64 KiB of signals unread: the main thread has them already
            pass

    def next(self) -> signal.Signals:
        """The next signal that came (waits, without polling, until one does)."""
        return signal.Signals(os.read(self._read, 1)[0])
