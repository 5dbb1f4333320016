"""Tells the world the daemon's state: ``STATUS=`` for systemd, the dashboard note, the
Prometheus textfile. One thread, woken when something changed (a job queued or finished, a
reload) and otherwise every few minutes (models expire from Ollama, alerts get resolved in
Obsidian without the daemon noticing); each output is written only when it changed.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import replace
from datetime import datetime, timezone, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from routine.daemon import dashboard, promfile
from routine.daemon.status_record import DaemonState, DaemonStatus, DashboardState, HealthState, status_line
from routine.host import supervise
from routine.journal import Journal
from routine.vault.presence import require_vault

if TYPE_CHECKING:
    from routine.config.model import Config
    from routine.daemon.live import Live
    from routine.daemon.notify import Notifier

log = logging.getLogger(__name__)

REFRESH_SECONDS = 300.0
SETTLE_SECONDS = 0.5  # events come in bursts (queued, started, finished): publish once after

Gather = Callable[[list[str] | None], DaemonStatus]  # the snapshot, given health problems (None: check now)


class Publisher:
    """``gather``: the daemon's status (``status.snapshot``); ``problems``: the watchdog's last
    health check while it runs (else None: the snapshot checks itself)."""

    def __init__(self, live: Live, now: Callable[[], datetime], notifier: Notifier, gather: Gather,
                 problems: Callable[[], list[str] | None]):
        self.live, self.now, self.notifier = live, now, notifier
        self.gather, self.problems = gather, problems
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.dashboard_checked: str | None = None
        self.dashboard_updated: str | None = None
        self._dashboard_memo: dict[str, Any] = {}
        self._metrics_error: str | None = None

    def start(self) -> None:
        self._thread = supervise.start("publisher", self._loop, self._stop).thread

    def poke(self) -> None:
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(10)

    def dashboard_state(self) -> DashboardState:
        return DashboardState(self.live.config.layout.dashboard, self.dashboard_checked, self.dashboard_updated)

    def _loop(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(REFRESH_SECONDS)
            if self._stop.wait(SETTLE_SECONDS):
                return
            self._wake.clear()
            self.publish()

    def publish(self) -> DaemonStatus | None:
        """Compute the snapshot once and bring every output up to date with it."""

        with self._lock:
            try:
                snap = self.gather(self.problems())
            except Exception:
                log.exception("could not gather the daemon's state")
                return None
            config = self.live.config
            tz = self.now().tzinfo
            if snap.health is None or snap.health.state is not HealthState.UNHEALTHY:
                self.notifier.status(status_line(snap, tz))  # while unhealthy, STATUS= says why (the watchdog sets it)
            self._write_dashboard(config, snap, tz)
            if config.metrics_textfile:
                self._write_metrics(config.metrics_textfile, snap)
            return snap

    def stopped(self, state: DaemonState = DaemonState.STOPPED) -> None:
        """At a clean stop: the dashboard says the daemon stopped, and when."""
        with self._lock:
            try:
                snap = replace(self.gather([]), state=state)
            except Exception as exc:
                log.warning("could not gather the daemon's state at stop: %s", exc)
                return
            self._dashboard_memo.clear()
            self._write_dashboard(self.live.config, snap, self.now().tzinfo)

    def _write_dashboard(self, config: Config, snap: DaemonStatus, tz: tzinfo | None) -> None:
        try:
            require_vault(config.vault, empty_is_missing=True)  # never write into an empty mount point
            at = datetime.now(timezone.utc)
            outcome = dashboard.update(config, snap, tz, at, self._dashboard_memo)
            # Milliseconds: two refreshes within one second are still told apart.
            now = at.isoformat(timespec="milliseconds")
            self.dashboard_checked = now
            if outcome != "unchanged":
                self.dashboard_updated = now
                log.info("dashboard %s: %s", outcome, config.layout.dashboard)
        except Exception as exc:  # the vault may be unwritable for a while; the rest goes on
            log.warning("could not update the dashboard %s: %s", config.layout.dashboard, exc)

    def _write_metrics(self, path: Path, snap: DaemonStatus) -> None:
        try:
            journal = Journal()
            try:
                totals = journal.totals()
            finally:
                journal.close()
            promfile.write(path, promfile.render(snap, totals))
        except Exception as exc:  # said once per distinct error, not at every refresh
            if str(exc) != self._metrics_error:
                log.warning("could not write the metrics textfile %s: %s", path, exc)
            self._metrics_error = str(exc)
            return
        self._metrics_error = None
