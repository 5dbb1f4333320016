"""Recovering by itself after a dependency was down.

- A full state disk: a block's due slots cannot be recorded (the journal cannot grow). The
  block is remembered; once the state disk has room again every slot of the period gets its
  row (run within grace, else ``missed`` with "the state disk was full"), without a restart.
- A slot that failed because a dependency was down (``routine.causes``: Ollama, a model, the
  vault) is retried once when the monitor sees the cause gone, if it is still the block's last
  slot and within the block's ``grace``; otherwise its reason says why it stays failed.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from routine import paths
from routine.causes import cause_of, describe, disk_full
from routine.durations import human
from routine.person.alerts import raise_alert, resolve_alerts
from routine.schedule.due import Slot

if TYPE_CHECKING:
    from routine.daemon.live import Live
    from routine.daemon.monitor import Monitor
    from routine.journal import Journal
    from routine.journal.slots import Slots
    from routine.runner.block import BlockOutcome
    from routine.schedule.model import Block

log = logging.getLogger(__name__)

STATE_FULL = "the state disk was full"
BUSY_LOOKS = 3  # looks in a row that found the run journal locked before an alert says so
JOURNAL_BUSY = "journal-busy"  # that alert's cause


class Host(Protocol):
    """What recovery reads and asks for (the daemon): the slot records, the schedule, a clock,
    the monitor to tell, and the way a slot is looked at again or queued."""

    @property
    def live(self) -> Live: ...
    @property
    def slots(self) -> Slots: ...
    @property
    def state_dir(self) -> Path: ...
    @property
    def monitor(self) -> Monitor: ...
    def clock(self) -> datetime: ...
    def on_due(self, block_id: str, now: datetime | None = None) -> None: ...
    def submit_slot(self, block: Block, slot: Slot, trigger: str) -> None: ...


class Recovery:
    def __init__(self, host: Host):
        self.host = host
        self._lock = threading.Lock()
        self.unaccounted: dict[str, str] = {}           # block id -> why its slots have no row yet
        self.retry: dict[str, tuple[Slot, str]] = {}    # block id -> (its last failed slot, cause key)
        self.no_crash_open: set[str] = set()            # blocks known to have no open "stopped on an error" alert
        self.busy_looks: dict[str, int] = {}            # block id -> looks in a row that found the journal locked
        self.busy_alert: bool | None = None             # a "journal locked" alert open (None: unknown since start)

    # --- reported by the daemon -------------------------------------------------------------

    def could_not_record(self, block_id: str, exc: BaseException) -> None:
        """``on_due`` could not write the block's slots (disk full): account for them later."""
        with self._lock:
            first = not self.unaccounted
            self.unaccounted[block_id] = STATE_FULL
        if first:
            log.error("the state disk is full (%s): slots are recorded once it has room again", exc)
        cause = cause_of(exc) or disk_full("state")
        self.host.monitor.note_failure(
            cause, f"routine could not record the schedule's slots: the disk of its state dir "
                   f"({self.host.state_dir}) is full. Nothing runs on schedule until it has room.",
            "free space on that disk; the slots of the meantime are then recorded (and the latest run if "
            "within its grace) without a restart.", affected=block_id)

    def run_not_recorded(self, block_id: str, slot: Slot, exc: BaseException) -> None:
        """A claimed slot's run could not be journaled: mark it interrupted, so the next look at
        the block (once there is room) runs it again within grace or records it as missed."""
        self.could_not_record(block_id, exc)
        try:
            self.host.slots.set(block_id, slot.key, "interrupted", reason=STATE_FULL)
        except (OSError, sqlite3.Error) as again:
            log.error("block %s slot %s could not be recorded either: %s", block_id, slot.key, again)

    def crashed(self, block_id: str, slot: Slot, journal: Journal | None, exc: BaseException) -> None:
        """A scheduled run stopped on an error inside routine (a bug, not a dependency): its slot
        and its runs are marked failed, not left running until a restart, and an alert says so."""
        with self._lock:
            self.no_crash_open.discard(block_id)
        why = f"routine stopped on an error during this run ({type(exc).__name__}: {exc})"
        try:
            self.host.slots.set(block_id, slot.key, "failed", reason=why)
            if journal is not None:
                for run_id in journal.running_of_slot(block_id, slot.key):
                    journal.finish(run_id, "failed", why)
        except (OSError, sqlite3.Error) as again:
            log.error("block %s slot %s could not be marked failed: %s", block_id, slot.key, again)
        raise_alert(self.host.live.config, self.host.clock().astimezone(), f"{block_id} stopped on an error",
                    f"The {block_id} run of {slot.key} stopped on an error inside routine and did not finish: "
                    f"{type(exc).__name__}: {exc}. Nothing it had not written yet was written.",
                    f"run it again with `routine fire {block_id}`; if it happens again, the log "
                    "(`journalctl -u routine`) has the details for a bug report.", cause=f"crash:{block_id}",
                    affected=block_id)

    def ran_through(self, block_id: str) -> None:
        """A run of the block ended well: an alert that it stopped on an error is resolved."""
        with self._lock:  # looked on disk once per block after a start (an alert of before a restart), then known
            if block_id in self.no_crash_open:
                return
            self.no_crash_open.add(block_id)
        resolve_alerts(self.host.live.config, self.host.clock().astimezone(), f"crash:{block_id}",
                       "the block ran to the end again")

    def absent_reason(self, block_id: str) -> str | None:
        with self._lock:
            return self.unaccounted.get(block_id)

    def accounted(self, block_id: str) -> None:
        """The block's due slots were read and claimed: a "journal locked" alert is resolved once no
        block finds it locked (looked for on disk once after a start: an alert of before a restart)."""
        with self._lock:
            self.unaccounted.pop(block_id, None)
            self.busy_looks.pop(block_id, None)
            resolve = self.busy_alert is not False and not self.busy_looks
            if resolve:
                self.busy_alert = False
        if resolve:
            resolve_alerts(self.host.live.config, self.host.clock().astimezone(), JOURNAL_BUSY,
                           "the run journal can be written again.")

    def journal_busy(self, block_id: str, exc: BaseException) -> None:
        """``on_due`` found the run journal locked past its patience (it looks again shortly); after
        ``BUSY_LOOKS`` looks in a row one alert says so: another program holds the journal."""
        with self._lock:
            looks = self.busy_looks[block_id] = self.busy_looks.get(block_id, 0) + 1
            if looks < BUSY_LOOKS or self.busy_alert:
                return
            self.busy_alert = True
        journal = paths.journal_file()
        raise_alert(self.host.live.config, self.host.clock().astimezone(), "run journal locked",
                    f"routine could not claim the due runs of {block_id}: its run journal ({journal}) stayed "
                    f"locked ({exc}). Scheduled runs wait until it is free.",
                    f"close the program that holds {journal} open (`fuser {journal}` names it); routine looks "
                    "again every few seconds and resolves this note itself.", cause=JOURNAL_BUSY, affected=block_id)

    def failed(self, block_id: str, slot: Slot, outcome: BlockOutcome, trigger: str) -> None:
        """A scheduled run ended failed: if a dependency was down, retry it when it is back."""
        cause = next((c for s in outcome.steps if s.error is not None and (c := cause_of(s.error))), None)
        if cause is None or trigger == "retry":  # a retry is made once
            return
        with self._lock:
            self.retry[block_id] = (slot, cause.key)
        self.host.monitor.note_failure(cause, "", "", alert=False)  # the step already counted it

    # --- told by the monitor -----------------------------------------------------------------

    def recovered(self, cause_key: str) -> None:
        if cause_key == disk_full("state").key:
            with self._lock:
                blocks = list(self.unaccounted)
            for block_id in blocks:
                self.host.on_due(block_id)
        with self._lock:
            due = [(b, s) for b, (s, k) in self.retry.items() if k == cause_key]
            for block_id, _ in due:
                del self.retry[block_id]
        for block_id, slot in due:
            self._retry(block_id, slot, cause_key)

    def _retry(self, block_id: str, slot: Slot, cause_key: str) -> None:
        host = self.host
        block = host.live.schedules.blocks.get(block_id)
        if block is None:
            return
        late = host.clock() - slot.at
        what = describe(cause_key)
        if block.missed == "catch-up" and late <= block.grace and host.slots.last_slot(block_id) == slot.key:
            if host.slots.retake_failed(block_id, slot.key):
                log.warning("block %s slot %s: %s is back, retrying it (%s late, within grace %s)",
                            block_id, slot.key, what, human(late), human(block.grace))
                host.submit_slot(block, Slot(block_id, slot.at, slot.key, f"retry: {what} is back"), "retry")
            return
        if block.missed != "catch-up":
            why = "the block's policy is `missed: skip`"
        elif late > block.grace:
            why = f"it was back {human(late)} after the slot, beyond grace {human(block.grace)}"
        else:
            why = "a later slot of the block ran since"
        host.slots.set(block_id, slot.key, "failed", reason=f"failed: {what} was down; not retried: {why}")
        log.info("block %s slot %s stays failed: %s", block_id, slot.key, why)

