"""The recovery rules with an injected clock and real SQLite: a slot that failed because a
dependency was down is retried once, only within grace and only if it is still the block's last
slot; a full state disk's slots are recorded later with that reason."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

from routine.config.model import StepSpec, WriteSpec
from routine.daemon.recovery import STATE_FULL, Recovery
from routine.journal.slots import Slots
from routine.models.ollama_host import unreachable
from routine.schedule.cron import Cron, slot_key
from routine.schedule.due import Slot, owed
from routine.schedule.model import Block

UTC = ZoneInfo("UTC")
STEP = (StepSpec(agent="librarian", task="x", write=WriteSpec(note="Daily/x.md", section="A")),)
HOST = "http://127.0.0.1:11434"
T0 = datetime(2026, 11, 22, 7, 0, tzinfo=timezone.utc)


@dataclass
class StepFailed:
    error: Exception


@dataclass
class Failed:
    steps: list = field(default_factory=list)


class FakeMonitor:
    def __init__(self):
        self.failures = []

    def note_failure(self, cause, message, fix, affected=None, alert=True):
        self.failures.append(cause.key)


class DaemonParts:
    """The daemon's parts Recovery uses: real slot records, an injected clock, submissions kept."""

    def __init__(self, slots: Slots, block: Block, now: datetime):
        self.slots, self.now, self.submitted = slots, now, []
        self.monitor = FakeMonitor()
        self.live = type("Live", (), {"schedules": type("S", (), {"blocks": {block.id: block}})()})()
        self.state_dir = "/state"

    def clock(self):
        return self.now

    def submit_slot(self, block, slot, trigger):
        self.submitted.append((block.id, slot.key, trigger))


def minutely(grace=timedelta(minutes=10), missed="catch-up") -> Block:
    return Block(id="every-minute", file="t.yaml", cron=Cron.parse("* * * * *"), timezone="UTC", steps=STEP,
                 missed=missed, grace=grace)


def fail_slot(slots, recovery, block, at) -> Slot:
    slot = Slot(block.id, at, slot_key(at), "on time")
    slots.claim(block.id, slot.key)
    slots.set(block.id, slot.key, "failed", run_id=f"run-{slot.key}")
    recovery.failed(block.id, slot, Failed([StepFailed(unreachable(HOST, "ConnectionError"))]), "schedule")
    return slot


def test_the_last_slot_failed_on_ollama_is_retried_once_within_grace(slots):
    block = minutely()
    parts = DaemonParts(slots, block, T0)
    recovery = Recovery(parts)
    for i in range(3):
        fail_slot(slots, recovery, block, T0 + timedelta(minutes=i))
    assert parts.monitor.failures == [f"ollama:{HOST}"] * 3
    parts.now = T0 + timedelta(minutes=2, seconds=40)
    recovery.recovered(f"ollama:{HOST}")
    assert parts.submitted == [("every-minute", "2026-11-22T07:02Z", "retry")]
    assert slots.state(block.id, "2026-11-22T07:02Z") == "claimed"
    assert slots.state(block.id, "2026-11-22T07:00Z") == "failed"
    recovery.recovered(f"ollama:{HOST}")  # once
    assert len(parts.submitted) == 1


def test_a_retry_that_fails_again_is_not_retried_again(slots):
    block = minutely()
    parts = DaemonParts(slots, block, T0)
    recovery = Recovery(parts)
    slot = fail_slot(slots, recovery, block, T0)
    recovery.failed(block.id, slot, Failed([StepFailed(unreachable(HOST))]), "retry")
    assert recovery.retry[block.id][0] == slot  # the schedule's failure is still the one retried


def test_beyond_grace_the_slot_stays_failed_with_the_reason(slots):
    block = minutely(grace=timedelta(minutes=5))
    parts = DaemonParts(slots, block, T0)
    recovery = Recovery(parts)
    fail_slot(slots, recovery, block, T0)
    parts.now = T0 + timedelta(minutes=30)
    recovery.recovered(f"ollama:{HOST}")
    assert parts.submitted == []
    row = slots.history(block.id)[0]
    assert row["state"] == "failed" and row["run_id"] == "run-2026-11-22T07:00Z"
    assert "not retried" in row["reason"] and "beyond grace" in row["reason"]


def test_not_retried_when_a_later_slot_ran_or_the_cause_differs(slots):
    block = minutely()
    parts = DaemonParts(slots, block, T0)
    recovery = Recovery(parts)
    fail_slot(slots, recovery, block, T0)
    recovery.recovered("vault-unwritable")  # another cause came back: not this one
    assert parts.submitted == []
    slots.claim(block.id, slot_key(T0 + timedelta(minutes=1)))
    slots.set(block.id, slot_key(T0 + timedelta(minutes=1)), "done")
    parts.now = T0 + timedelta(minutes=1, seconds=30)
    recovery.recovered(f"ollama:{HOST}")
    assert parts.submitted == []
    assert "a later slot of the block ran since" in slots.history(block.id)[1]["reason"]


def test_slots_a_full_state_disk_could_not_record_are_missed_with_that_reason(slots):
    block = minutely(grace=timedelta(minutes=2))
    slots.seen_since(block.id, T0)
    now = T0 + timedelta(minutes=5, seconds=10)
    due = owed(block, slots, now, UTC, absent=STATE_FULL)
    assert [s.key for s in due.run] == ["2026-11-22T07:05Z"]
    assert [s.key for s in due.missed] == [f"2026-11-22T07:0{i}Z" for i in range(1, 5)]
    assert all("was due while the state disk was full" in s.reason for s in due.missed)


def test_the_checks_say_which_causes_are_gone(tmp_path, monkeypatch):
    from routine.daemon import dependencies
    from routine.daemon.dependencies import Check, clears

    checks = [Check("ollama", HOST, True, cause=f"ollama:{HOST}", models={"mistral:7b"}),
              Check("vault", "/v", False, "not writable", cause="vault-unwritable")]
    assert clears(checks, f"ollama:{HOST}") is True
    assert clears(checks, f"model:mistral:7b@{HOST}") is True
    assert clears(checks, f"model:qwen2.5:7b@{HOST}") is False  # reachable, but still not pulled
    assert clears(checks, "vault-unwritable") is False
    assert clears(checks, "disk-full:state") is None  # not checked: left as it is
    assert dependencies.free_space("state disk", tmp_path, "disk-full:state").ok
    monkeypatch.setattr(dependencies, "MIN_FREE_BYTES", 1 << 62)
    low = dependencies.free_space("state disk", tmp_path, "disk-full:state")
    assert not low.ok and low.detail.startswith("full: ") and low.cause == "disk-full:state"
    assert dependencies.vault(tmp_path).ok
    assert dependencies.vault(tmp_path / "missing").detail.startswith("not readable")


def test_a_dead_scheduler_is_started_again_by_the_health_monitor(initialised, monkeypatch):
    """The scheduler's thread dies (as it did when its job store hit a full disk): the monitor's
    next round starts it again, no daemon restart."""
    from routine.daemon.app import Daemon
    from test_daemon import MINUTELY, only_schedule

    home = initialised
    only_schedule(home, MINUTELY.replace('"* * * * *"', '"0 3 * * *"'))
    for key, value in home.env.items():
        if key.startswith(("ROUTINE_", "OLLAMA_")):
            monkeypatch.setenv(key, value)
    d = Daemon()
    try:
        d.restart_timers()
        d.timers.scheduler.shutdown(wait=False)  # the thread is gone
        assert not d.timers_alive()
        d.monitor.round()
        assert d.timers_alive() and list(d.timers.next_fires()) == ["every-minute"]
        assert any(c.name == "scheduler" and c.ok for c in d.monitor.checks)
    finally:
        d.timers.stop()
        d.journal.close()


def test_a_missing_model_shows_as_degraded_until_it_is_pulled():
    from routine.daemon.monitor import Monitor

    monitor = Monitor(host=None)
    monitor.failing.add(f"model:qwen2.5:7b@{HOST}")
    assert monitor.degraded()[0] == f"the model qwen2.5:7b at {HOST} is not pulled (runs that need it fail)"


def test_a_run_that_crashes_inside_routine_is_failed_and_said_not_left_running(initialised, tmp_path):
    """A bug inside routine during a scheduled run (e.g. "database is locked" on a busy box) used
    to leave the slot claimed and its run "running" until a restart, with nothing in the vault."""
    from routine.config.loader import load_config
    from routine.journal import Journal
    from routine.vault import split_frontmatter

    journal = Journal(tmp_path / "journal.sqlite3")
    slots = Slots(journal.db)
    block = minutely()
    parts = DaemonParts(slots, block, T0)
    parts.live.config = load_config(str(initialised.config))
    slot = Slot(block.id, T0, slot_key(T0), "on time")
    slots.claim(block.id, slot.key)
    slots.set(block.id, slot.key, "running")
    run = journal.start(agent=None, trigger="schedule", kind="block", block=block.id, slot=slot.key)
    step = journal.start(agent="librarian", trigger="schedule", block=block.id, step=0, parent=run)

    Recovery(parts).crashed(block.id, slot, journal, sqlite3.OperationalError("database is locked"))

    assert slots.state(block.id, slot.key) == "failed"
    rows = dict(journal.db.execute("SELECT id, status FROM runs").fetchall())
    assert rows == {run: "failed", step: "failed"}
    alerts = list((parts.live.config.vault / "Alerts").glob("*.md"))
    assert len(alerts) == 1
    props, body = split_frontmatter(alerts[0].read_text())
    assert props["status"] == "open" and "database is locked" in body and "routine fire every-minute" in body

    Recovery(parts).ran_through(block.id)  # the next run ends well, after a restart of the daemon too
    assert split_frontmatter(alerts[0].read_text())[0]["status"] == "resolved"
    journal.close()


def test_a_slot_that_finds_the_journal_locked_runs_once_it_is_free(initialised, tmp_path, monkeypatch):
    """Two blocks due at one minute on a busy box once found the run journal locked for longer than a
    write waits: the second block's on-time slot was lost until its next day (a traceback in the
    journal). Now the block is looked at again a moment later and its slot runs, on time; a journal
    that stays locked (another program holding it) raises one alert, resolved once it is free."""
    import threading

    from routine import statedb
    from routine.config.loader import load_config
    from routine.daemon import recovery, scheduled
    from routine.journal import Journal
    from routine.vault import split_frontmatter
    from waits import wait_until

    monkeypatch.setattr(statedb, "SNAPSHOT_PATIENCE", 0.2)
    monkeypatch.setattr(scheduled, "LOOK_AGAIN_SECONDS", 0.2)
    monkeypatch.setattr(recovery, "BUSY_LOOKS", 2)
    journal = Journal(tmp_path / "journal.sqlite3")
    journal.db.execute("PRAGMA busy_timeout=100")
    block = minutely()

    class Parts(scheduled.ScheduledWork):
        def __init__(self):
            self.journal, self.slots, self.now = journal, Slots(journal.db), T0 + timedelta(seconds=1)
            self.live = DaemonParts(self.slots, block, T0).live
            self.live.config = load_config(str(initialised.config))
            self.state_dir, self.stopping, self.due_lock = tmp_path, threading.Event(), threading.Lock()
            self.recovery, self.submitted = Recovery(self), []

        def clock(self):
            return self.now

        def submit_slot(self, block, slot, trigger):
            self.submitted.append((slot.key, trigger))

    parts = Parts()
    parts.slots.seen_since(block.id, T0 - timedelta(seconds=30))  # known since just before the slot
    other = sqlite3.connect(tmp_path / "journal.sqlite3", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another connection holds the journal's write lock

    parts.on_due(block.id)  # no traceback: nothing claimed yet
    assert parts.submitted == [] and parts.slots.state(block.id, slot_key(T0)) is None
    alerts = parts.live.config.vault / "Alerts"
    alert = wait_until(lambda: list(alerts.glob("*journal locked*.md")), 10, "the alert")[0]
    assert "fuser" in alert.read_text() and split_frontmatter(alert.read_text())[0]["status"] == "open"

    other.execute("COMMIT")
    assert wait_until(lambda: parts.submitted, 10, "the slot looked at again") == [(slot_key(T0), "schedule")]
    assert parts.slots.state(block.id, slot_key(T0)) == "claimed"
    assert split_frontmatter(alert.read_text())[0]["status"] == "resolved"
    assert [p.name for p in alerts.glob("*.md")] == [alert.name]
    other.close()
    journal.close()
