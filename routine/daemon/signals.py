"""The daemon's signals, taken on the main thread without a lock (a self-pipe).

A Python signal handler runs on the main thread between two bytecodes, wherever that thread is:
one that takes a lock (``Event.set``, ``Thread.start``) can find it held by the very code it
interrupted and wait forever: a stop that never comes. And the kernel hands a process's signal
to any of its threads: when another thread takes it, the main thread, asleep in a read, is not
woken to run a Python handler at all (a reload that waited for the next signal to be seen). So
the signal's number is written to a pipe by the C-level handler itself (``signal.set_wakeup_fd``),
whichever thread the kernel chose; the main thread reads it there and acts
(``Daemon.serve_forever``). The Python-level handler does nothing.
"""

from __future__ import annotations

import os
import signal


def _nothing(_signum: int, _frame: object) -> None:
    """The number is in the pipe already (the wakeup fd): nothing is left to do here."""


class SignalPipe:
    def __init__(self, signals: tuple[signal.Signals, ...]):
        self._read, self._write = os.pipe()
        os.set_blocking(self._write, False)  # a burst of signals never blocks the handler
        self._signals = set(signals)
        signal.set_wakeup_fd(self._write, warn_on_full_buffer=False)
        for sig in signals:
            signal.signal(sig, _nothing)

    def next(self) -> signal.Signals:
        """The next of the signals asked for that came (waits, without polling, until one does)."""
        while True:
            number = os.read(self._read, 1)[0]
            if number in self._signals:
                return signal.Signals(number)
