"""Watching the vault: raw file events settle into one change per save, and a reconcile
catches what the kernel dropped.

- watchdog (inotify) reports raw events; each path's events are held until it has been quiet
  for its debounce, then the file is read once and compared with what the watcher last knew
  (``FileStates``): a burst of modify/close events from one save, or an editor's
  temp-file-then-rename save, is one change — or none, if the bytes did not change.
- routine's own writes are told to the watcher as they land (``routine.vault.atomic``), each
  with the bytes it wrote and those it replaced, under the note's lock, and the watcher reads a
  note under that lock too. A note that settles to the bytes routine last wrote there is not a
  change (the record is used once), so agents never trigger themselves; a save of the person's
  is always one: after routine's write (other bytes on disk), or before it and written over
  before it settled (routine's write replaced bytes the watcher had not seen).
- ``reconcile`` compares every note's mtime and size (then hash) with what is known: it finds
  changes made while the daemon was down, events inotify dropped, and all changes when
  inotify is off or out of watches (then it runs more often).
- The files followed are what the search index reads (``filters.is_searchable``): the notes and
  the PDFs; a PDF's change goes to the index alone (``routine.daemon.vault_events``).
"""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import threading
import time
from collections import deque
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from routine.errors import NoteUnreadable
from routine.host import supervise
from routine.vault.atomic import note_lock
from routine.vault.files import NOTE_MAX_BYTES, read_regular, skip_undecodable, vault_files
from routine.vault.pdf import PDF_MAX_BYTES, is_pdf
from routine.vault.presence import vault_problem
from routine.watch.changes import RECENT, Change, Outcome, Settled
from routine.watch.filters import is_searchable
from routine.watch.state import FileState, FileStates

if TYPE_CHECKING:
    from watchdog.events import FileSystemEvent
    from watchdog.observers.api import BaseObserver

log = logging.getLogger(__name__)

DEGRADED_RECONCILE = 30.0  # seconds between reconciles when inotify cannot watch the vault
WATCH_LIMIT_FIX = ("raise the limit: `sudo sysctl fs.inotify.max_user_watches=524288`, and keep it with "
                   "`echo fs.inotify.max_user_watches=524288 | sudo tee /etc/sysctl.d/60-routine.conf`")


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:20]


@dataclass(frozen=True)
class _OwnWrite:
    """routine's last write to a note, not yet seen settled."""

    sha: str        # the bytes it put there
    theirs: bool    # it replaced a save of the person's the watcher had not seen yet: that save is a change


class VaultWatcher:
    def __init__(self, vault: Path, on_change: Callable[[Change], None], states: FileStates,
                 quiet_for: Callable[[str], float] = lambda rel: 1.0, reconcile_every: float = 300.0,
                 inotify: bool = True, on_presence: Callable[[str | None], None] | None = None):
        self.root = Path(os.path.abspath(vault))
        self._real_root = Path(os.path.realpath(vault))
        self.on_change = on_change
        self.states = states
        self.quiet_for = quiet_for
        self.reconcile_every = reconcile_every
        self.inotify = inotify
        self.degraded: str | None = None  # why inotify is not in use, for the person
        self.missing: str | None = None   # why the vault cannot be used now (unmounted, empty)
        self.on_presence = on_presence    # told when the vault goes missing (why) and comes back (None)
        self._baselined = False
        self._cond = threading.Condition()
        self._settling = 0  # paths taken out of _pending and not yet settled
        self._pending: dict[str, float] = {}   # rel -> monotonic time it may settle
        self._moves: dict[str, str] = {}       # dest rel -> src rel, for a move in flight
        self._moved_away: set[str] = set()
        self._own: dict[str, _OwnWrite] = {}   # rel -> routine's last write there, not seen yet
        self._stop = threading.Event()
        self._reconcile_now = threading.Event()
        self._observer: BaseObserver | None = None
        self._threads: list[threading.Thread] = []
        self._recent: deque[Settled] = deque(maxlen=RECENT)
        self.reconciles = 0  # reconcile passes finished

    # --- lifecycle -------------------------------------------------------------------------------

    def start(self) -> list[Change]:
        """Catch up with the vault (or take a first baseline), then watch. Returns the changes
        made while nobody watched (already passed to ``on_change``)."""
        # Watch first, then look: a note saved while we look has an event waiting, so nothing
        # slips between the look and the watch.
        if self.inotify:
            self._start_observer()
        else:
            self.degraded = "inotify is off in routine.yaml (watch.inotify: false)"
        self._baselined = bool(len(self.states))
        caught_up = self.reconcile() if self._baselined else self._baseline()
        self._baselined = self._baselined or self.missing is None  # else the vault's first look is one
        for target, name in ((self._settle_loop, "vault-settle"), (self._reconcile_loop, "vault-reconcile")):
            self._threads.append(supervise.start(name, target, self._stop).thread)
        return caught_up

    def _start_observer(self) -> None:
        from watchdog.events import FileSystemEventHandler
        from watchdog.observers import Observer

        watcher = self

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event: FileSystemEvent) -> None:
                watcher._raw_event(event)

        observer = Observer()
        observer.daemon = True
        try:
            observer.schedule(Handler(), str(self.root), recursive=True)
            observer.start()
        except OSError as exc:
            if exc.errno in (errno.ENOSPC, errno.EMFILE):
                self.degraded = f"the inotify watch limit is reached ({exc.strerror}); {WATCH_LIMIT_FIX}"
            else:
                self.degraded = f"inotify could not watch the vault ({exc.strerror or exc})"
            log.error("vault watcher: %s; falling back to a reconcile every %.0fs", self.degraded, DEGRADED_RECONCILE)
            return
        self._observer = observer

    def alive(self) -> bool:
        """Its loops run (they are supervised: a crash restarts them, see routine.host.supervise)."""
        return not self._stop.is_set() and all(t.is_alive() for t in self._threads)

    def stop(self) -> None:
        self._stop.set()
        self._reconcile_now.set()
        with self._cond:
            self._cond.notify_all()
        if self._observer is not None:
            self._observer.stop()
        for thread in self._threads:
            thread.join(timeout=5)

    # --- raw events --------------------------------------------------------------------------------

    def _rel(self, path: str | bytes | Path) -> str | None:
        """The vault-relative name of an event's path; None outside the vault or for a name
        that is not UTF-8 (it could never be stored, searched or linked: skipped, logged once)."""
        path = os.fsdecode(path)
        for root in (self.root, self._real_root):
            rel = os.path.relpath(path, root)
            if not rel.startswith(".."):
                rel = rel.replace(os.sep, "/")
                return None if skip_undecodable(rel) else rel
        return None

    def _raw_event(self, event: FileSystemEvent) -> None:
        if event.is_directory or event.event_type in ("opened", "closed_no_write"):
            return
        src = self._rel(event.src_path)
        src = src if src and is_searchable(src) else None
        if event.event_type == "moved":
            dest = self._rel(event.dest_path)
            src_note = src if src and is_searchable(src) else None
            dest_note = dest if dest and is_searchable(dest) else None
            if src_note and dest_note:
                with self._cond:
                    self._moves[dest_note] = src_note
                    self._moved_away.add(src_note)
                self._touch(src_note)
                self._touch(dest_note)
            elif dest_note:  # an editor's temp file renamed over the note: a save
                self._touch(dest_note)
            elif src_note:   # moved out of sight (.trash, another folder outside the vault)
                self._touch(src_note)
            return
        if src:
            self._touch(src)

    def _touch(self, rel: str) -> None:
        with self._cond:
            self._pending[rel] = time.monotonic() + self.quiet_for(rel)
            self._cond.notify_all()

    def own_write(self, path: Path, data: bytes | None, before: bytes | None = None) -> None:
        """routine has just put ``data`` at ``path`` (None: removed it), replacing ``before`` (None:
        nothing was there); called with the note's lock held (``routine.vault.atomic``)."""
        rel = self._rel(path)
        if rel is None or not is_searchable(rel):
            return
        if data is None:
            with self._cond:
                self._own.pop(rel, None)
            self.states.drop(rel)
            return
        known = self.states.get(rel)
        had = _sha(before) if before is not None else None  # None: nothing was there
        with self._cond:
            last = self._own.get(rel)
            unseen = had != (known.sha if known else None) and (last is None or had != last.sha)
            theirs = unseen or (last is not None and last.theirs)  # the person's bytes, written over
            self._own[rel] = _OwnWrite(_sha(data), theirs)
        if not theirs:  # what the watcher knows of the note is routine's bytes (a restart keeps it)
            self.states.put(rel, FileState(None, None, _sha(data)))

    def recent(self) -> list[Settled]:
        """The last paths settled, oldest first."""
        with self._cond:
            return list(self._recent)

    def pending(self) -> int:
        """Paths with events not settled yet (waiting to be quiet, or being read now)."""
        with self._cond:
            return len(self._pending) + self._settling

    # --- settling ----------------------------------------------------------------------------------

    def _settle_loop(self) -> None:
        while True:
            with self._cond:
                ready: list[str] = []
                while not self._stop.is_set():
                    now = time.monotonic()
                    ready = [rel for rel, due in self._pending.items() if due <= now]
                    if ready:
                        for rel in ready:
                            del self._pending[rel]
                        self._settling = len(ready)
                        break
                    self._cond.wait(min(self._pending.values()) - now if self._pending else None)
                if self._stop.is_set():
                    return
            for rel in sorted(ready, key=lambda r: r in self._moved_away):  # arrivals before departures
                settled = self._settle(rel)
                log.debug(
                    "vault settled: %s: %s", rel, settled.change.kind if settled.change else settled.outcome.value
                )
                self._emit(settled.change)
                with self._cond:
                    self._recent.append(settled)
                    self._settling -= 1

    def _read(self, rel: str) -> tuple[os.stat_result, bytes] | None:
        path = self.root / rel
        try:
            st = path.stat()
            return st, read_regular(path, PDF_MAX_BYTES if is_pdf(rel) else NOTE_MAX_BYTES, label=rel)
        except NoteUnreadable as exc:
            log.warning("vault watcher: %s", exc.message)
            return None
        except OSError:  # gone, not a folder any more, not ours to read
            return None

    def _settle(self, rel: str) -> Settled:
        with self._cond:
            move_from = self._moves.pop(rel, None)
            moved_away = rel in self._moved_away
            self._moved_away.discard(rel)
        with note_lock(self.root / rel):  # routine's write to it is either done and told, or not begun
            known = self.states.get(rel)
            found = self._read(rel)
            if found is None:
                with self._cond:
                    self._own.pop(rel, None)
                if known is None:
                    outcome = Outcome.UNREADABLE if (self.root / rel).exists() else Outcome.GONE
                    return Settled(rel, outcome, at=time.time())
                self.states.drop(rel)
                return Settled(rel, Outcome.GONE if moved_away else Outcome.CHANGE,
                               None if moved_away else Change("deleted", rel), time.time())
            change = self._compare(rel, known, found, move_from)
        return Settled(rel, change if isinstance(change, Outcome) else Outcome.CHANGE,
                       change if isinstance(change, Change) else None, time.time())

    def _compare(self, rel: str, known: FileState | None, found: tuple[os.stat_result, bytes],
                 move_from: str | None = None) -> Change | Outcome:
        """What the note's bytes on disk are, read under its lock: routine's own write (its record
        is used up: the next look judges the note afresh), no change, or the person's change."""
        st, data = found
        sha = _sha(data)
        self.states.put(rel, FileState(st.st_mtime_ns, st.st_size, sha))
        with self._cond:
            own = self._own.pop(rel, None)
        if own is not None and own.sha == sha and not own.theirs:
            return Outcome.OWN_WRITE
        if known is None:
            return Change("moved", rel, src=move_from) if move_from else Change("created", rel)
        return Outcome.UNCHANGED if known.sha == sha else Change("modified", rel)

    def _emit(self, change: Change | None) -> None:
        if change is None:
            return
        log.info("vault %s: %s%s (%s)", change.kind, change.rel, f" (from {change.src})" if change.src else "",
                 change.source)
        try:
            self.on_change(change)
        except Exception:
            log.exception("handling %s of %s failed", change.kind, change.rel)

    # --- reconcile -----------------------------------------------------------------------------------

    def _walk(self) -> list[str]:
        return [rel for rel in vault_files(self.root) if is_searchable(rel)]

    def _present(self) -> bool:
        """False while the vault is missing or empty: then nothing is compared, nothing known is
        forgotten, so notes already handled are not new when it is back."""
        missing = vault_problem(self.root)
        if missing == self.missing:
            return missing is None
        self.missing = missing
        if missing:
            log.error("vault watcher: %s; waiting for it, nothing is compared or forgotten", missing)
        else:
            log.warning("vault watcher: the vault is back at %s", self.root)
            if self.inotify and self._observer is None:
                self.degraded = None
                self._start_observer()
        if self.on_presence:
            self.on_presence(missing)
        return missing is None

    def _baseline(self) -> list[Change]:
        """First start: remember the vault as it is; nothing in it is a change."""
        if not self._present():
            return []
        states = {}
        with self._cond:
            pending = set(self._pending)
        for rel in self._walk():
            if rel in pending:  # it changed as we started: its event will report it
                continue
            found = self._read(rel)
            if found is not None:
                states[rel] = FileState(found[0].st_mtime_ns, found[0].st_size, _sha(found[1]))
        self.states.put_many(states)
        log.info("vault watcher: first baseline of %d notes", len(states))
        return []

    def reconcile(self) -> list[Change]:
        """Compare the vault with what is known (mtime and size, then hash); emit each change."""
        if not self._present():
            return []
        if not self._baselined:  # the first start found no vault: its first look is the baseline
            self._baselined = True
            return self._baseline()
        changes: list[Change] = []
        seen = set()
        with self._cond:
            pending = set(self._pending)
        for rel in self._walk():
            seen.add(rel)
            if rel in pending:
                continue
            try:
                st = os.stat(self.root / rel)
            except OSError:
                continue
            known = self.states.get(rel)
            if known is not None and (known.mtime_ns, known.size) == (st.st_mtime_ns, st.st_size):
                continue
            with note_lock(self.root / rel):
                known = self.states.get(rel)
                found = self._read(rel)
                judged = self._compare(rel, known, found) if found is not None else None
            if isinstance(judged, Change):
                changes.append(replace(judged, source="reconcile"))
        for rel in self.states.paths():
            if rel in seen or rel in pending:
                continue
            with note_lock(self.root / rel):  # not one routine wrote or removed after the walk
                if self.states.get(rel) is None or os.path.lexists(self.root / rel):
                    continue
                self.states.drop(rel)
            changes.append(Change("deleted", rel, source="reconcile"))
        for change in changes:
            self._emit(change)
        self.reconciles += 1
        return changes

    def _reconcile_loop(self) -> None:
        while not self._stop.is_set():
            every = DEGRADED_RECONCILE if self.degraded or self.missing else self.reconcile_every
            self._reconcile_now.wait(min(every, self.reconcile_every))
            self._reconcile_now.clear()
            if self._stop.is_set():
                return
            try:
                self.reconcile()
            except Exception:
                log.exception("vault reconcile failed")
