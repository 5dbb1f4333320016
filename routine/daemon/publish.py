"""Tells the world the daemon's state: ``STATUS=`` for systemd, the dashboard note, the
Prometheus textfile. One thread, woken when something changed (a job queued or finished, a
reload) and otherwise every few minutes (models expire from Ollama, alerts get resolved in
Obsidian without the daemon noticing); each output is written only when it changed.
"""

from __future__ import annotations

import logging
import threading
from datetime import datetime, timezone

log = logging.getLogger(__name__)

REFRESH_SECONDS = 300.0
SETTLE_SECONDS = 0.5  # events come in bursts (queued, started, finished): publish once after


class Publisher:
    def __init__(self, daemon):
        self.daemon = daemon
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.dashboard_checked: str | None = None
        self.dashboard_updated: str | None = None
        self._dashboard_memo: dict = {}
        self._metrics_error: str | None = None

    def start(self) -> None:
        from routine import supervise

        self._thread = supervise.start("publisher", self._loop, self._stop).thread

    def poke(self) -> None:
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(10)

    def dashboard_state(self) -> dict:
        config = self.daemon.live.config
        return {"path": config.layout.dashboard, "checked": self.dashboard_checked, "updated": self.dashboard_updated}

    def _loop(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(REFRESH_SECONDS)
            if self._stop.wait(SETTLE_SECONDS):
                return
            self._wake.clear()
            self.publish()

    def publish(self) -> dict | None:
        """Compute the snapshot once and bring every output up to date with it."""
        from routine.daemon.status import snapshot, status_line

        with self._lock:
            daemon = self.daemon
            try:
                snap = snapshot(daemon, health_problems=daemon.watchdog.problems if daemon.watchdog.running else None)
            except Exception:
                log.exception("could not gather the daemon's state")
                return None
            config = daemon.live.config
            tz = daemon.now_local().tzinfo
            if snap["health"]["state"] != "unhealthy":  # while unhealthy, STATUS= says why (the watchdog sets it)
                daemon.notifier.status(status_line(snap, tz))
            self._write_dashboard(config, snap, tz)
            if config.metrics_textfile:
                self._write_metrics(config.metrics_textfile, snap)
            return snap

    def stopped(self, state: str) -> None:
        """At a clean stop: the dashboard says the daemon stopped, and when."""
        from routine.daemon.status import snapshot

        with self._lock:
            try:
                snap = {**snapshot(self.daemon, health_problems=[]), "state": state}
            except Exception as exc:
                log.warning("could not gather the daemon's state at stop: %s", exc)
                return
            self._dashboard_memo.clear()
            self._write_dashboard(self.daemon.live.config, snap, self.daemon.now_local().tzinfo)

    def _write_dashboard(self, config, snap: dict, tz) -> None:
        from routine.daemon import dashboard

        try:
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

    def _write_metrics(self, path, snap: dict) -> None:
        from routine.daemon import promfile
        from routine.journal import Journal

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
