"""Follow-through counted: a scripted week of Plans and the person's ticks gives exact figures,
in Team Health (the Watcher's `journal:` input) as in the summary the Planner is given."""

from __future__ import annotations

import json
from datetime import date, timedelta

from routine.projects.follow_through import follow_through, read_days

MON = date(2026, 11, 23)


def plan(*lines: str, fenced: bool = True) -> str:
    body = "\n".join(lines)
    if fenced:  # as the Planner's step writes it: a generated section the person then ticks in
        return (f"## Plan\n%% routine:begin plan agent=planner sha=0123456789ab %%\n**Time blocks**\n{body}\n"
                f"%% routine:end plan %%\n\n## Evening Log\n- tired\n")
    return f"## Plan\n**Time blocks**\n{body}\n\n## Notes\n- [ ] not a plan item: buy milk\n"


WEEK = {
    0: plan("- [x] 09:00–10:00 Answer supplier emails — [[Projects/Orin Pilot]]",
            "- [ ] 10:00–12:00 Draft section 2 of the pilot spec — [[Projects/Orin Pilot]]",
            "- [x] 14:00–15:00 Review Priya's test plan"),
    1: plan("- [ ] 10:00–12:00 Draft section 2 of the pilot spec — [[Projects/Orin Pilot]]",
            "- [x] 13:00–14:00 Call Tomás about the invoice",
            "- [-] 15:00–16:00 Review the OKR draft"),
    2: plan("- [x] 09:00–09:30 Answer supplier emails",
            "- [ ] 10:00–11:30 Draft pilot spec section 2 — [[Projects/Orin Pilot]]",
            "- [ ] 14:00–15:00 Draft the newsletter intro", fenced=False),
    3: plan("- [x] 10:00–12:00 Draft section 2 of the pilot spec (carried over)",
            "- [ ] 14:00–15:00 Draft the newsletter intro",
            "- [X] 15:00–15:30 Answer supplier emails"),
    # Friday: no note at all (a day off): left out, not counted as nothing done.
}


def write_week(vault, monday: date = MON) -> None:
    for offset, text in WEEK.items():
        day = monday + timedelta(days=offset)
        (vault / "Daily").mkdir(parents=True, exist_ok=True)
        (vault / "Daily" / f"{day.isoformat()}.md").write_text(f"---\ntags: [daily]\n---\n{text}")


def test_a_scripted_week_of_plans_and_ticks_gives_exact_figures(tmp_path):
    write_week(tmp_path)
    friday = date(2026, 11, 27)
    days = read_days(tmp_path, "Daily", friday, 7)
    assert [(d.day.day, d.planned, d.done) for d in days] == [(23, 3, 2), (24, 2, 1), (25, 3, 1), (26, 3, 2)]
    week = follow_through(days, friday)
    assert (week.planned, week.done) == (11, 6)
    carried = {c.text: (c.first.day, c.last.day, c.done) for c in week.carried}
    assert carried == {  # reworded from day to day as a model rewrites a plan, still one item
        "Draft section 2 of the pilot spec": (23, 26, True),  # carried three times, then done
        "Draft the newsletter intro": (25, 26, False),
    }  # the supplier emails, done each day they were planned, were never carried
    assert week.slipping()[0] == ("draft", 5, 6)
    text = week.summary()
    assert "6 of 11 planned blocks done (55%) — Mon 2/3, Tue 1/2, Wed 1/3, Thu 2/3." in text, text
    assert "Kinds that slip (not done of planned): draft 5 of 6." in text
    assert "Carry-overs older than" not in text  # the newsletter intro is 2 days old


def test_a_carry_over_older_than_three_days_is_named_with_its_age(tmp_path):
    write_week(tmp_path)
    later = date(2026, 11, 30)  # the next Monday: the newsletter intro, first planned Wednesday, is 5 days old
    week = follow_through(read_days(tmp_path, "Daily", later, 8), later)
    assert week.open_carries()[0].text == "Draft the newsletter intro"
    assert "Carry-overs older than 3 days: Draft the newsletter intro (5 days, since Wed 25 Nov)." in week.summary()


def test_team_health_is_given_the_weeks_follow_through(initialised, ollama):
    home = initialised
    write_week(home.vault, date.today() - timedelta(days=3))  # the four days up to today
    home.run("fire", "team-health", check=True)
    asked = json.dumps([r["messages"] for r in ollama.requests if r.get("messages")])
    assert "**Follow-through**: 6 of 11 planned blocks done (55%)" in asked
    assert "Kinds that slip (not done of planned): draft 5 of 6." in asked


def test_the_planners_time_blocks_stay_tickable_and_their_ticks_are_counted(initialised, ollama):
    """Routine quotes the checkboxes it writes (its copies are no tasks), but a plan's time blocks
    are the person's to tick: they stay checkboxes, and follow-through counts the ticks."""
    home = initialised
    ollama.reply_fn = lambda model, messages: (
        "**Time blocks**\n- [ ] 09:00–10:00 Answer supplier emails\n- [ ] 10:00–12:00 Draft the pilot spec\n"
        "**Carried over**\n- [ ] Fix the flaky export")
    home.run("fire", "planner", check=True)
    note = next((home.vault / "Daily").glob("*.md"))
    text = note.read_text()
    assert "- [ ] 09:00–10:00 Answer supplier emails" in text and "- [ ] 10:00–12:00 Draft" in text
    assert "- \\[ ] Fix the flaky export" in text  # not a time block: quoted, as routine's checkboxes are
    note.write_text(text.replace("- [ ] 09:00–10:00", "- [x] 09:00–10:00"))  # the person ticks one
    today = date.today()
    week = follow_through(read_days(home.vault, "Daily", today, 1), today)
    assert (week.planned, week.done) == (2, 1)


def test_the_morning_planner_is_given_the_follow_through_and_a_bad_span_is_located(initialised):
    home = initialised
    write_week(home.vault, date.today() - timedelta(days=3))
    dry = home.run("fire", "morning-alignment", "--dry-run", check=True).stdout
    planner = dry[dry.index("planner"):]
    assert "the person's follow-through, the last 7 days" in planner
    assert "**Follow-through**: 6 of 11 planned blocks done (55%)" in planner
    daily = home.config.parent / "schedules" / "daily.yaml"
    daily.write_text(daily.read_text().replace('"calendar: today", "follow-through: 7d"',
                                               '"calendar: today", "follow-through: a week"', 1))
    said = home.run("schedule", "validate")
    text = said.stdout + said.stderr
    assert said.returncode != 0 and "`follow-through: a week`" in text and "daily.yaml:" in text, text
    assert "write `follow-through: 7d`" in text
