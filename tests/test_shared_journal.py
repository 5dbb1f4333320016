"""The daemon's journal connection is shared by its threads: one thread's write waits for
another thread's read to end instead of failing with "database is locked" (a scheduled run
crashed that way on a busy box, leaving its slot claimed)."""

from __future__ import annotations

import threading

import pytest

from routine.journal import Journal
from routine.journal.slots import Slots
from tests.waits import wait_until


@pytest.mark.parametrize("other_is", ["committed", "writing"])
def test_a_write_waits_for_another_threads_read_on_the_shared_connection(tmp_path, other_is):
    path = tmp_path / "journal.sqlite3"
    shared = Journal(path)
    other = Journal(path)  # another run's journal, or `routine status` in another process
    slots = Slots(shared.db)
    for n in range(50):
        slots.set("morning", f"2026-11-{n:02d}", "done")

    reading = shared.db.execute("SELECT block, slot FROM slots")  # the status thread, half way through its rows
    assert reading.fetchone() is not None
    if other_is == "writing":  # another connection is in the middle of a write
        other.db.execute("BEGIN IMMEDIATE")
    Slots(other.db).set("evening", "2026-11-27", "done")  # or has committed one meanwhile

    errors: list[BaseException] = []

    def scheduler() -> None:
        try:
            slots.set("morning", "2026-11-27", "running")
        except BaseException as exc:  # noqa: BLE001 - the test reports what the scheduler thread met
            errors.append(exc)

    writer = threading.Thread(target=scheduler)
    writer.start()
    wait_until(lambda: getattr(shared.db, "busy_retries", 0) > 0 or not writer.is_alive(), 10,
               "the scheduler's write to wait")
    reading.fetchall()  # the read ends
    if other_is == "writing":
        other.db.execute("COMMIT")
    writer.join(timeout=30)

    assert errors == []
    assert shared.db.busy_retries > 0, "the write never met the read: the test did not reproduce the overlap"
    assert slots.state("morning", "2026-11-27") == "running"
    assert Slots(other.db).state("morning", "2026-11-27") == "running"
    shared.close()
    other.close()
