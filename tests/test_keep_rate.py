"""Keep-rate (issue 25): how much of each generated section the person kept after 48 hours,
per agent and per block, in the journal, in Team Health and on the dashboard; a section the
person rewrote told apart from one that went through approval."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

from routine.journal import Journal
from routine.journal.keep import AGE, Ending, KeepRate, KeepRates, Via, Written, is_due
from routine.journal.report import team_report
from routine.vault.keep import kept_share
from test_approval import archived, daily, set_property
from test_daemon import daemon, journal_rows, only_schedule, wait_for

GENERAL = "mistral:7b-instruct-q4_K_M"  # the `general` alias: the Strategist's and the Planner's model
# Four lines of equal length: the person who deletes one keeps 75% of it.
FOUR = ["- Keep the battery report on track today", "- Call the supplier about delayed parts.",
        "- Review the draft budget with the team.", "- Close open questions on the test plan."]
T0 = datetime(2026, 11, 20, 7, 30, tzinfo=timezone.utc)


def test_the_share_kept_counts_what_of_the_written_text_is_still_there():
    written = "\n".join(FOUR) + "\n"
    assert {len(line) for line in FOUR} == {len(FOUR[0])}
    assert kept_share(written, written) == 1.0
    assert kept_share(written, "\n".join(FOUR[:3])) == 0.75  # one of four equal lines deleted
    assert kept_share(written, None) == 0.0                    # the section is gone
    assert kept_share(written, "") == 0.0
    assert kept_share(written, written + "- My own addition, not ours to count.\n") == 1.0
    # A word changed in one line costs that word, not the line: between 3/4 and all of it.
    one_word = written.replace("supplier", "vendor")
    expected = 1 - (len("supplier") / sum(len(line) for line in FOUR))
    assert abs(kept_share(written, one_word) - expected) < 0.02
    # Trailing spaces and blank lines an editor adds are no edit.
    assert kept_share(written, "\n\n" + written.replace("\n", "  \n")) == 1.0


def _journal(tmp_path: Path) -> Journal:
    return Journal(tmp_path / "journal.sqlite3")


def _section_note(vault: Path, text: str) -> None:
    (vault / "Daily").mkdir(parents=True, exist_ok=True)
    (vault / "Daily" / "d.md").write_text(f"## Plan\n%% routine:begin plan agent=planner sha=x %%\n{text}"
                                          "%% routine:end plan %%\n")


def test_a_section_is_measured_once_when_it_is_48_hours_old(tmp_path):
    assert not is_due(T0, T0 + AGE - timedelta(seconds=1)) and is_due(T0, T0 + AGE)
    vault, journal = tmp_path / "vault", _journal(tmp_path)
    written = "\n".join(FOUR) + "\n"
    _section_note(vault, written)
    keep = KeepRates(journal.db)
    keep.record(Written("planner", "Daily/d.md", "Plan", written, T0, block="morning"), None)
    _section_note(vault, "\n".join(FOUR[1:]) + "\n")  # the person deletes the first line
    assert keep.measure_due(vault, T0 + timedelta(hours=47)) == 0
    assert keep.rates(T0 - timedelta(days=1)) == []
    assert keep.measure_due(vault, T0 + timedelta(hours=48)) == 1
    _section_note(vault, "")  # what happens later does not count: measured once
    assert keep.measure_due(vault, T0 + timedelta(hours=72)) == 0
    by_agent, by_block = keep.rates(T0 - timedelta(days=1))
    assert (by_agent.by, by_agent.name, by_agent.sections, by_agent.kept, by_agent.edited) == \
        ("agent", "planner", 1, 0.75, 1)
    assert (by_block.by, by_block.name, by_block.kept) == ("block", "morning", 0.75)
    journal.close()


def test_a_section_written_again_is_measured_against_its_own_text_up_to_then(tmp_path):
    vault, journal = tmp_path / "vault", _journal(tmp_path)
    keep = KeepRates(journal.db)
    first, second = "\n".join(FOUR) + "\n", "- Something else entirely for the afternoon.\n"
    keep.record(Written("planner", "Daily/d.md", "Plan", first, T0), None)
    # Six hours later a newer run replaces it; the person had deleted half of it by then.
    keep.record(Written("planner", "Daily/d.md", "Plan", second, T0 + timedelta(hours=6)), "\n".join(FOUR[:2]))
    # The next day the person deletes the whole note: only the second write answers for that.
    keep.record(Written("planner", "Daily/d.md", "Plan", second, T0 + timedelta(hours=30)), None)
    keep.measure_due(vault, T0 + timedelta(hours=80))
    rows = sorted(keep.sections(T0 - timedelta(days=1)), key=lambda r: r["id"])
    assert [(r["kept"], r["ending"]) for r in rows] == [
        (0.5, Ending.SUPERSEDED.value), (0.0, Ending.DELETED.value), (0.0, Ending.DELETED.value)]
    assert rows[0]["measured_at"].startswith("2026-11-20T13:30")
    journal.close()


def _scripted_day(home, ollama) -> None:
    """The Strategist writes Alignment, the Planner writes Plan: four equal lines each."""
    ollama.script(GENERAL, ["\n".join(FOUR), "\n".join(FOUR)])
    assert "Wrote Alignment" in home.run("fire", "strategist", check=True).stdout
    assert "Wrote Plan" in home.run("fire", "planner", check=True).stdout


def _delete_line(home, key: str, line: str) -> None:
    note = daily(home)
    text = note.read_text()
    section = re.search(rf"%% routine:begin {key}[^\n]*\n(.*?)%% routine:end {key} %%", text, re.S)
    assert section and line in section[1]
    note.write_text(text[:section.start(1)] + section[1].replace(line + "\n", "") + text[section.end(1):])


def _later(home, hours: float) -> dict:
    """The test clock (as the daemon's): ``hours`` ahead of the system clock."""
    clock = home.root / "clock"
    clock.write_text(str(hours * 3600))
    return {"ROUTINE_TEST_CLOCK": str(clock)}


def _keep(home, hours: float = 0) -> dict:
    return json.loads(home.run("runs", "keep", "--json", check=True, env_extra=_later(home, hours)).stdout)


def test_keep_rate_of_a_section_the_person_edited_and_one_left_alone(initialised, ollama):
    home = initialised
    _scripted_day(home, ollama)
    _delete_line(home, "alignment", FOUR[1])  # the person keeps 3 of the Strategist's 4 lines
    waiting = _keep(home)
    assert waiting["measured_now"] == 0 and waiting["rates"] == []
    assert sorted((s["agent"], s["section"], s["kept"]) for s in waiting["sections"]) == \
        [("planner", "Plan", None), ("strategist", "Alignment", None)]
    assert "waiting (48 h)" in home.run("runs", "keep", check=True).stdout

    later = _keep(home, 49)
    assert later["measured_now"] == 2
    agents = {r["name"]: r for r in later["rates"] if r["by"] == "agent"}
    assert abs(agents["strategist"]["kept"] - 0.75) < 0.03 and agents["strategist"]["edited"] == 1
    assert agents["planner"]["kept"] == 1.0 and agents["planner"]["untouched"] == 1
    assert [r["name"] for r in later["rates"] if r["by"] == "block"] == ["fire"]
    table = home.run("runs", "keep", check=True, env_extra=_later(home, 50)).stdout
    assert re.search(r"agent\s+strategist\s+1\s+75%", table) and re.search(r"agent\s+planner\s+1\s+100%", table)

    # Team Health (the Watcher's `journal: 7d`) says the same.
    journal = Journal(home.state / "journal.sqlite3")
    try:
        report = team_report(journal.db, datetime.now(timezone.utc) + timedelta(hours=50), 7)
    finally:
        journal.close()
    assert "agent strategist: kept 75% of 1 sections it wrote (0 left alone, 1 rewritten by the person in part " \
           "or whole, 0 deleted)" in report
    assert "agent planner: kept 100% of 1 sections it wrote (1 left alone" in report


def test_team_health_tells_a_rewritten_section_from_one_that_went_through_approval(initialised, ollama):
    home = initialised
    _scripted_day(home, ollama)
    note = daily(home)
    mine = "My own alignment: the battery report first, nothing else."
    text = note.read_text()
    note.write_text(re.sub(r"(%% routine:begin alignment[^\n]*\n)(.*?)(%% routine:end alignment %%)",
                           lambda m: m[1] + mine + "\n" + m[3], text, flags=re.S))
    ollama.script(GENERAL, ["\n".join(FOUR)])
    assert "was kept" in home.run("fire", "strategist", check=True).stdout  # a proposal: the person rewrote it
    proposal = next((home.vault / "Drafts").glob("*.md"))
    set_property(proposal, "approved", "true")
    assert "Applied the approved Alignment" in home.run("approve", proposal.name[:-3], check=True).stdout
    assert archived(home)

    later = _keep(home, 49)
    rows = sorted((s["agent"], s["via"], s["ending"], s["kept"]) for s in later["sections"])
    assert rows[:2] == [("planner", Via.RUN.value, Ending.KEPT.value, 1.0),
                        ("strategist", Via.APPROVAL.value, Ending.KEPT.value, 1.0)]
    # The run's own text, rewritten by the person: only "the battery report" of it is left.
    assert rows[2][:3] == ("strategist", Via.RUN.value, Ending.SUPERSEDED.value)
    left = len(" the battery report ") / sum(len(line) for line in FOUR)
    assert abs(rows[2][3] - left) < 0.03
    journal = Journal(home.state / "journal.sqlite3")
    try:
        report = team_report(journal.db, datetime.now(timezone.utc) + timedelta(hours=50), 7)
    finally:
        journal.close()
    assert "1 runs wrote a proposal instead of the note (1: the person had rewritten the section)" in report
    assert (f"agent strategist: kept {rows[2][3]:.0%} of 1 sections it wrote (0 left alone, 1 rewritten by the "
            "person in part or whole, 0 deleted); 1 went through approval, kept 100%") in report


def test_the_dashboard_shows_the_keep_rate_per_agent_and_block(tmp_path):
    from routine.daemon.dashboard import render
    from routine.daemon.status_record import DaemonState, DaemonStatus

    rates = (KeepRate("agent", "strategist", 4, 0.75, 2, 1, 1, 1, 1.0), KeepRate("block", "morning", 4, 0.75,
                                                                                  2, 1, 1, 1, 1.0))
    snap = DaemonStatus(DaemonState.RUNNING, keep_rates=rates)
    assert DaemonStatus.from_json(json.loads(json.dumps(snap.to_json()))).keep_rates == rates
    shown = render(snap, tmp_path, timezone.utc)
    assert "## Keep-rate" in shown
    assert "| agent | strategist | 4 | 75% | 2 | 1 | 1 | 1 (kept 100%) |" in shown
    assert "| block | morning | 4 | 75% |" in shown
    assert "No section measured yet" in render(DaemonStatus(DaemonState.RUNNING), tmp_path, timezone.utc)


def test_the_running_daemon_measures_at_48_hours_and_the_dashboard_shows_it(initialised, ollama, driven_clock):
    home = initialised
    only_schedule(home, "triggers: []\n")
    dashboard = home.vault / "Routine" / "Dashboard.md"
    with daemon(home):
        _scripted_day(home, ollama)
        _delete_line(home, "alignment", FOUR[2])
        wait_for(lambda: dashboard.is_file() and "## Keep-rate" in dashboard.read_text(), 20, "the dashboard")
        assert "No section measured yet" in dashboard.read_text()
        driven_clock.offset += 49 * 3600  # two days later, by the daemon's clock
        driven_clock._write()
        wait_for(lambda: "| agent | strategist | 1 | 75% | 0 | 1 | 0 | - |" in dashboard.read_text(), 30,
                 "the keep-rate on the dashboard")
        assert "| agent | planner | 1 | 100% | 1 | 0 | 0 | - |" in dashboard.read_text()
    ended = journal_rows(home, "SELECT agent, ending FROM written_sections ORDER BY agent")
    assert ended == [("planner", "kept"), ("strategist", "edited")]
