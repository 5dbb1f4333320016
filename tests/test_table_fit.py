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
    monkeypatch.setenv("COLUMNS", "40")
    print_table([{"model": "qwen3:30b-a3b-instruct-2507-q4_K_M", "tok/s": "1299", "note": "x" * 50}],
                ["model", "tok/s", "note"])
    out = capsys.readouterr().out
    assert "1299" in out and all(len(line) <= 40 for line in out.splitlines()), out


@pytest.mark.parametrize("columns", [60, 80])
def test_an_error_and_its_fix_wrap_to_the_terminal(home, columns):
    """Prose wraps: the sentence and its fix at the edge (no config yet) fit the terminal, words whole."""
    done = home.run("agent", "show", "planner", env_extra={"COLUMNS": str(columns)})
    lines = done.stderr.splitlines()
    assert done.returncode != 0 and len(lines) > 1 and "Fix:" in done.stderr, done.stderr
    assert all(len(line) <= columns for line in lines), done.stderr
    assert " ".join(line.strip() for line in lines).startswith("routine: "), done.stderr
