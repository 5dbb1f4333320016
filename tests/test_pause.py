"""Pause and holidays: `routine pause/resume`, `holiday:` in routine.yaml; a held slot is journaled
`skipped: paused` (never missed, no alert), triggers wait too, status and the dashboard say so.
Injected clocks for the schedule logic; the daemon's own on_due in process; the real CLI."""

from __future__ import annotations

import json
import sqlite3
from datetime import date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from routine.config.model import StepSpec, WriteSpec
from routine.schedule import pause
from routine.schedule.cron import Cron
from routine.schedule.due import owed
from routine.schedule.model import Block
from test_daemon import MINUTELY

BERLIN = ZoneInfo("Europe/Berlin")
STEP = (StepSpec(agent="strategist", task="x", write=WriteSpec(note="Daily/x.md", section="A")),)
TRIGGERED = MINUTELY + """\
triggers:
  - "on": created
    path: "Inbox/*.md"
    agent: librarian
    task: File it.
    write: {note: "Daily/{{ today }}.md", section: "Inbox"}
"""


def block() -> Block:
    return Block(id="morning", file="daily.yaml", cron=Cron.parse("30 7 * * *"), timezone="Europe/Berlin",
                 steps=STEP, missed="catch-up", grace=timedelta(hours=2))


def at(day, hh, mm=0) -> datetime:
    return datetime(2026, 12, day, hh, mm, tzinfo=BERLIN)


def test_a_paused_slot_is_neither_run_nor_missed_and_runs_again_after_the_pause(slots, tmp_path):
    b = block()
    slots.seen_since(b.id, at(20, 12))
    pause.pause(tmp_path, [], until=at(23, 0), now=at(20, 12))
    held = pause.holder(tmp_path, (), b.id, BERLIN)
    during = owed(b, slots, at(22, 9, 0), BERLIN, paused=held)  # 21st missed, 22nd on catch-up: both held
    assert not during.run and not during.missed
    assert [s.at.day for s in during.paused] == [21, 22]
    assert all(s.reason.startswith("skipped: paused, the schedule is paused until") for s in during.paused)
    for s in during.paused:
        slots.set(b.id, s.key, "skipped", reason=s.reason)
    after = owed(b, slots, at(23, 7, 30), BERLIN, paused=pause.holder(tmp_path, (), b.id, BERLIN))
    assert [s.at.day for s in after.run] == [23] and not after.paused  # the pause ended at midnight


def test_a_holiday_holds_only_its_days_and_only_blocks_named_are_held(slots, tmp_path):
    b = block()
    slots.seen_since(b.id, at(23, 12))
    christmas = ((at(24, 0).date(), at(26, 0).date()),)
    held = owed(b, slots, at(24, 7, 31), BERLIN, paused=pause.holder(tmp_path, christmas, b.id, BERLIN))
    assert not held.run and "24 is a holiday" in held.paused[0].reason.replace("2026-12-", "")
    pause.pause(tmp_path, ["evening"], until=None, now=at(23, 12))
    other = owed(b, slots, at(27, 7, 31), BERLIN, paused=pause.holder(tmp_path, christmas, b.id, BERLIN))
    assert [s.at.day for s in other.run] == [27]  # another block's pause holds nothing here


def test_pause_status_and_resume_through_the_cli(initialised):
    home = initialised
    said = home.run("pause", "--until", "3d", check=True)
    assert "paused: everything until" in said.stdout
    status = json.loads(home.run("status", "--json").stdout)
    assert len(status["paused"]) == 1 and status["paused"][0].startswith("everything until")
    assert "paused: everything until" in home.run("status").stdout
    resumed = home.run("resume", check=True)
    assert "resumed everything" in resumed.stdout
    assert json.loads(home.run("status", "--json").stdout)["paused"] == []


def test_pause_refuses_a_typo_and_a_past_date_in_one_sentence(initialised):
    home = initialised
    typo = home.run("pause", "plannr")
    assert typo.returncode == 2 and "No block or trigger named 'plannr'" in typo.stderr
    assert "Traceback" not in typo.stderr
    past = home.run("pause", "--until", "2001-01-01")
    assert past.returncode == 2 and "in the past" in past.stderr
    nonsense = home.run("pause", "--until", "soon")
    assert nonsense.returncode == 2 and "neither a duration nor a date" in nonsense.stderr
    for form in ("90m", "2026-12-27", "2026-12-27T08:00", "tomorrow", "monday"):  # it says what it takes
        assert form in nonsense.stderr, nonsense.stderr
    assert not (home.state / "pause.json").exists()


def test_until_tomorrow_and_a_weekday_end_as_that_day_begins_in_local_time():
    monday_noon = datetime(2026, 12, 21, 12, 0, tzinfo=BERLIN)
    assert pause.until_from("tomorrow", monday_noon) == at(22, 0)
    assert pause.until_from("Tomorrow", datetime(2026, 12, 31, 23, 59, tzinfo=BERLIN)) == \
        datetime(2027, 1, 1, 0, 0, tzinfo=BERLIN)
    assert pause.until_from("wednesday", monday_noon) == at(23, 0)
    assert pause.until_from("sun", monday_noon) == at(27, 0)
    assert pause.until_from("monday", monday_noon) == at(28, 0)  # today's start is past: next week's
    spring = pause.until_from("tomorrow", datetime(2026, 3, 28, 12, 0, tzinfo=BERLIN))  # the night DST begins
    assert spring == datetime(2026, 3, 29, 0, 0, tzinfo=BERLIN) and spring.utcoffset() == timedelta(hours=1)
    santiago = ZoneInfo("America/Santiago")  # clocks jump from 00:00 to 01:00 on 2026-09-06: no midnight
    assert pause.until_from("tomorrow", datetime(2026, 9, 5, 12, 0, tzinfo=santiago)) == \
        datetime(2026, 9, 6, 1, 0, tzinfo=santiago)


def test_a_holiday_that_is_no_date_is_located_in_routine_yaml(initialised):
    home = initialised
    text = home.config.read_text()
    home.config.write_text(text + "\nholiday: [2026-12-24, 2026-02-30..2026-03-01]\n")
    result = home.run("schedule", "list")
    assert result.returncode == 2 and "holiday[1]" in result.stderr and "not a real date" in result.stderr
    home.config.write_text(text + "\nholiday:\n  - 2026-12-24\n  - 2026-13-40\n")  # YAML's own date reading
    result = home.run("schedule", "list")
    line = len(text.splitlines()) + 4
    assert result.returncode == 2 and f"routine.yaml:{line}:" in result.stderr and "real date" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.fixture
def daemon(initialised, monkeypatch):
    from routine.daemon.app import Daemon
    from test_daemon import only_schedule

    only_schedule(initialised, TRIGGERED)
    for key, value in initialised.env.items():
        if key.startswith(("ROUTINE_", "OLLAMA_", "HOME")):
            monkeypatch.setenv(key, value)
    clock = {"now": datetime(2026, 12, 1, 9, 0, tzinfo=timezone.utc)}
    d = Daemon(clock=lambda: clock["now"])
    d.clock_value = clock  # type: ignore[attr-defined]
    try:
        yield d
    finally:
        d.journal.close()


def _rows(home):
    db = sqlite3.connect(home.state / "journal.sqlite3")
    try:
        return db.execute("SELECT status, error FROM runs WHERE block='every-minute' ORDER BY id").fetchall()
    finally:
        db.close()


def test_the_daemon_journals_a_paused_slot_as_skipped_and_raises_no_alert(daemon, initialised):
    home = initialised
    daemon.slots.seen_since("every-minute", daemon.clock())
    home.run("pause", "every-minute", check=True)
    daemon.clock_value["now"] += timedelta(minutes=1)
    daemon.on_due("every-minute")
    rows = _rows(home)
    assert [r[0] for r in rows] == ["skipped"] and rows[0][1].startswith("skipped: paused, the block every-minute")
    assert "skipped: paused" in home.run("runs", "list", check=True).stdout  # told apart from a branch not taken
    assert daemon.queue.snapshot().queued == ()
    assert not list((home.vault / "Alerts").glob("*missed*"))
    home.run("resume", check=True)
    daemon.clock_value["now"] += timedelta(minutes=1)
    daemon.on_due("every-minute")
    assert len(daemon.queue.snapshot().queued) == 1  # the next slot runs


def test_triggers_wait_while_everything_is_paused_and_fire_once_at_resume(daemon, initialised):
    from routine.daemon.vault_events import VaultEvents
    from routine.watch.changes import Change

    home = initialised
    events = VaultEvents(daemon)
    daemon.vault_events = events  # the control socket's `held` op (sent by `routine resume`) reaches it
    trigger = daemon.live.schedules.triggers[0]
    home.run("pause", check=True)  # until resumed (the daemon's clock here is not the CLI's)
    events._fire(trigger, Change("created", "Inbox/idea.md"))
    events._fire(trigger, Change("modified", "Inbox/idea.md"))  # the same note again: still one held run
    assert daemon.queue.snapshot().queued == ()
    status = home.run("status").stdout
    assert (f"trigger {trigger.id}: 1 note(s) wait to fire when the pause ends (`routine resume` ends it): "
            "Inbox/idea.md") in status
    home.run("resume", check=True)
    events.release_held()  # what the `held` op does in a running daemon
    queued = daemon.queue.snapshot().queued
    assert len(queued) == 1 and "Inbox/idea.md" in queued[0]
    events.release_held()
    assert len(daemon.queue.snapshot().queued) == 1  # fired once, not again
    assert "wait to fire" not in home.run("status").stdout


def test_a_pause_with_an_end_releases_its_held_triggers_by_a_timer(daemon, initialised):
    """No polling: the end of the pause is a timer; the run it held fires then, once."""
    from routine.daemon.vault_events import VaultEvents
    from routine.watch.changes import Change
    from waits import wait_until

    events = VaultEvents(daemon)
    trigger = daemon.live.schedules.triggers[0]
    pause.pause(initialised.state, [], until=daemon.now_local() + timedelta(seconds=2), now=daemon.now_local())
    events._fire(trigger, Change("created", "Inbox/idea.md"))
    assert daemon.queue.snapshot().queued == ()
    assert events._timer is not None
    daemon.clock_value["now"] += timedelta(seconds=3)  # the daemon's clock is past the end when the timer rings
    wait_until(lambda: len(daemon.queue.snapshot().queued) == 1, 20, "the held trigger fired at the pause's end")


def test_a_hold_ends_when_its_pause_or_holiday_ends(tmp_path):
    christmas = ((date(2026, 12, 24), date(2026, 12, 26)),)
    assert pause.next_end(tmp_path, christmas, at(25, 9), BERLIN) == at(27, 0)
    assert pause.next_end(tmp_path, christmas, at(23, 9), BERLIN) is None


def test_the_dashboard_says_what_is_paused(tmp_path):
    from routine.daemon.dashboard import render
    from routine.daemon.status_record import DaemonState, DaemonStatus

    line = "everything until resumed (`routine resume` ends it)"  # each line says what ends it (a holiday's too)
    text = render(DaemonStatus(DaemonState.RUNNING, paused=(line,)), tmp_path, BERLIN)
    assert f"> [!warning] Paused\n> - {line}\n" in text


def test_pause_until_tomorrow_skips_the_rest_of_today_and_the_slots_after_midnight_run(daemon, initialised):
    """`routine pause --until tomorrow` (the CLI in process) on the daemon's clock: 22:59's slot is
    skipped with the reason; so is the rest of the evening; 00:00's runs."""
    home = initialised
    zone = ZoneInfo(daemon.zone_name())
    evening = datetime(2026, 12, 1, 22, 58, tzinfo=zone)
    daemon.clock_value["now"] = evening
    daemon.slots.seen_since("every-minute", evening)
    clock = home.root / "clock"  # the CLI reads the daemon's clock: here, the same moment
    clock.write_text(f"{(evening - datetime.now(timezone.utc)).total_seconds():.3f}\n")
    said = home.run("pause", "--until", "tomorrow", check=True, env_extra={"ROUTINE_TEST_CLOCK": str(clock)})
    assert "paused: everything until Wed 02 Dec 2026 00:00" in said.stdout
    daemon.clock_value["now"] = evening + timedelta(minutes=1)
    daemon.on_due("every-minute")
    why = "skipped: paused, the schedule is paused until Wed 02 Dec 2026 00:00 (`routine resume` ends it)"
    assert _rows(home) == [("skipped", why)]
    assert daemon.queue.snapshot().queued == ()
    daemon.clock_value["now"] = datetime(2026, 12, 2, 0, 0, 20, tzinfo=zone)
    daemon.on_due("every-minute")
    assert _rows(home) == [("skipped", why)] * 61  # 22:59, then 23:00 … 23:59
    midnight = datetime(2026, 12, 2, 0, 0, tzinfo=zone).astimezone(timezone.utc)
    assert daemon.queue.snapshot().queued == (f"every-minute @ {midnight:%Y-%m-%dT%H:%MZ}",)  # it runs
    assert not list((home.vault / "Alerts").glob("*missed*"))


@pytest.mark.daemon(budget=90)
def test_pause_and_resume_show_on_the_dashboard_at_once(initialised):
    """No run needs to happen first: the daemon is told, and writes the dashboard again."""
    from test_daemon import daemon as running
    from test_daemon import only_schedule, wait_for

    home = initialised
    only_schedule(home, TRIGGERED)
    dashboard = home.vault / "Routine" / "Dashboard.md"
    with running(home):
        wait_for(lambda: dashboard.exists() and "Paused" not in dashboard.read_text(), 60, "the first dashboard")
        home.run("pause", "--until", "3d", check=True)
        wait_for(lambda: "Paused" in dashboard.read_text(), 20, "the pause on the dashboard")
        home.run("resume", check=True)
        wait_for(lambda: "Paused" not in dashboard.read_text(), 20, "the resume on the dashboard")


def test_a_holiday_tomorrow_shows_in_status_schedule_next_and_models_plan(initialised):
    """Tomorrow will not run: `schedule next` marks its slots held, `models plan` plans no load for
    them and says so, `status` names the coming holiday."""
    home = initialised
    tomorrow = date.today() + timedelta(days=1)  # no `timezone:`: the machine's day, as routine's
    home.config.write_text(home.config.read_text() + f"\nholiday: [{tomorrow}]\n")
    fires = json.loads(home.run("schedule", "next", "40", "--json", check=True).stdout)
    on_holiday = [f for f in fires if datetime.fromisoformat(f["at"]).date() == tomorrow]
    assert on_holiday and all(f"{tomorrow} is a holiday" in (f["held"] or "") for f in on_holiday)
    assert all(f["held"] is None for f in fires if datetime.fromisoformat(f["at"]).date() < tomorrow)
    assert "held: " in home.run("schedule", "next", "40", check=True).stdout
    plan = json.loads(home.run("models", "plan", "--hours", "48", "--json", check=True).stdout)
    assert plan["held"] and all(datetime.fromisoformat(h["at"]).astimezone().date() == tomorrow for h in plan["held"])
    assert plan["held"] and "held: " in home.run("models", "plan", "--hours", "48", check=True).stdout
    status = home.run("status").stdout
    assert f"paused: everything tomorrow {tomorrow:%a %d %b}: a holiday" in status, status
    fires = json.loads(home.run("status", "--json").stdout)["next_fires"]
    assert any(f"{tomorrow} is a holiday" in (f["held"] or "") for f in fires) or all(
        datetime.fromisoformat(f["at"]).date() < tomorrow for f in fires)  # the next 8 may all be today


def test_a_holiday_slot_is_journaled_skipped_like_a_paused_one(initialised, monkeypatch):
    from routine.daemon.app import Daemon
    from test_daemon import only_schedule

    home = initialised
    only_schedule(home, TRIGGERED)
    home.config.write_text(home.config.read_text() + "\ntimezone: UTC\nholiday: [2026-12-01]\n")
    for key, value in home.env.items():
        if key.startswith(("ROUTINE_", "OLLAMA_", "HOME")):
            monkeypatch.setenv(key, value)
    clock = {"now": datetime(2026, 12, 1, 9, 0, tzinfo=timezone.utc)}
    d = Daemon(clock=lambda: clock["now"])
    try:
        d.slots.seen_since("every-minute", d.clock())
        clock["now"] += timedelta(minutes=1)
        d.on_due("every-minute")
        assert _rows(home) == [("skipped", "skipped: paused, 2026-12-01 is a holiday (`holiday:` in routine.yaml)")]
        assert d.queue.snapshot().queued == ()
        assert "skipped: paused" in home.run("runs", "list", check=True).stdout
    finally:
        d.journal.close()


def test_an_until_the_clock_cannot_hold_is_refused_before_anything_is_saved(initialised):
    home = initialised
    home.config.write_text(home.config.read_text() + "\ntimezone: America/Los_Angeles\n")
    for until in ("9999-12-31T23:59", "9999-12-31T23:59-08:00", "9000-01-01", "3000000d", "99999999999d"):
        done = home.run("pause", "--until", until)
        assert done.returncode == 2 and "further ahead than routine's clock can hold" in done.stderr, done.stderr
        assert "Traceback" not in done.stderr
    assert not (home.state / "pause.json").exists()
    assert "Traceback" not in home.run("status").stderr  # (exit 3: no daemon running)


def test_a_stored_pause_the_daemon_cannot_read_is_set_aside_with_one_alert(daemon, initialised):
    from routine.person.alerts import alert_set_aside

    home = initialised
    home.state.mkdir(parents=True, exist_ok=True)
    (home.state / "pause.json").write_text(json.dumps(
        {"holds": {"*": {"since": "2026-12-01T09:00:00+00:00", "until": "9999-12-31T23:59:00-08:00"}}}))
    daemon.slots.seen_since("every-minute", daemon.clock())
    daemon.clock_value["now"] += timedelta(minutes=1)
    daemon.on_due("every-minute")
    assert len(daemon.queue.snapshot().queued) == 1  # nothing is paused: the slot runs
    assert not (home.state / "pause.json").exists()
    [kept] = list(home.state.glob("pause.damaged-*.json"))
    alert_set_aside(daemon.live.config, daemon.clock(), home.state)
    alert_set_aside(daemon.live.config, daemon.clock(), home.state)  # the monitor's next round: no second
    alerts = list((home.vault / "Alerts").glob("*pause.json damaged*"))
    assert len(alerts) == 1 and "routine pause" in alerts[0].read_text() and kept.name in alerts[0].read_text()


def test_a_holiday_range_must_run_forwards_and_status_says_how_a_holiday_ends(initialised):
    home = initialised
    text = home.config.read_text()
    home.config.write_text(text + "\nholiday: [2999-12-31..1900-01-01]\n")
    done = home.run("schedule", "list")
    assert done.returncode == 2 and "routine.yaml:" in done.stderr and "holiday[0]" in done.stderr
    assert "runs backwards; write the earlier day first: 1900-01-01..2999-12-31" in done.stderr
    held = pause.in_force(home.state, ((at(24, 0).date(), at(26, 0).date()),), at(25, 9), BERLIN)
    assert held == ("everything today: a holiday (2026-12-24..2026-12-26), until Sun 27 Dec 2026 begins "
                    "(`holiday:` in routine.yaml; `routine resume` does not end it)",)


def _on_the_daemons_clock(home, daemon) -> dict[str, str]:
    """The CLI's clock at the daemon's injected moment (the CLI reads the daemon's clock file)."""
    clock = home.root / "clock"
    clock.write_text(f"{(daemon.clock() - datetime.now(timezone.utc)).total_seconds():.3f}\n")
    return {"ROUTINE_TEST_CLOCK": str(clock)}


def test_a_holiday_removed_from_routine_yaml_fires_what_it_held_and_status_agrees_meanwhile(daemon, initialised):
    """Issue 50 (B3): the daemon reloads routine.yaml without the holiday: nothing holds any longer, so
    the run it held fires then (not at some `routine resume`). While it holds, every status line says
    `routine resume` does not end it."""
    from routine.daemon.vault_events import VaultEvents
    from routine.watch.changes import Change

    home = initialised
    text = home.config.read_text()
    home.config.write_text(text + "\ntimezone: UTC\nholiday: [2026-12-01]\n")
    daemon.reload()
    events = daemon.vault_events = VaultEvents(daemon)
    events._fire(daemon.live.schedules.triggers[0], Change("created", "Inbox/Holiday.md"))
    assert daemon.queue.snapshot().queued == ()
    paused = [line for line in home.run("status", env_extra=_on_the_daemons_clock(home, daemon)).stdout.splitlines()
              if line.startswith("paused: ")]
    assert len(paused) == 2 and "a holiday" in paused[0], paused
    assert "wait to fire when the holiday ends (`routine resume` does not end it): Inbox/Holiday.md" in paused[1]
    assert all("`routine resume` does not end it" in line for line in paused), paused
    home.config.write_text(text + "\ntimezone: UTC\n")
    daemon.reload()  # what the config watcher does when routine.yaml is saved
    queued = daemon.queue.snapshot().queued
    assert len(queued) == 1 and "Inbox/Holiday.md" in queued[0]
    assert "paused: " not in home.run("status", env_extra=_on_the_daemons_clock(home, daemon)).stdout


def test_resume_says_the_runs_it_held_fire_now(daemon, initialised):
    """Issue 50 (F3): `routine resume` does not say a held run waits for the pause it just ended."""
    from routine.daemon.vault_events import VaultEvents
    from routine.watch.changes import Change

    home = initialised
    events = VaultEvents(daemon)
    trigger = daemon.live.schedules.triggers[0]
    home.run("pause", check=True)
    events._fire(trigger, Change("created", "Inbox/Receipt.md"))
    said = home.run("resume", check=True).stdout
    assert said.startswith("resumed everything\n")
    assert f"\ntrigger {trigger.id}: 1 note(s) are held no longer, they fire now: Inbox/Receipt.md" in said
    assert "wait to fire" not in said and "when the pause ends" not in said
