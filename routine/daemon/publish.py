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

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="publisher", daemon=True)
        self._thread.start()

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
        from routine.daemon import dashboard
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
            if snap["health"]["ok"]:  # while unhealthy, STATUS= says why (the watchdog sets it)
                daemon.notifier.status(status_line(snap, tz))
            try:
                from routine.vault.presence import require_vault

                require_vault(config.vault, empty_is_missing=True)  # never write into an empty mount point
                outcome = dashboard.update(config, snap, tz)
                # Milliseconds: two refreshes within one second are still told apart.
                now = datetime.now(timezone.utc).isoformat(timespec="milliseconds")
                self.dashboard_checked = now
                if outcome != "unchanged":
                    self.dashboard_updated = now
                    log.info("dashboard %s: %s", outcome, config.layout.dashboard)
            except Exception as exc:  # the vault may be unwritable for a while; the rest goes on
                log.warning("could not update the dashboard %s: %s", config.layout.dashboard, exc)
            if config.metrics_textfile:
                self._write_metrics(config.metrics_textfile, snap)
            return snap

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
        except Exception as exc:
            log.warning("could not write the metrics textfile %s: %s", path, exc)
