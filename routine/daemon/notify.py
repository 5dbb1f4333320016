"""systemd's notify protocol (sd_notify) and the watchdog, without any dependency.

Under ``Type=notify`` systemd passes ``$NOTIFY_SOCKET`` (a path, or ``@name`` for an abstract
socket); each message is one datagram of ``KEY=value`` lines: ``READY=1`` once the daemon
works, ``STATUS=…`` for ``systemctl status``, ``WATCHDOG=1`` while it is healthy,
``STOPPING=1`` when it begins to stop. With ``WatchdogSec=`` systemd also passes
``$WATCHDOG_USEC`` (and ``$WATCHDOG_PID``); we ping at half that interval, and only while
the health check passes, so a hung daemon is killed and restarted (``Restart=on-failure``).

The variables are taken out of the environment at start-up, so no child process (a
sandboxed tool, ``tegrastats``) can speak for the daemon.
"""

from __future__ import annotations

import logging
import os
import re
import socket
import threading
from typing import Callable

log = logging.getLogger(__name__)


class Notifier:
    """Sends notify messages; a no-op when systemd did not ask for them."""

    def __init__(self, address: str | None, watchdog_usec: int | None = None):
        self.address = address
        self.watchdog_seconds = watchdog_usec / 1e6 if watchdog_usec else None
        self._sock: socket.socket | None = None
        self._lock = threading.Lock()
        self.last_status: str | None = None

    @classmethod
    def from_environment(cls) -> "Notifier":
        address = os.environ.pop("NOTIFY_SOCKET", None) or None
        usec = os.environ.pop("WATCHDOG_USEC", None)
        pid = os.environ.pop("WATCHDOG_PID", None)
        watchdog = None
        try:
            if usec and (not pid or int(pid) == os.getpid()):
                watchdog = int(usec) or None
        except ValueError:
            log.warning("ignoring a malformed watchdog setting: WATCHDOG_USEC=%r WATCHDOG_PID=%r", usec, pid)
        return cls(address, watchdog)

    @property
    def enabled(self) -> bool:
        return bool(self.address)

    def send(self, *lines: str) -> bool:
        """One datagram with these lines; False if not under systemd or it could not be sent."""
        if not self.address:
            return False
        target = "\0" + self.address[1:] if self.address.startswith("@") else self.address
        data = "\n".join(lines).encode("utf-8", errors="replace")
        with self._lock:
            try:
                if self._sock is None:
                    self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
                self._sock.sendto(data, target)
                return True
            except OSError as exc:
                log.warning("could not notify systemd at %s: %s", self.address, exc)
                if self._sock is not None:
                    self._sock.close()
                    self._sock = None
                return False

    def ready(self, status: str) -> None:
        self.last_status = status
        self.send("READY=1", f"STATUS={status}")

    def status(self, status: str) -> None:
        """``STATUS=``, sent only when it changed."""
        if status != self.last_status:
            self.last_status = status
            self.send(f"STATUS={status}")

    def stopping(self, status: str = "stopping") -> None:
        self.last_status = status
        self.send("STOPPING=1", f"STATUS={status}")

    def close(self) -> None:
        with self._lock:
            if self._sock is not None:
                self._sock.close()
                self._sock = None


class Watchdog:
    """Pings ``WATCHDOG=1`` every half interval while ``check()`` finds no problem.

    The thread sleeps on an Event between pings (no polling). When the check finds problems,
    no ping is sent, the reason goes to the log and to ``STATUS=``, and systemd ends the
    daemon once a whole interval passes without a ping.
    """

    def __init__(self, notifier: Notifier, check: Callable[[], list[str]], on_change: Callable[[], None] | None = None):
        self.notifier = notifier
        self.check = check
        self.on_change = on_change or (lambda: None)  # health went bad or came back
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.problems: list[str] = []
        self._unhealthy_status = ""

    @property
    def interval(self) -> float | None:
        seconds = self.notifier.watchdog_seconds
        return seconds / 2 if seconds else None

    def start(self) -> None:
        if not self.notifier.enabled or not self.interval:
            return
        self._thread = threading.Thread(target=self._loop, name="watchdog", daemon=True)
        self._thread.start()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)

    def _loop(self) -> None:
        while True:
            try:
                problems = self.check()
            except Exception as exc:  # a broken check must not look like health
                problems = [f"the health check failed: {exc}"]
            if self._stop.is_set():
                return
            if problems:
                if _gist(problems) != _gist(self.problems):  # not again each second the wedge lasts
                    log.error("not healthy, withholding the watchdog ping (systemd restarts the daemon "
                              "if this lasts): %s", "; ".join(problems))
                    self._unhealthy_status = "not healthy: " + "; ".join(problems)
                self.notifier.status(self._unhealthy_status)  # sent again only if another status replaced it
            else:
                if self.problems:
                    log.warning("healthy again; watchdog pings resume")
                self.notifier.send("WATCHDOG=1")
            changed = bool(problems) != bool(self.problems)
            self.problems = problems
            if changed:
                self.on_change()
            if self._stop.wait(self.interval):
                return


def _gist(problems: list[str]) -> list[str]:
    return [re.sub(r"\d+", "#", p) for p in problems]
