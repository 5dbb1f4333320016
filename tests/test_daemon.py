"""`routine run` as a subprocess: real timers (on a driven clock), the control socket, hot reload,
kill -9, SIGTERM."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import textwrap
from contextlib import contextmanager

import pytest

from waits import scaled, wait_until

MINUTELY = textwrap.dedent("""\
    blocks:
      every-minute:
        cron: "* * * * *"
        missed: catch-up
        grace: 10m
        steps:
          - agent: librarian
            task: Note the minute.
            write: {note: "Daily/{{ today }}.md", section: "Minute"}
    """)


wait_for = wait_until  # the daemon tests' name for it (tests/waits.py: timeouts scaled by one setting)


@contextmanager
def daemon(home, log_name="daemon.log", cold=False):
    """`routine run`, warm-started (tests/warm_start.py) unless ``cold``: a fresh `python -m
    routine run` that imports litellm and the rest in the daemon's own order, as systemd starts it."""
    log = open(home.root / log_name, "ab")
    proc = home.starter.popen(["run"], env=home.env, cwd=home.root, stdout=log, stderr=subprocess.STDOUT, cold=cold)
    try:
        wait_for(
            lambda: (home.root / "run" / "control.sock").exists() or proc.poll() is not None, 30, "the control socket"
        )
        assert proc.poll() is None, (home.root / log_name).read_text()
        yield proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=scaled(30))
            except subprocess.TimeoutExpired:
                proc.kill()
        log.close()


def status(home) -> dict:
    return json.loads(home.run("status", "--json", check=True).stdout)


def settled_as(home, rel: str) -> list[str]:
    """What the daemon's vault watcher decided about each recent save of ``rel``, oldest first
    (a change's kind, "own write", "unchanged"): `routine status --json`, vault_watch.recent."""
    return [r["outcome"] for r in status(home)["vault_watch"]["recent"] if r["path"] == rel]


def all_handled(home) -> bool:
    """The watcher holds no unsettled path and the queue no job: every change seen so far has
    been decided and its runs (if any) have finished."""
    return handled(status(home))


def handled(st: dict) -> bool:
    """``all_handled`` of a status already asked for."""
    return st["vault_watch"]["pending"] == 0 and not st["queue"]["running"] and not st["queue"]["queued"]


def only_schedule(home, text: str, name="test.yaml") -> None:
    folder = home.config.parent / "schedules"
    for f in folder.glob("*.yaml"):
        f.unlink()
    (folder / name).write_text(text)


def journal_rows(home, sql: str, *args):
    db = sqlite3.connect(home.state / "journal.sqlite3")
    try:
        return db.execute(sql, args).fetchall()
    finally:
        db.close()


def test_fire_goes_through_running_daemon_and_status_reports_it(initialised, ollama):
    """Started cold, as systemd starts it (not forked from the warm-start server, which imported
    litellm first): an import-order fault at the daemon's start fails here."""
    home = initialised
    only_schedule(home, MINUTELY.replace('"* * * * *"', '"0 3 * * *"'))
    with daemon(home, cold=True) as proc:
        st = status(home)
        assert st["state"] == "running" and st["pid"] == proc.pid
        assert [f["block"] for f in st["next_fires"]] == ["every-minute"]
        fired = home.run("fire", "strategist", check=True)
        assert "Wrote Alignment in Daily/" in fired.stdout
        runs = json.loads(home.run("runs", "list", "--json", check=True).stdout)
        assert runs[0]["agent"] == "strategist" and runs[0]["status"] == "ok"
        assert any(r["id"] == runs[0]["id"] for r in status(home)["recent_runs"])
    assert proc.returncode == 0
    log = (home.root / "daemon.log").read_text()
    assert "fire strategist" in log
    assert "apscheduler" not in log and "Adding job" not in log  # no scheduler chatter at start


def test_hot_reload_valid_and_invalid_edits(initialised, ollama):
    home = initialised
    only_schedule(home, MINUTELY.replace('"* * * * *"', '"0 3 * * *"'))
    with daemon(home):
        path = home.config.parent / "schedules" / "test.yaml"
        path.write_text(path.read_text().replace('"0 3 * * *"', '"0 4 * * *"')
                        .replace("every-minute", "renamed-block"))
        wait_for(lambda: [f["block"] for f in status(home)["next_fires"]] == ["renamed-block"], 15, "the reload")
        path.write_text(path.read_text().replace('"0 4 * * *"', '"0 99 * * *"'))
        alert = wait_for(lambda: [a for a in (home.vault / "Alerts").glob("*config rejected*.md")], 15, "an alert")
        assert "hour 99 is out of range" in alert[0].read_text()
        assert [f["block"] for f in status(home)["next_fires"]] == ["renamed-block"]  # last good stays
        shown = home.run("schedule", "next", "3")  # the broken file's last good version, named as such
        assert shown.returncode == 2 and "renamed-block" in shown.stdout and "last good version" in shown.stdout
        assert f"{path} is broken, so the running daemon keeps its last good version (renamed-block)" in shown.stderr
        path.write_text(path.read_text().replace('"0 99 * * *"', '"0 5 * * *"'))  # fixed: the alert is over
        wait_for(lambda: "status: resolved" in alert[0].read_text(), 15, "the alert resolved by the fixed file")


def test_a_block_added_while_the_daemon_runs_runs_at_its_first_slot(initialised, ollama, driven_clock):
    """A block written into a schedule file while the daemon runs is known from the reload on: its
    very first slot runs (it was lost, unrecorded, when it was first seen at that slot)."""
    home = initialised
    only_schedule(home, MINUTELY.replace('"* * * * *"', '"0 3 * * *"'))
    with daemon(home):
        added = home.config.parent / "schedules" / "added.yaml"
        added.write_text(MINUTELY.replace("every-minute", "added-block").replace('"Minute"', '"Added"'))
        wait_for(lambda: "added-block" in [f["block"] for f in status(home)["next_fires"]], 15, "the reload")
        slot = driven_clock.before_next_minute().strftime("%Y-%m-%dT%H:%MZ")
        wait_for(lambda: journal_rows(home, "SELECT state FROM slots WHERE block='added-block' AND slot=?", slot),
                 60, "the new block's first slot")
        wait_for(lambda: journal_rows(home, "SELECT status FROM runs WHERE block='added-block' AND kind='block' "
                                            "AND status='ok'"), 60, "its run")


def test_sigterm_when_idle_exits_zero(initialised):
    home = initialised
    only_schedule(home, MINUTELY.replace('"* * * * *"', '"0 3 * * *"'))
    with daemon(home) as proc:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=scaled(30)) == 0
    assert not (home.root / "run" / "control.sock").exists()


def test_sigterm_mid_step_abandons_it_without_writing_and_records_it(initialised, ollama):
    home = initialised
    only_schedule(home, MINUTELY.replace('"* * * * *"', '"0 3 * * *"'))
    ollama.script("mistral:7b-instruct-q4_K_M", [{"content": "- too late to matter", "delay": 90}])
    with daemon(home) as proc:
        fire = subprocess.Popen([sys.executable, "-m", "routine", "fire", "strategist"], env=home.env, cwd=home.root,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wait_for(lambda: journal_rows(home, "SELECT id FROM runs WHERE status='running' AND agent='strategist'"),
                 30, "the running step")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=scaled(60)) == 0
        out, err = fire.communicate(timeout=scaled(30))
    assert fire.returncode != 0 and "Traceback" not in err
    assert journal_rows(home, "SELECT status FROM runs WHERE agent='strategist'") == [("interrupted",)]
    assert not list((home.vault / "Daily").glob("*.md"))  # no half-written note


@pytest.mark.slow
def test_kill_9_mid_step_then_restart_leaves_one_completed_run_per_slot(initialised, ollama, driven_clock):
    home = initialised
    only_schedule(home, MINUTELY)
    # The first answer is slow, so the daemon is killed while the step is running (the stand-in
    # keeps the model busy with the dead request until its next chunk: half the delay).
    ollama.script("mistral:7b-instruct-q4_K_M", [{"content": "- slow answer", "delay": scaled(10)}])
    with daemon(home, "first.log") as first:
        first_slot = driven_clock.before_next_minute()
        wait_for(
            lambda: journal_rows(home, "SELECT id FROM runs WHERE status='running' AND kind='step'"),
            90,
            "a running step",
        )
        first.kill()
        first.wait()
    running = journal_rows(home, "SELECT slot FROM runs WHERE status='running' AND kind='step'")
    killed_slot = running[0][0]
    assert killed_slot == first_slot.strftime("%Y-%m-%dT%H:%MZ")  # the timer fired that minute
    with daemon(home, "second.log"):
        # The interrupted slot is caught up (within grace), then the next minute runs on time.
        ok_slots = "SELECT DISTINCT slot FROM runs WHERE kind='step' AND status='ok'"
        wait_for(lambda: journal_rows(home, ok_slots), 90, "the catch-up of the interrupted slot")
        next_slot = driven_clock.before_next_minute().strftime("%Y-%m-%dT%H:%MZ")
        wait_for(lambda: journal_rows(home, ok_slots.replace("status='ok'", "status='ok' AND slot=?"), next_slot),
                 90, "the next minute's run")
    ok = journal_rows(home, "SELECT slot, COUNT(*) FROM runs WHERE kind='step' AND status='ok' GROUP BY slot")
    assert all(count == 1 for _, count in ok), ok
    # On a loaded box the catch-up may still run when a real minute passes: that minute runs on
    # its own, once, between the two (the assertion is on slots run once, not on the box's speed).
    assert killed_slot == min(slot for slot, _ in ok) and next_slot == max(slot for slot, _ in ok), ok
    assert journal_rows(home, "SELECT trigger FROM runs WHERE kind='block' AND slot=?", next_slot) == [("schedule",)]
    interrupted = journal_rows(home, "SELECT slot FROM runs WHERE status='interrupted' AND kind='step'")
    assert (killed_slot,) in interrupted
    # Every slot the journal knows is explained: done, or missed/skipped with a reason.
    for slot, state, reason in journal_rows(home, "SELECT slot, state, reason FROM slots"):
        assert state in ("done", "missed", "skipped", "failed"), (slot, state)
        assert state == "done" or reason


@pytest.mark.daemon(budget=60)
def test_a_part_that_cannot_start_is_named_and_the_parts_before_it_are_stopped(initialised):
    home = initialised
    only_schedule(home, MINUTELY.replace('"* * * * *"', '"0 3 * * *"'))
    (home.root / "run").write_text("not a folder")  # the runtime dir the control socket needs
    proc = home.run("run", timeout=60)
    assert proc.returncode == 1, proc.stderr
    assert "routine: The daemon could not start its control socket: " in proc.stderr and "Traceback" not in proc.stderr
    # The parts before it were stopped (their threads too: the process ended, within the timeout).
    assert "stopping what started before it" in proc.stderr


def test_a_fire_right_after_an_agent_note_is_saved_runs_the_note_as_it_is_now(initialised, ollama):
    home = initialised
    only_schedule(home, MINUTELY.replace('"* * * * *"', '"0 3 * * *"'))
    note = home.vault / "Agents" / "Strategist.md"
    with daemon(home):
        for i in range(3):
            note.write_text(note.read_text() + f"\nAlways mention the word marker{i}.\n")
            home.run("fire", "strategist", check=True)  # at once: before the reload's settle
            system = [m["content"] for m in [r for r in ollama.requests if "messages" in r][-1]["messages"]
                      if m["role"] == "system"]
            assert any(f"marker{i}" in text for text in system), system
