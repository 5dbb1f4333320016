"""Hot reload: watch routine.yaml, schedules/ and the vault's Agents/ folder; reload on change.

watchdog delivers inotify events (no polling). Editors save in bursts (temp file, rename,
chmod), so changes are debounced: one reload a short moment after the last event.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any, Callable

log = logging.getLogger(__name__)

DEBOUNCE_SECONDS = 0.5
RELEVANT = (".yaml", ".yml", ".md")


class ConfigWatcher:
    def __init__(self, folders: list[Path], on_change: Callable[[], None], debounce: float = DEBOUNCE_SECONDS):
        self.folders = [f for f in dict.fromkeys(folders)]
        self.on_change = on_change
        self.debounce = debounce
        self._timer: threading.Timer | None = None
        self._lock = threading.Lock()
        self._observer: Any = None  # watchdog's Observer, imported when watching starts

    def start(self) -> None:
        from watchdog.events import FileSystemEventHandler
        from watchdog.observers import Observer

        watcher = self

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event: Any) -> None:
                if event.event_type in ("opened", "closed_no_write"):
                    return
                paths = [getattr(event, "src_path", ""), getattr(event, "dest_path", "")]
                if any(str(p).endswith(RELEVANT) for p in paths if p):
                    watcher._poke()

        self._observer = Observer()
        for folder in self.folders:
            if folder.is_dir():
                # Not recursive: the config folder holds the state of other tools too.
                self._observer.schedule(Handler(), str(folder), recursive=False)
        self._observer.daemon = True
        self._observer.start()

    def _poke(self) -> None:
        with self._lock:
            if self._timer:
                self._timer.cancel()
            self._timer = threading.Timer(self.debounce, self._fire)
            self._timer.daemon = True
            self._timer.start()

    def _fire(self) -> None:
        try:
            self.on_change()
        except Exception:
            log.exception("reload failed")

    def stop(self) -> None:
        with self._lock:
            if self._timer:
                self._timer.cancel()
        if self._observer:
            self._observer.stop()
