"""A mistyped calendar path: a dry run writes nothing and sends nothing (the problem printed); a
real run raises one alert, and once the path is fixed the alert resolves on the next read and by
`routine doctor`, which checks every calendar and notify URL, one line each with its fix. Real
icalendar, real Apprise to a local receiver, the shipped schedule, the stand-in Ollama."""

from __future__ import annotations

import json

import pytest

from receiver import Receiver
from routine.vault.frontmatter import split_frontmatter
from test_calendar import ics


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.stop()


@pytest.fixture
def mistyped(initialised, receiver):
    """A person's config with a calendar at a mistyped path and their phone as a receiver."""
    home = initialised
    from datetime import date

    (home.config.parent / "work.ics").write_text(ics(date.today()))
    home.config.write_text(home.config.read_text() + "\ncalendars: [wrok.ics]\n"
                           f"notify: {{urls: ['json://127.0.0.1:{receiver.port}/hook']}}\n")
    return home


def alerts(home) -> list:
    folder = home.vault / "Alerts"
    return sorted(folder.glob("*.md")) if folder.is_dir() else []


def test_a_dry_run_with_a_mistyped_calendar_writes_and_sends_nothing_and_prints_the_problem(mistyped, receiver):
    home = mistyped
    done = home.run("fire", "morning-alignment", "--dry-run")
    assert done.returncode == 0, done.stderr
    assert "calendar wrok could not be read" in done.stderr and "wrok.ics" in done.stderr
    assert "The calendar wrok could not be read" in done.stdout  # in what the planner would be given
    assert "Traceback" not in done.stderr
    assert alerts(home) == []
    assert receiver.got == []
    assert json.loads(home.run("runs", "list", "--json", check=True).stdout) == []
    assert json.loads(home.run("notify", "list", "--json", check=True).stdout)["recent"] == []


def test_the_alert_resolves_when_the_path_is_fixed_found_by_doctor(mistyped, receiver, ollama):
    home = mistyped
    assert home.run("fire", "morning-alignment").returncode == 0
    [alert] = alerts(home)
    assert split_frontmatter(alert.read_text())[0]["status"] == "open"
    receiver.wait_for(lambda texts: any("calendar wrok unreadable" in t for t in texts), 10, "the alert message")

    sick = home.run("doctor")
    assert "FAIL calendar wrok:" in sick.stdout and "wrok.ics cannot be read" in sick.stdout
    assert "fix: check `calendars:` in" in sick.stdout
    assert "ok   notify json://127.0.0.1:" in sick.stdout
    assert split_frontmatter(alert.read_text())[0]["status"] == "open"  # its cause is still there

    home.config.write_text(home.config.read_text().replace("[wrok.ics]", "[work.ics]"))
    well = home.run("doctor")
    assert "ok   calendar work: work.ics reads" in well.stdout, well.stdout
    props = split_frontmatter(alert.read_text())[0]
    assert props["status"] == "resolved", alert.read_text()
    assert "that calendar is no longer in `calendars:`" in alert.read_text()
    receiver.wait_for(lambda texts: any("Resolved: calendar wrok unreadable" in t for t in texts), 10, "resolved")


def test_the_next_read_resolves_it_too(mistyped, ollama):
    home = mistyped
    home.run("fire", "morning-alignment")
    [alert] = alerts(home)
    home.config.write_text(home.config.read_text().replace("[wrok.ics]", "[work.ics]"))
    assert home.run("fire", "morning-alignment").returncode == 0
    assert split_frontmatter(alert.read_text())[0]["status"] == "resolved"


def test_doctor_names_a_notify_url_it_cannot_reach_or_parse(initialised):
    home = initialised
    home.config.write_text(home.config.read_text() + "\nnotify: {urls: ['json://127.0.0.1:9/hook', 'bogus://x']}\n")
    done = home.run("doctor")
    dead = "FAIL notify json://127.0.0.1:9: json://127.0.0.1:9 cannot be reached at 127.0.0.1:9"
    assert dead in done.stdout, done.stdout
    assert "FAIL notify bogus://x: bogus://x is not an Apprise URL this version knows" in done.stdout
    assert done.stdout.count("fix: correct `notify.urls`") == 2 and "Unparseable" not in done.stderr


def test_a_running_daemon_resolves_it_when_the_path_is_fixed(mistyped, ollama, monkeypatch):
    """No `doctor`, no step: the daemon reads the calendars again when `calendars:` changes."""
    from routine.daemon.app import Daemon
    from waits import wait_until

    home = mistyped
    home.run("fire", "morning-alignment")
    [alert] = alerts(home)
    for key, value in home.env.items():
        if key.startswith(("ROUTINE_", "OLLAMA_", "HOME")):
            monkeypatch.setenv(key, value)
    daemon = Daemon()
    try:
        home.config.write_text(home.config.read_text().replace("[wrok.ics]", "[work.ics]"))
        daemon.reload()  # what the daemon does when routine.yaml changes (its config watcher, SIGHUP)
        wait_until(lambda: split_frontmatter(alert.read_text())[0]["status"] == "resolved", 20, "the alert resolved")
    finally:
        daemon.journal.close()
