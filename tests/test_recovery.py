"""Degrade and recover by itself: an Ollama outage and a full state disk under a per-minute
block, with the real daemon (a subprocess, its minutes on a clock the test drives), the stand-in
Ollama and a real tmpfs."""

from __future__ import annotations

import errno
import json
import subprocess
from datetime import datetime, timedelta

import pytest

from test_daemon import MINUTELY, daemon, journal_rows, only_schedule, status, wait_for
from waits import scaled

FAKE_EMBEDDINGS = "\nmemory: {embedding_model: 'ollama:nomic-embed-text'}\n"


def frontmatter(path):
    from routine.vault import split_frontmatter

    return split_frontmatter(path.read_text())[0]


def cause_alerts(home, prefix: str):
    folder = home.vault / "Alerts"
    return [p for p in folder.glob("*.md") if str(frontmatter(p).get("cause", "")).startswith(prefix)]


def failed_slots(home) -> list[str]:
    return [r[0] for r in journal_rows(home, "SELECT DISTINCT slot FROM runs WHERE kind='block' AND status='failed' "
                                             "ORDER BY slot")]


@pytest.mark.slow
@pytest.mark.daemon(budget=120)
def test_ollama_outage_one_counted_alert_degraded_then_resolved_and_last_slot_retried(
    initialised, ollama, driven_clock
):
    home = initialised
    home.config.write_text(home.config.read_text() + FAKE_EMBEDDINGS)
    only_schedule(home, MINUTELY)
    ollama.stop()
    with daemon(home) as proc:
        slots = []
        for n in (1, 2, 3):  # three minutes come, each slot fails on its real timer
            slots.append(driven_clock.before_next_minute().strftime("%Y-%m-%dT%H:%MZ"))
            failed = wait_for(lambda n=n: len(failed_slots(home)) >= n and failed_slots(home), 90, f"failed slot {n}")
        assert failed == slots
        st = status(home)
        assert st["health"]["state"] == "degraded", st["health"]
        assert any("ollama" in p and "not reachable" in p for p in st["health"]["problems"]), st["health"]
        alerts = cause_alerts(home, "ollama:")
        assert len(alerts) == 1, [a.name for a in (home.vault / "Alerts").glob("*.md")]
        props = frontmatter(alerts[0])
        assert props["status"] == "open" and props["count"] >= 3, props
        assert "every-minute (librarian)" in props["affected"]
        assert f"Seen {props['count']} times" in alerts[0].read_text()

        ollama.start()  # the same port: Ollama is back
        last = failed[-1]
        retried = wait_for(lambda: journal_rows(home, "SELECT status FROM runs WHERE kind='block' AND slot=? "
                                                      "AND trigger='retry'", last), 60, "the retry of the last slot")
        resolved = wait_for(lambda: frontmatter(alerts[0])["status"] == "resolved", 30, "the alert to resolve")
        assert resolved and "Resolved by itself" in alerts[0].read_text()
        wait_for(lambda: journal_rows(home, "SELECT 1 FROM runs WHERE kind='block' AND slot=? AND trigger='retry' "
                                            "AND status NOT IN ('running')", last), 60, "the retry to finish")
        assert journal_rows(home, "SELECT status FROM runs WHERE kind='block' AND slot=? AND trigger='retry'", last) \
            == [("ok",)], retried
        assert journal_rows(home, "SELECT state FROM slots WHERE slot=?", last) == [("done",)]
        # Once, and only the last failed slot: the earlier ones stay failed.
        assert len(journal_rows(home, "SELECT id FROM runs WHERE kind='block' AND trigger='retry'")) == 1
        assert wait_for(lambda: status(home)["health"]["state"] == "ok", 30, "health back to ok")
        assert len(cause_alerts(home, "ollama:")) == 1
        assert proc.poll() is None
    assert "Traceback" not in (home.root / "daemon.log").read_text()


def _mount_tmpfs(path, size: str) -> bool:
    path.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True)
    return done.returncode == 0


def _fill(path) -> None:
    """Write into ``path`` until the disk says it is full."""
    chunk = b"\0" * (1 << 20)
    with open(path, "wb") as out:
        try:
            while True:
                out.write(chunk)
                out.flush()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC, exc


def _slot_keys(start: datetime, end: datetime) -> list[str]:
    """The per-minute slots after ``start`` up to ``end``."""
    at = start.replace(second=0, microsecond=0) + timedelta(minutes=1)
    keys = []
    while at <= end:
        keys.append(at.strftime("%Y-%m-%dT%H:%MZ"))
        at += timedelta(minutes=1)
    return keys


@pytest.mark.slow
@pytest.mark.daemon(budget=120)
def test_full_state_disk_alerts_accounts_for_every_slot_and_resumes_without_restart(initialised, ollama, driven_clock):
    home = initialised
    if not _mount_tmpfs(home.state, "48m"):
        pytest.skip("cannot mount a tmpfs here (needs root or CAP_SYS_ADMIN)")
    try:
        home.config.write_text(home.config.read_text() + FAKE_EMBEDDINGS)
        only_schedule(home, MINUTELY)
        with daemon(home) as proc:
            filler = home.state / "filler"
            full_at = driven_clock.now()
            _fill(filler)
            alert = wait_for(lambda: cause_alerts(home, "disk-full:state"), 90, "a state-disk-full alert")[0]
            assert frontmatter(alert)["status"] == "open"
            # Two slots come and go while the disk is full (each fires on its real timer).
            for _ in range(2):
                slot = driven_clock.before_next_minute()
                wait_for(
                    lambda slot=slot: driven_clock.now() > slot + timedelta(seconds=scaled(5)),
                    60,
                    f"the slot {slot:%H:%M} to pass",
                )
            assert len(_slot_keys(full_at, driven_clock.now())) >= 2
            st = status(home)
            assert st["health"]["state"] == "degraded" and any("state disk" in p for p in st["health"]["problems"])
            filler.unlink()
            freed_at = driven_clock.now()
            owed = _slot_keys(full_at, freed_at)

            def accounted():
                rows = dict(journal_rows(home, "SELECT slot, status FROM runs WHERE kind='block'"))
                return all(k in rows for k in owed) and rows
            rows = wait_for(accounted, 60, f"a journal row for every slot of {owed}")
            missed = [k for k in owed if rows[k] == "missed"]
            assert missed, rows  # the older ones, with the reason
            reasons = journal_rows(home, f"SELECT error FROM runs WHERE kind='block' AND slot IN "
                                         f"({','.join('?' * len(missed))})", *missed)
            assert all("the state disk was full" in r[0] for r in reasons), reasons
            wait_for(lambda: frontmatter(alert)["status"] == "resolved", 30, "the alert to resolve")
            # Scheduling goes on without a restart: the next minute runs on time.
            after = driven_clock.before_next_minute().strftime("%Y-%m-%dT%H:%MZ")
            wait_for(lambda: journal_rows(home, "SELECT 1 FROM runs WHERE kind='block' AND slot=? AND status='ok' "
                                                "AND trigger='schedule'", after), 90, f"the slot {after} to run")
            assert status(home)["pid"] == proc.pid
        log = (home.root / "daemon.log").read_text()
        assert "Traceback" not in log, log[-3000:]
        assert len(cause_alerts(home, "disk-full:state")) == 1
    finally:
        subprocess.run(["umount", "-l", str(home.state)], capture_output=True)


def test_status_exits_3_when_the_daemon_is_not_running(initialised):
    proc = initialised.run("status")
    assert proc.returncode == 3 and "daemon: not running" in proc.stdout
    assert initialised.run("status", "--json").returncode == 3
    assert json.loads(initialised.run("status", "--json").stdout)["state"] == "not running"


def test_a_read_only_vault_is_reported_not_healthy_ok(initialised, ollama):
    home = initialised
    only_schedule(home, MINUTELY.replace('"* * * * *"', '"0 3 * * *"'))
    with daemon(home):
        assert status(home)["health"]["state"] == "ok"
        bound = subprocess.run(["mount", "--bind", str(home.vault), str(home.vault)], capture_output=True)
        if bound.returncode != 0:
            pytest.skip("cannot bind-mount here (needs root or CAP_SYS_ADMIN)")
        try:
            # Another test's mount at the same moment can make one remount fail (exit 32): try again.
            remount = ["mount", "-o", "remount,ro,bind", str(home.vault)]
            wait_for(lambda: subprocess.run(remount, capture_output=True).returncode == 0, 15, "the read-only remount")
            fired = home.run("fire", "strategist")
            assert fired.returncode == 1 and "Traceback" not in fired.stderr
            assert "Could not write Daily/" in fired.stderr and "read-only file system" in fired.stderr
            health = wait_for(lambda: (h := status(home)["health"])["state"] == "degraded" and h, 30,
                              "health to say the vault is not writable")
            assert any("vault" in p and "not writable" in p for p in health["problems"]), health
            assert "not writable" in home.run("status").stdout
        finally:
            subprocess.run(["umount", "-l", str(home.vault)], capture_output=True)
        wait_for(lambda: status(home)["health"]["state"] == "ok", 30, "health back to ok once writable")


def test_the_dashboard_says_as_of_when_and_a_stop_says_stopped(initialised):
    import signal

    home = initialised
    home.config.write_text(home.config.read_text() + FAKE_EMBEDDINGS)
    only_schedule(home, MINUTELY.replace('"* * * * *"', '"0 3 * * *"'))
    dashboard = home.vault / "Routine" / "Dashboard.md"
    with daemon(home) as proc:
        live = wait_for(lambda: "running since" in dashboard.read_text() and dashboard.read_text(), 30, "the dashboard")
        assert ": healthy (as of " in live, live
        proc.send_signal(signal.SIGTERM)
        try:
            assert proc.wait(timeout=scaled(60)) == 0
        except subprocess.TimeoutExpired:  # the log says where it hung (every thread's stack after 45 s)
            log = (home.root / "daemon.log").read_text()
            raise AssertionError("the daemon did not stop:\n" + log[-6000:]) from None
    text = dashboard.read_text()
    assert "running since" not in text and " stopped at " in text and "nothing runs until it starts again" in text
