"""A damaged journal or graph cache never stops routine: set aside, a new one started, said.

The journal is history and the graph cache a cache (the vault is the truth). A bad SD card, a
full disk mid-write or a stray `cp` leaves garbage or a truncated file in the state dir; the
daemon, `status`, `runs list`, `fire` and `doctor` must go on, keep the old file aside and say so.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
from contextlib import contextmanager

import pytest

from tests.test_daemon import daemon, only_schedule, status, wait_for
from tests.test_recovery import _fill, _mount_tmpfs

QUIET = 'blocks:\n  nightly:\n    cron: "0 3 * * *"\n    steps:\n      - agent: librarian\n        task: Tidy.\n'


def _garbage(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"this is not a database, a sync tool put it here\n" * 200)


def _truncated(path):
    """A real journal with a few hundred runs, cut in half as a full disk or a bad card leaves it."""
    from routine.journal import Journal

    journal = Journal(path)
    for n in range(300):
        run = journal.start(agent="librarian", trigger="manual", task="x" * 2000, run_id=f"run-{n:03d}")
        journal.finish(run, "ok", output=f"output {n} " + "y" * 2000)
    journal.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    journal.close()
    size = path.stat().st_size
    with open(path, "r+b") as f:
        f.truncate(size // 2)


def _kept_aside(home, name="journal"):
    return sorted(home.state.glob(f"{name}.damaged-*.sqlite3"))


@pytest.mark.parametrize("damage", [_garbage, _truncated], ids=["garbage", "truncated"])
def test_the_daemon_starts_over_a_damaged_journal_keeps_it_aside_and_says_so(initialised, ollama, damage):
    home = initialised
    only_schedule(home, QUIET)
    damage(home.state / "journal.sqlite3")
    damaged_bytes = (home.state / "journal.sqlite3").read_bytes()
    with daemon(home) as proc:
        assert status(home)["state"] == "running"
        kept = _kept_aside(home)
        assert len(kept) == 1 and kept[0].read_bytes() == damaged_bytes  # nothing lost
        alert = wait_for(lambda: list((home.vault / "Alerts").glob("*journal.sqlite3 damaged*.md")), 30, "the alert")
        assert kept[0].name in alert[0].read_text()
        fired = home.run("fire", "strategist", check=True)
        assert "Wrote Alignment in Daily/" in fired.stdout
        runs = json.loads(home.run("runs", "list", "--json", check=True).stdout)
        assert [r["agent"] for r in runs] == ["strategist"]
        assert proc.poll() is None
    log = (home.root / "daemon.log").read_text()
    assert "Traceback" not in log
    assert f"journal.sqlite3 in {home.state} was damaged; it was moved aside as {kept[0].name}" in log
    with daemon(home, "again.log"):  # the next start neither sets anything aside nor alerts again
        assert status(home)["state"] == "running"
        assert _kept_aside(home) == kept
    assert len(list((home.vault / "Alerts").glob("*journal.sqlite3 damaged*.md"))) == 1
    doctor = home.run("doctor")
    assert f"WARN state: journal.sqlite3 in {home.state} was damaged; it was moved aside as {kept[0].name}" \
        in doctor.stdout, doctor.stdout


def test_status_runs_fire_and_doctor_without_a_daemon_over_a_garbage_journal(initialised, ollama):
    home = initialised
    _garbage(home.state / "journal.sqlite3")
    st = home.run("status", "--json")
    assert json.loads(st.stdout)["state"] == "not running" and "Traceback" not in st.stderr, st.stderr
    assert "was damaged; it was moved aside as journal.damaged-" in st.stderr
    assert json.loads(home.run("runs", "list", "--json", check=True).stdout) == []
    fired = home.run("fire", "strategist")
    assert fired.returncode == 0 and "Wrote Alignment in Daily/" in fired.stdout, fired.stderr
    assert len(_kept_aside(home)) == 1
    doctor = home.run("doctor")
    assert "WARN state: journal.sqlite3" in doctor.stdout and "Traceback" not in doctor.stderr


def test_doctor_sets_aside_a_journal_it_finds_damaged_and_says_all_is_well_otherwise(initialised, ollama):
    home = initialised
    home.run("runs", "list", check=True)  # a sound journal
    assert f"ok   state: the journal in {home.state} is sound" in home.run("doctor").stdout
    _garbage(home.state / "journal.sqlite3")
    (home.state / "journal.sqlite3-wal").write_bytes(b"junk wal")
    doctor = home.run("doctor")
    kept = _kept_aside(home)
    assert len(kept) == 1 and (home.state / f"{kept[0].name}-wal").read_bytes() == b"junk wal"
    assert f"WARN state: journal.sqlite3 in {home.state} was damaged" in doctor.stdout


def test_a_damaged_graph_cache_is_set_aside_and_rebuilt(tmp_path):
    from routine.graph.cache import GraphCache

    vault = tmp_path / "Vault"
    (vault / "Notes").mkdir(parents=True)
    (vault / "Notes" / "A.md").write_text("Links to [[B]].\n")
    (vault / "Notes" / "B.md").write_text("B.\n")
    path = tmp_path / "state" / "graph.sqlite3"
    _garbage(path)
    cache = GraphCache(vault, path)
    try:
        assert cache.reconcile().parsed == 2
        assert "Notes/A.md" in cache.graph.facts
    finally:
        cache.close()
    kept = sorted(path.parent.glob("graph.damaged-*.sqlite3"))
    assert len(kept) == 1 and kept[0].read_bytes().startswith(b"this is not a database")


def test_a_locked_journal_is_not_taken_for_damage(tmp_path):
    """Only 'not a database' and 'malformed' set a file aside; a lock (or a full disk) stays an error."""
    from routine.statedb import is_damage

    path = tmp_path / "j.sqlite3"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("CREATE TABLE t (x)")
    holder.execute("BEGIN EXCLUSIVE")
    other = sqlite3.connect(path, timeout=0)
    with pytest.raises(sqlite3.OperationalError) as err:
        other.execute("SELECT * FROM t")
    other.close()
    holder.close()
    assert not is_damage(err.value)
    assert not list(tmp_path.glob("*.damaged-*"))


@contextmanager
def full_state_disk(home):
    if not _mount_tmpfs(home.state, "8m"):
        pytest.skip("cannot mount a tmpfs here (needs root or CAP_SYS_ADMIN)")
    try:
        yield lambda: _fill(home.state / "filler")
    finally:
        subprocess.run(["umount", "-l", str(home.state)], check=False)


def test_fire_on_a_full_state_disk_says_so_in_one_sentence(initialised, ollama):
    home = initialised
    with full_state_disk(home) as fill:
        home.run("runs", "list", check=True)  # the journal is there, then the disk fills
        fill()
        fired = home.run("fire", "strategist", process=True)
        assert fired.returncode == 1 and "Traceback" not in fired.stderr, fired.stderr
        assert fired.stderr.startswith(f"routine: The disk holding routine's state ({home.state}) is full"), (
            fired.stderr
        )
        assert f"Fix: free space on that disk (`df -h {home.state}`), then try again." in fired.stderr
        assert not list((home.vault / "Daily").glob("*.md"))  # nothing was run


def test_fire_through_the_daemon_on_a_full_state_disk_says_so_in_one_sentence(initialised, ollama):
    home = initialised
    only_schedule(home, QUIET)
    with full_state_disk(home) as fill, daemon(home) as proc:
        fill()
        fired = home.run("fire", "strategist", process=True)
        assert fired.returncode == 1 and fired.stderr.startswith(
            f"routine: The disk holding routine's state ({home.state}) is full"), (fired.stdout, fired.stderr)
        assert "Fix: free space on that disk" in fired.stderr
        assert proc.poll() is None
    assert "work fire strategist crashed" not in (home.root / "daemon.log").read_text()
