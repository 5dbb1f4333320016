"""The vault watcher on real files and real inotify: one change per save, none for our own writes."""

from __future__ import annotations

import os
import threading
import time

import pytest

from routine.vault.atomic import add_write_listener, atomic_write, remove_write_listener
from routine.watch.changes import Change
from routine.watch.state import FileStates
from routine.watch.watcher import VaultWatcher
from waits import wait_until

QUIET = 0.4
HELD = 3600.0  # a note the test holds does not settle until it lets go (``let_go``)


class Seen:
    def __init__(self):
        self.changes: list[Change] = []
        self.lock = threading.Lock()

    def __call__(self, change: Change) -> None:
        with self.lock:
            self.changes.append(change)

    def all(self) -> list[tuple]:
        with self.lock:
            return [(c.kind, c.rel, c.src) for c in self.changes if not c.rel.startswith(SENTINELS)]


SENTINELS = "Sentinel/"


def poll(predicate, what: str, timeout: float = 10.0):
    return wait_until(predicate, timeout, what, interval=0.02)


def handled(watcher: VaultWatcher, seen: Seen) -> list[tuple]:
    """The changes reported for everything done to the vault before this call. A sentinel note
    saved now settles after all of it (inotify keeps the order of events, and every path waits
    the same quiet), so once the watcher has settled the sentinel, nothing earlier is still on its
    way: what did not arrive by then was decided not to be a change."""
    sentinel = f"{SENTINELS}{time.monotonic_ns()}.md"
    (watcher.root / sentinel).parent.mkdir(exist_ok=True)
    (watcher.root / sentinel).write_text("sentinel\n")
    poll(lambda: any(s.rel == sentinel for s in watcher.recent()), f"the watcher to settle {sentinel}")
    return seen.all()


def after_reconciles(watcher: VaultWatcher, seen: Seen) -> list[tuple]:
    """Without inotify: the changes once a reconcile that began after this call has finished."""
    start = watcher.reconciles
    poll(lambda: watcher.reconciles >= start + 2, "two more reconcile passes")  # the first may have begun before
    return seen.all()


def let_go(held: set[str], vault, rel: str) -> None:
    """Let the held note settle: it waits its usual quiet from a touch made now (an attribute
    event, the bytes untouched), so whatever was done to it meanwhile is judged in one look."""
    held.discard(rel)
    os.utime(vault / rel)


def outcome(watcher: VaultWatcher, rel: str) -> str | None:
    """What the watcher last decided about ``rel`` (a change's kind, "own write", "unchanged")."""
    return next((s.as_dict()["outcome"] for s in reversed(watcher.recent()) if s.rel == rel), None)


@pytest.fixture
def vault(tmp_path):
    root = tmp_path / "Vault"
    for folder in ("Inbox", "Daily", "Projects", ".obsidian", ".trash"):
        (root / folder).mkdir(parents=True)
    (root / "Daily" / "2026-11-22.md").write_text("# Sunday\n")
    return root


@pytest.fixture
def watch(vault, tmp_path):
    started = []

    def make(inotify=True, reconcile_every=300.0, held: set[str] = frozenset()):
        seen = Seen()
        states = FileStates(tmp_path / "journal.sqlite3")
        watcher = VaultWatcher(vault, seen, states, quiet_for=lambda rel: HELD if rel in held else QUIET,
                               reconcile_every=reconcile_every, inotify=inotify)
        add_write_listener(watcher.own_write)
        caught_up = watcher.start()
        started.append((watcher, states))
        return watcher, seen, caught_up

    yield make
    for watcher, states in started:
        remove_write_listener(watcher.own_write)
        watcher.stop()
        states.close()


def test_first_start_takes_a_baseline_and_reports_nothing(watch):
    watcher, seen, caught_up = watch()
    assert caught_up == []
    assert handled(watcher, seen) == []


def test_a_burst_of_saves_is_one_change(watch, vault):
    watcher, seen, _ = watch()
    note = vault / "Inbox" / "idea.md"
    for i in range(100):
        note.write_text(f"draft {i}\n")
    assert handled(watcher, seen) == [("created", "Inbox/idea.md", None)]


def test_an_editor_saving_through_a_temp_file_is_a_modify(watch, vault):
    watcher, seen, _ = watch()
    note = vault / "Daily" / "2026-11-22.md"
    temp = vault / "Daily" / "2026-11-22.md.tmp"
    temp.write_text("# Sunday\nwent for a walk\n")
    os.replace(temp, note)
    assert handled(watcher, seen) == [("modified", "Daily/2026-11-22.md", None)]


def test_routines_own_write_is_no_change_but_the_persons_next_edit_is(watch, vault):
    watcher, seen, _ = watch()
    note = vault / "Daily" / "2026-11-22.md"
    atomic_write(note, "# Sunday\n## Alignment\ngenerated\n")
    assert handled(watcher, seen) == []
    assert outcome(watcher, "Daily/2026-11-22.md") == "own write"  # seen, and recognised as ours
    note.write_text(note.read_text() + "my own line\n")
    assert handled(watcher, seen) == [("modified", "Daily/2026-11-22.md", None)]


# The race of a person's save and routine's write to one note: whatever their order, and however
# close, the person's save is the person's and routine's bytes are routine's. The watcher is held
# on the note (as a busy machine or the note's debounce holds it) until both writes are done.

DAILY = "Daily/2026-11-22.md"


def person_then_routine(note) -> None:
    note.write_text("# Sunday\n- [ ] call the plumber\n")  # the person's save...
    theirs = note.read_bytes()
    atomic_write(note, theirs + b"## Alignment\ngenerated\n", expected=theirs)  # ...routine writes over it


def routine_then_person(note) -> None:
    atomic_write(note, "# Sunday\n## Alignment\ngenerated\n")
    note.write_text(note.read_text() + "my own line\n")


def person_deletes_then_routine_writes(note) -> None:
    note.unlink()
    atomic_write(note, "# Sunday\n## Alignment\ngenerated\n")


@pytest.mark.parametrize("interleave", [person_then_routine, routine_then_person, person_deletes_then_routine_writes])
def test_a_persons_save_just_before_or_after_routines_write_is_a_change(watch, vault, interleave):
    held = {DAILY}
    watcher, seen, _ = watch(held=held)
    interleave(vault / DAILY)
    let_go(held, vault, DAILY)
    assert handled(watcher, seen) == [("modified", DAILY, None)]


def test_routines_writes_interleaved_with_the_persons_are_judged_by_the_bytes_on_disk(watch, vault):
    held = {DAILY}
    watcher, seen, _ = watch(held=held)
    note = vault / DAILY
    atomic_write(note, "# Sunday\nfirst pass\n")
    note.write_text("# Sunday\nfirst pass\nthe person's line\n")  # lands between routine's two writes
    atomic_write(note, "# Sunday\nsecond pass\n")  # routine, not knowing, writes over it
    let_go(held, vault, DAILY)
    assert handled(watcher, seen) == [("modified", DAILY, None)]
    held.add(DAILY)  # once it is seen, routine's next write alone is routine's again
    atomic_write(note, "# Sunday\nthird pass\n")
    atomic_write(note, "# Sunday\nfourth pass\n")
    let_go(held, vault, DAILY)
    assert handled(watcher, seen) == [("modified", DAILY, None)]
    assert outcome(watcher, DAILY) == "own write"


def test_a_save_landing_on_the_note_routine_replaces_is_carried_over_as_the_persons_change(watch, vault):
    held = {DAILY}
    watcher, seen, _ = watch(held=held)
    note = vault / DAILY
    base = note.read_bytes()
    editor = os.open(note, os.O_WRONLY)  # the person's editor has the note open to save it
    writer = threading.Thread(target=atomic_write, args=(note, base + b"## Alignment\ngenerated\n"),
                              kwargs={"expected": base})
    writer.start()
    try:  # routine's rename lands; it then waits (a lease) for the editor to close what it replaced
        poll(lambda: b"generated" in note.read_bytes(), "routine's write to land")
        os.pwrite(editor, b"# Sunday, a walk\n", 0)  # the save lands on the replaced file
    finally:
        os.close(editor)
    writer.join()
    assert note.read_text() == "# Sunday, a walk\n## Alignment\ngenerated\n"  # carried over
    let_go(held, vault, DAILY)
    assert handled(watcher, seen) == [("modified", DAILY, None)]


def test_a_look_at_the_note_while_routine_writes_it_never_takes_routines_write_for_the_persons(watch, vault):
    watcher, seen, _ = watch()

    def look(*written) -> None:  # a reconcile pass reads the note while routine is writing it
        watcher.reconcile()

    add_write_listener(look)  # told after the watcher: its own-write record is already there
    try:
        atomic_write(vault / DAILY, "# Sunday\n## Alignment\ngenerated\n")
    finally:
        remove_write_listener(look)
    assert handled(watcher, seen) == []


def test_a_move_is_one_moved_change(watch, vault):
    (vault / "Inbox" / "call notes.md").write_text("notes\n")
    watcher, seen, _ = watch()
    os.replace(vault / "Inbox" / "call notes.md", vault / "Projects" / "call notes.md")
    assert handled(watcher, seen) == [("moved", "Projects/call notes.md", "Inbox/call notes.md")]


def test_app_state_trash_hidden_files_and_conflict_copies_are_ignored(watch, vault):
    watcher, seen, _ = watch()
    (vault / ".obsidian" / "workspace.md").write_text("x")
    (vault / ".trash" / "old.md").write_text("x")
    (vault / "Inbox" / ".hidden.md").write_text("x")
    (vault / "Inbox" / "idea.sync-conflict-20261122-101010-ABCDEF.md").write_text("x")
    (vault / "Inbox" / "idea (conflicted copy 2026-11-22).md").write_text("x")
    (vault / "Inbox" / "idea.md~").write_text("x")
    assert handled(watcher, seen) == []
    assert all(s.rel.startswith(SENTINELS) for s in watcher.recent())  # not even looked at


def test_changes_made_while_nobody_watched_are_found_at_start(watch, vault):
    first, _, _ = watch()
    first.stop()
    (vault / "Inbox" / "new.md").write_text("arrived overnight\n")
    (vault / "Daily" / "2026-11-22.md").write_text("# Sunday, edited\n")
    second, seen, caught_up = watch()
    assert sorted((c.kind, c.rel) for c in caught_up) == [
        ("created", "Inbox/new.md"),
        ("modified", "Daily/2026-11-22.md"),
    ]
    assert all(c.source == "reconcile" for c in caught_up)


def test_without_inotify_the_reconcile_catches_every_change(watch, vault):
    watcher, seen, _ = watch(inotify=False, reconcile_every=0.5)
    assert "inotify is off" in watcher.degraded
    (vault / "Inbox" / "dropped.md").write_text("the kernel never told us\n")
    (vault / "Daily" / "2026-11-22.md").unlink()
    assert sorted(after_reconciles(watcher, seen)) == [("created", "Inbox/dropped.md", None),
                                                        ("deleted", "Daily/2026-11-22.md", None)]


def test_a_full_watch_limit_is_reported_with_the_fix_and_the_reconcile_takes_over(watch, vault, monkeypatch):
    # Exhausting the real fs.inotify.max_user_watches would break every other program on the
    # machine; only the failing call is simulated, the files and the reconcile are real.
    import errno

    from watchdog.observers import Observer

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "inotify watch limit reached")

    monkeypatch.setattr(Observer, "schedule", full)
    watcher, seen, _ = watch(reconcile_every=0.5)
    assert "watch limit" in watcher.degraded and "sysctl fs.inotify.max_user_watches=" in watcher.degraded
    (vault / "Inbox" / "seen anyway.md").write_text("found by the reconcile\n")
    assert after_reconciles(watcher, seen) == [("created", "Inbox/seen anyway.md", None)]
