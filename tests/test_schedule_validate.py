"""`routine schedule validate|list|next` on real schedule files, run as a subprocess."""

from __future__ import annotations

import json
import textwrap
from datetime import date, timedelta

BAD = textwrap.dedent("""\
    blocks:
      morning:
        cron: "30 25 * * *"
        steps:
          - agent: strategist
            task: "Align {{ todday }}"
            write: {note: "Daily/{{ today }}.md", section: "Alignment"}
          - agent: wizard
            task: Do magic.
      evening:
        cron: "0 20 * * *"
        colour: blue
        steps:
          - agent: planner
            task: Plan.
            write: {note: "Plans/OKRs.md", section: "Plan"}
""")


def test_validate_prints_all_five_mistakes_with_file_line_and_path(initialised):
    home = initialised
    bad = home.config.parent / "schedules" / "mine.yaml"
    bad.write_text(BAD)
    proc = home.run("schedule", "validate")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    err = proc.stderr
    assert "Traceback" not in err
    expected = [
        "mine.yaml:3: At 'blocks.morning.cron': bad cron: hour 25 is out of range 0-23",
        "mine.yaml:6: At 'blocks.morning.steps[0].task': unknown template variable todday",
        "mine.yaml:8: At 'blocks.morning.steps[1].agent': unknown agent 'wizard'",
        "mine.yaml:12: At 'blocks.evening': unknown key 'colour'",
        "mine.yaml:16: At 'blocks.evening.steps[0].write': 'Plans/OKRs.md' is outside agent planner's writes scope",
    ]
    # The schema problem (colour) hides nothing else in that block's file? Every one is printed.
    for line in expected:
        assert line in err, f"missing: {line}\n---\n{err}"


def test_shipped_schedules_are_valid_and_listed(initialised):
    home = initialised
    proc = home.run("schedule", "validate", check=True)
    assert proc.stdout.startswith("ok:")
    data = json.loads(home.run("schedule", "list", "--json", check=True).stdout)
    ids = {b["id"] for b in data["blocks"]}
    assert {"morning-alignment", "knowledge-sync", "dream-seeding", "okr-review"} <= ids
    morning = next(b for b in data["blocks"] if b["id"] == "morning-alignment")
    assert [s["agent"] for s in morning["steps"]] == ["strategist", "planner"]
    assert data["triggers"] and data["triggers"][0]["on"] == "created"


def test_next_shows_local_times_and_dst_shift(initialised):
    home = initialised
    (home.config.parent / "schedules" / "night.yaml").write_text(textwrap.dedent("""\
        timezone: Europe/Berlin
        blocks:
          night-owl:
            cron: "30 2 * * *"
            steps:
              - agent: librarian
                task: Tidy.
                write: {note: "Daily/{{ today }}.md", section: "Night"}
        """))
    for other in (home.config.parent / "schedules").glob("*.yaml"):
        if other.name != "night.yaml":
            other.unlink()  # else 400 fires of every block end within weeks, before any DST change
    rows = json.loads(home.run("schedule", "next", "400", "--json", check=True).stdout)
    assert {r["block"] for r in rows} == {"night-owl"} and len(rows) == 400  # 400 days: a spring change
    def last_sunday_of(month: int, r) -> bool:
        day = date.fromisoformat(r["at"][:10])
        return day.month == month and day.weekday() == 6 and (day + timedelta(days=7)).month != month

    moved = [r for r in rows if r["at"][11:16] == "03:00"]  # 02:30 does not exist on a spring-forward night
    assert moved and all(last_sunday_of(3, r) and "does not exist" in r["dst_shift"] for r in moved)
    repeated = [r for r in rows if r["dst_shift"] and r not in moved]  # 02:30 happens twice in autumn: once
    assert repeated and all(last_sunday_of(10, r) and "repeated hour" in r["dst_shift"] for r in repeated)
    assert all(r["at"][11:16] == "02:30" for r in rows if r not in moved)


def test_two_blocks_writing_one_section_at_one_minute_is_an_error(initialised):
    home = initialised
    (home.config.parent / "schedules" / "clash.yaml").write_text(textwrap.dedent("""\
        blocks:
          copy-of-alignment:
            cron: "30 7 * * mon"
            steps:
              - agent: strategist
                write: {note: "Daily/{{ today }}.md", section: "Alignment"}
        """))
    proc = home.run("schedule", "validate")
    assert proc.returncode == 2
    assert (
        "same minute as block 'morning-alignment'" in proc.stderr
        or "same minute as block 'copy-of-alignment'" in proc.stderr
    )
