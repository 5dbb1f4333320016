"""The health monitor: one supervised thread that checks what the daemon depends on
(``daemon.dependencies``) and acts on what changed.

Every ``HEALTHY_EVERY`` seconds, or every ``DEGRADED_EVERY`` while something is down, or at
once when a run reports a shared cause (``note_failure``): check, publish when the picture
changed, raise one alert when a disk fills or the vault becomes unwritable, and when a cause is
gone resolve its alert and tell the daemon (``recovered``: account for slots a full state disk
could not record, retry the last slot that failed on it, restart a dead scheduler).
Idle, the thread sleeps on an Event between rounds: no polling loop.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from routine.causes import Cause, describe
from routine.causes import server as server_cause
from routine.daemon import dependencies
from routine.daemon.dependencies import Check
from routine.errors import RoutineError
from routine.flows.nudges import remind
from routine.host import supervise
from routine.journal import Journal
from routine.journal.keep import KeepRates
from routine.person.alerts import alert_set_aside, open_causes, raise_alert, resolve_alerts
from routine.person.notifications import deliver_held
from routine.statedb import DAMAGED

if TYPE_CHECKING:
    from routine.config.model import Config
    from routine.daemon.live import Live
    from routine.daemon.vault_events import VaultEvents

log = logging.getLogger(__name__)

HEALTHY_EVERY = 60.0
DEGRADED_EVERY = 10.0

# Causes the monitor raises an alert for itself: no run may be there to raise it.
_ALERTED_BY_CHECK = {"vault": "vault not writable", "state disk": "state disk full", "vault disk": "vault disk full"}
_SERVER_FIX = ("start it (`ollama serve`, or `systemctl start ollama`); scheduled runs that fail meanwhile are "
               "retried once when it is back, within their grace.")
_FIX = {"vault": "make the vault folder readable and writable by the user routine runs as (mount, permissions).",
        "state disk": "free space on the disk of routine's state dir; routine records the slots it could not and "
                      "resumes by itself.",
        "vault disk": "free space on the vault's disk; runs that failed on it are retried once."}


class Host(Protocol):
    """What the monitor checks and tells (the daemon)."""

    @property
    def live(self) -> Live: ...
    @property
    def state_dir(self) -> Path: ...
    @property
    def vault_events(self) -> VaultEvents | None: ...
    def now_local(self) -> datetime: ...
    def timers_alive(self) -> bool: ...
    def restart_timers(self) -> None: ...
    def changed(self) -> None: ...
    def recovered(self, cause_key: str) -> None: ...


class Monitor:
    def __init__(self, host: Host):
        self.host = host
        self.checks: list[Check] = []
        self.failing: set[str] = set()  # cause keys known to be failing (checks, runs, open alerts)
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: supervise.Supervised | None = None
        self._set_aside: frozenset[str] = frozenset()  # damaged state files already alerted (routine.statedb)

    def start(self) -> None:
        try:
            self.failing.update(open_causes(self.host.live.config))  # alerts left open by the last run
        except OSError:
            pass
        self._thread = supervise.start("health", self._loop, self._stop)

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()

    def poke(self) -> None:
        self._wake.set()

    def note_failure(self, cause: Cause, message: str, fix: str, affected: str | None = None,
                     alert: bool = True) -> None:
        """A failure of ``cause`` happened (a run, a slot that could not be recorded)."""
        with self._lock:
            self.failing.add(cause.key)
        if alert:
            raise_alert(self.host.live.config, self.host.now_local(), cause.title, message, fix,
                        cause=cause.key, affected=affected)
        self.poke()

    def degraded(self) -> list[str]:
        """A sentence for each dependency that is down and each thread that crashed recently."""
        with self._lock:
            models = sorted(c for c in self.failing if c.startswith("model:"))
        missing = [f"{describe(c)} is not pulled (runs that need it fail)" for c in models]
        return [c.sentence() for c in self.checks if not c.ok] + missing + supervise.restarting()

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.round()
            self._wake.wait(DEGRADED_EVERY if self.degraded() or self.failing else HEALTHY_EVERY)
            self._wake.clear()

    def round(self) -> None:
        host = self.host
        config = host.live.config
        if not host.timers_alive():  # its thread died: start it again (logged), then check
            host.restart_timers()
        checks = dependencies.check_all(config, host.state_dir) + self._threads()
        before = {(c.name, c.target): c.ok for c in self.checks}
        self.checks = checks
        changed = [c for c in checks if before.get((c.name, c.target), True) != c.ok]
        for check in changed:
            if check.ok:
                log.warning("%s (%s) is back", check.name, check.target)
            else:
                log.error("degraded: %s", check.sentence())
                if check.name == dependencies.SERVER:  # the same note the runs that fail on it count in
                    self.note_failure(server_cause(check.target), f"The model server is {check.detail}.", _SERVER_FIX)
                elif check.name in _ALERTED_BY_CHECK and check.cause:
                    self.note_failure(Cause(check.cause, _ALERTED_BY_CHECK[check.name]),
                                      f"The {check.name} check failed: {check.detail}.", _FIX[check.name])
        self._resolve(checks)
        self._alert_set_aside()
        deliver_held(config, host.now_local())  # what quiet hours held, once over by the daemon's clock
        remind(config, host.now_local())  # tasks due soon or overdue, each nudge once
        if self._measure_keep(config) or changed:  # the dashboard shows the keep-rate
            host.changed()

    def _measure_keep(self, config: Config) -> int:
        """Generated sections 48 h old, measured now (``journal.keep``); how many."""
        try:
            journal = Journal()
            try:
                return KeepRates(journal.db).measure_due(config.vault, self.host.now_local())
            finally:
                journal.close()
        except (OSError, sqlite3.Error, RoutineError) as exc:  # a full state disk, an unreadable vault: checks say so
            log.warning("could not measure the keep-rate: %s", exc)
            return 0

    def _alert_set_aside(self) -> None:
        """A damaged journal or graph cache set aside (at start, by a command, by the graph) gets its alert."""
        found = frozenset(p.name for p in self.host.state_dir.glob(f"*{DAMAGED}*"))
        if found - self._set_aside:
            alert_set_aside(self.host.live.config, self.host.now_local(), self.host.state_dir)
        self._set_aside = found

    def _resolve(self, checks: list[Check]) -> None:
        with self._lock:
            failing = sorted(self.failing)
        for cause in failing:
            if dependencies.clears(checks, cause) is not True:
                continue
            with self._lock:
                self.failing.discard(cause)
            now = self.host.now_local()
            resolve_alerts(self.host.live.config, now, cause, f"{describe(cause)} is back (checked at {now:%H:%M}).")
            self.host.recovered(cause)

    def _threads(self) -> list[Check]:
        host = self.host
        alive = host.timers_alive()
        out = [Check("scheduler", "timers", alive, "" if alive else "not running")]
        watcher = host.vault_events.watcher if host.vault_events else None
        if watcher is not None:
            alive = watcher.alive()
            out.append(Check("watcher", str(host.live.config.vault), alive, "" if alive else "not running"))
        return out
