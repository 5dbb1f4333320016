"""Tables that keep what matters: under a narrow terminal, every table of the CLI keeps ids, times and
numbers whole, drops empty columns first, and keeps cut cells distinct from their neighbours."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone

import pytest

from tests.test_one_clock import _record

COMMANDS = [("status",), ("runs", "list"), ("schedule", "list"), ("schedule", "next"), ("models", "scores"),
            ("models", "plan"), ("notify", "list"), ("approve",), ("agent", "list"), ("project", "list"),
            ("remind", "--list"), ("chats", "list"), ("trials", "list")]
CUT_FIGURE = re.compile(r"\d[-:.]?…")  # `20261128-06…`, `2026-11-…`, `12…`: an id, time or number cut


def _runs(home) -> list[str]:
    now = datetime.now(timezone.utc)
    long_note = "Projects/" + "A very long project name " * 3 + "/Notes.md"
    return [_record(home, block=block, agent="research", kind="block", wrote={"path": long_note},
                    at=now - timedelta(days=days))
            for block, days in (("knowledge-digest", 0), ("knowledge-review", 2), ("knowledge-digest", 9))]


@pytest.mark.parametrize("columns", [60, 80])
def test_every_table_keeps_ids_times_and_numbers_whole(initialised, columns):
    home = initialised
    ids = _runs(home)
    for command in COMMANDS:
        done = home.run(*command, env_extra={"COLUMNS": str(columns)})
        out = done.stdout
        assert done.returncode in (0, 3) and "usage:" not in done.stderr, (command, done.stderr)  # 3: no daemon
        assert not CUT_FIGURE.search(out), (command, out)
        table_lines = [line for line in out.splitlines() if "  " in line.strip()]
        assert all(len(line) <= columns for line in table_lines), (command, out)
    plan = home.run("models", "plan", env_extra={"COLUMNS": str(columns)}).stdout
    assert "Model loads in the next" in plan and all(len(line) <= columns for line in plan.splitlines()), plan
    for command in (("status",), ("runs", "list")):
        out = home.run(*command, env_extra={"COLUMNS": str(columns)}).stdout
        assert all(run_id in out for run_id in ids), (command, out)
    # a block's name (what `routine fire` takes) and its cron are never cut
    blocks = json.loads(home.run("schedule", "list", "--json").stdout)["blocks"]
    rows = home.run("schedule", "list", env_extra={"COLUMNS": str(columns)}).stdout.splitlines()
    for block in blocks:
        assert any(line.split("  ")[0] == block["id"] and block["cron"] in line for line in rows), (block, rows)


def test_status_drops_empty_columns_first_and_keeps_blocks_apart(initialised):
    home = initialised
    now = datetime.now(timezone.utc)
    for block in ("knowledge-digest", "knowledge-review"):
        _record(home, block=block, agent="research", kind="block", at=now)
    out = home.run("status", env_extra={"COLUMNS": "80"}).stdout
    recent = out.split("recent runs:")[1].split("\n\n")[0].splitlines()
    assert "WROTE" not in recent[1] and "AGENT" in recent[1], out  # the empty column went, not the agent
    cells = [line.split()[2] for line in recent[2:] if line.strip()]
    assert len(set(cells)) == 2, out  # not `knowledge…` twice


def test_a_time_is_shortened_to_what_differs(capsys, monkeypatch):
    from routine.terminal.output import Clock, print_table, short_time

    clock = Clock.named("Europe/Berlin")
    now = datetime(2026, 11, 28, 12, 0, tzinfo=clock.zone)
    assert short_time(clock.show(now.replace(hour=6, minute=31)), now) == "06:31"
    assert short_time(clock.show(now - timedelta(days=2)), now) == "Thu 12:00"
    assert short_time(clock.show(now - timedelta(days=20)), now) == "2026-11-08 12:00"
    row = {"model": "qwen3:30b-a3b-instruct-2507-q4_K_M", "tok/s": "1299", "note": "x" * 50}
    monkeypatch.setenv("COLUMNS", "41")
    print_table([row], ["model", "tok/s", "note"])
    out = capsys.readouterr().out
    assert "1299" in out and "TOK/S" in out and all(len(line) <= 41 for line in out.splitlines()), out
    monkeypatch.setenv("COLUMNS", "40")  # no room for the figure and its heading: left out whole, never cut
    print_table([row], ["model", "tok/s", "note"])
    out = capsys.readouterr().out
    assert "…" not in out and "12" not in out and all(len(line) <= 40 for line in out.splitlines()), out


@pytest.mark.parametrize("columns", [60, 80])
def test_an_error_and_its_fix_wrap_to_the_terminal(home, columns):
    """Prose wraps: the sentence and its fix at the edge (no config yet) fit the terminal, words whole."""
    done = home.run("agent", "show", "planner", env_extra={"COLUMNS": str(columns)})
    lines = done.stderr.splitlines()
    assert done.returncode != 0 and len(lines) > 1 and "Fix:" in done.stderr, done.stderr
    # a line is no wider than the terminal, unless it is one word (a path is never split to fit)
    assert all(len(line) <= columns or " " not in line.strip() for line in lines), done.stderr
    assert str(home.config) in done.stderr and " ".join(line.strip() for line in lines).startswith("routine: ")


DATE = re.compile(r"\d{4}-\d{2}-\d{2}")  # a date where the day alone (today, this week) would do


@pytest.mark.parametrize("columns", [60, 100])
def test_the_rows_of_models_scores_stay_told_apart_and_figures_that_do_not_fit_are_left_out_whole(
        initialised, ollama, columns):
    home = initialised
    home.run("fire", "strategist", check=True)
    home.run("models", "try", "analyst", "--runs", "today", "--now", check=True)
    out = home.run("models", "scores", env_extra={"COLUMNS": str(columns)}).stdout
    lines = out.splitlines()
    table = lines[lines.index(next(line for line in lines if line.startswith("MODEL"))):]
    table = table[:table.index("")] if "" in table else table  # the table, not the prose after it
    heads = table[0].split()
    assert heads[:3] == ["MODEL", "AGENT", "AS"], out  # what tells the rows apart is never left out
    assert "…" not in table[0] and all(len(line) <= columns for line in table), out  # no cut header
    assert "PASSES" in heads, out  # a long model name is cut (told apart) before the scores go
    assert not any(re.search(r"\d…", line) for line in table), out  # no figure cut
    rows = table[1:]
    assert len(rows) >= 2 and len(set(rows)) == len(rows), out  # no two rows read the same
    listed = home.run("trials", "list", env_extra={"COLUMNS": str(columns)}).stdout
    assert "VERDICT" in listed.splitlines()[0], listed  # what the list is for is never left out


@pytest.mark.parametrize("columns", [80, 100])
def test_models_ps_keeps_the_run_that_loaded_a_model_whole(initialised, ollama, columns):
    home = initialised
    home.run("fire", "strategist", check=True)
    run_id = json.loads(home.run("runs", "list", "--json", check=True).stdout)[0]["id"]
    out = home.run("models", "ps", env_extra={"COLUMNS": str(columns)}).stdout
    assert run_id in out and "RUN" in out.splitlines()[0], out
    assert all(len(line) <= columns for line in out.splitlines()), out


def test_on_a_terminal_times_shorten_to_what_differs_and_empty_columns_go(initialised):
    home = initialised
    ids = _runs(home)  # the first started now
    listed = home.run("runs", "list", env_extra={"COLUMNS": "60"}).stdout.splitlines()
    today = next((line for line in listed[1:] if ids[0] in line), listed)
    assert not DATE.search(today) and re.search(r"\b\d{2}:\d{2}\b", today), listed  # `06:31` for today
    status = home.run("status", env_extra={"COLUMNS": "80"}).stdout
    fires = status.split("next fires:")[1].split("\n\n")[0].splitlines()
    assert "NOTE" not in fires[1], status  # no block here is held: the empty column goes
    assert not any(DATE.search(line) for line in fires[2:]), status  # all within a week: `Sun 07:30`
    home.run("remind", "Call Priya", "--at", "in 2 hours", check=True)
    reminders = home.run("remind", "--list", env_extra={"COLUMNS": "100"}).stdout.splitlines()
    assert "AT (" in reminders[0] and not DATE.search(reminders[1]), reminders


def test_a_projects_next_fire_is_on_routines_clock_not_raw_iso(initialised):
    home = initialised
    home.run("project", "new", "Acme Launch", "--goal", "Launch Acme v2 by March", check=True)
    listed = home.run("project", "list").stdout
    shown = home.run("project", "show", "Acme Launch").stdout
    raw = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}")
    assert not raw.search(listed) and "NEXT (" in listed.splitlines()[0], listed
    nxt = next(line for line in shown.splitlines() if line.startswith("Next:"))
    assert " at " in nxt and not raw.search(nxt) and re.search(r"\d{2}:\d{2} [A-Z+\-0-9]+", nxt), shown


@pytest.mark.parametrize("columns", [60, 120])
def test_the_block_an_after_block_runs_after_is_never_cut(initialised, columns):
    home = initialised
    (home.config.parent / "schedules" / "walk.yaml").write_text(
        "blocks:\n  build-review:\n    after: {block: deep-work-brief, step: builder}\n    steps:\n"
        "      - agent: critic\n        task: Review the build above.\n"
        "        inputs: [\"{{ steps.builder.output }}\"]\n"
        "        write: {note: \"Critiques/{{ today }} Build Review.md\"}\n")
    rows = home.run("schedule", "list", env_extra={"COLUMNS": str(columns)}).stdout.splitlines()
    line = next(line for line in rows if line.startswith("build-review"))
    assert "after deep-work-brief.builder" in line, rows


def test_a_proposed_schedule_changes_next_fires_name_a_year_that_is_not_this_one():
    from types import SimpleNamespace

    from routine.schedule.cron import Cron
    from routine.schedule.edit import _fires

    block = SimpleNamespace(timed=True, timezone="Europe/Berlin", cron=Cron.parse("0 3 1 1 *"))
    now = datetime(2026, 11, 28, 12, tzinfo=timezone.utc)
    said = _fires(SimpleNamespace(zone_name=lambda: "Europe/Berlin"), block, now)
    assert said.startswith("Fri 01 Jan 2027 03:00, Sat 01 Jan 2028 03:00"), said
    soon = SimpleNamespace(timed=True, timezone="Europe/Berlin", cron=Cron.parse("0 3 * * *"))
    assert _fires(SimpleNamespace(zone_name=lambda: "Europe/Berlin"), soon, now).startswith("Sun 29 Nov 03:00"), soon
