"""What a person reads in the terminal: every time on routine's clock (its `timezone:`), tables that
fit the terminal, outcomes told apart, a block's notes listed once each."""

from __future__ import annotations

import json
from datetime import datetime
from zoneinfo import ZoneInfo

from tests.test_cli_messages import _journal

ZONE = "Asia/Kolkata"  # +05:30 all year: a time shown in UTC or the machine's zone cannot pass


def _in_zone(home) -> None:
    home.config.write_text(home.config.read_text() + f"\ntimezone: {ZONE}\n")


def _record(home, **fields) -> str:
    journal = _journal(home)
    try:
        return journal.record(**{"agent": "strategist", "trigger": "manual", "status": "ok", "error": None, **fields})
    finally:
        journal.close()


def test_runs_are_listed_and_shown_in_routines_zone_and_json_keeps_the_offset(initialised):
    home = initialised
    _in_zone(home)
    run_id = _record(home)
    stored = json.loads(home.run("runs", "list", "--json", check=True).stdout)[0]["started_at"]
    assert datetime.fromisoformat(stored).utcoffset() is not None  # ISO 8601 with its offset
    local = datetime.fromisoformat(stored).astimezone(ZoneInfo(ZONE))
    listing = home.run("runs", "list", check=True).stdout
    assert "STARTED (IST)" in listing.splitlines()[0]
    assert f"{local:%Y-%m-%d %H:%M:%S}" in listing
    shown = home.run("runs", "show", run_id, check=True).stdout
    assert f"{local:%Y-%m-%d %H:%M:%S} IST" in shown


def test_a_table_fits_the_terminal_and_json_keeps_the_full_text(initialised):
    home = initialised
    long_note = "Projects/" + "A very long project name that goes on " * 4 + "/Notes.md"
    _record(home, wrote={"path": long_note}, model="ollama/some-model-with-a-long-name:latest")
    listing = home.run("runs", "list", check=True, env_extra={"COLUMNS": "80"}).stdout
    lines = listing.splitlines()
    assert len(lines) == 2 and all(len(line) <= 80 for line in lines), lines
    assert "…" in lines[1] and lines[1].split()[0] in json.loads(home.run("runs", "list", "--json").stdout)[0]["id"]
    assert json.loads(home.run("runs", "list", "--json", env_extra={"COLUMNS": "80"}).stdout)[0]["wrote"] == {
        "path": long_note}


def test_a_skip_says_why_and_a_block_names_each_note_once(initialised):
    home = initialised
    _record(home, status="skipped", error="skipped: the condition does not hold", details={"skipped": "branch"})
    _record(home, agent=None, kind="block", block="evening", status="skipped", error="skipped: paused",
            details={"skipped": "paused"})
    block = _record(home, agent=None, kind="block", block="morning", wrote=["Daily/a.md", "Daily/b.md", "Daily/a.md"])
    listing = home.run("runs", "list", check=True).stdout
    assert "skipped: branch" in listing and "skipped: paused" in listing and "skipped!" not in listing
    assert "Daily/a.md, Daily/b.md" in listing and listing.count("Daily/a.md") == 1
    shown = home.run("runs", "show", block, check=True).stdout
    assert "Wrote:\n  Daily/a.md\n  Daily/b.md\n" in shown and "['Daily" not in shown
