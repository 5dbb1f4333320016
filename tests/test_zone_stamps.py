"""Every stamp routine makes is on routine's clock (`timezone:`), not the machine's: the ids of runs
started through `routine mcp` and of a step skipped by a branch, conversation ids, a prompt trial's
proposal and `trials list`, a QA verdict's write, and the sentence refusing a second answer. The
zone is +05:30 all year, so a stamp in UTC (or the machine's zone) cannot pass."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

from test_handoffs import critic_says
from test_mcp_server import session_calls
from test_one_clock import ZONE, _in_zone
from test_projects import cli as cli  # noqa: F401  (the fixture)
from test_prompt_trials import planner_ran_twice_and_was_rewritten, reply, variant
from tests.test_cli_messages import _journal

TZ = ZoneInfo(ZONE)


def _local_now() -> datetime:
    return datetime.now(TZ).replace(tzinfo=None)


def _within(stamp: datetime, before: datetime, after: datetime) -> bool:
    """``stamp`` (local, to the minute or second) was made between ``before`` and ``after``."""
    return before.replace(second=0, microsecond=0) <= stamp <= after


def _id_time(run_id: str) -> datetime:
    return datetime.strptime(run_id.lstrip("c")[:15], "%Y%m%d-%H%M%S")


def test_a_step_skipped_by_a_branch_is_named_on_routines_clock(initialised, ollama):
    home = initialised
    _in_zone(home)
    ollama.reply_fn = critic_says("ok")
    before = _local_now()
    home.run("fire", "deep-work-brief", check=True)
    after = _local_now()
    runs = json.loads(home.run("runs", "list", "-n", "20", "--json", check=True).stdout)
    skipped = [r for r in runs if r["status"] == "skipped"]
    assert skipped and all(_within(_id_time(r["id"]), before, after) for r in runs), runs


def test_runs_through_routine_mcp_and_conversations_are_named_on_routines_clock(initialised):
    home = initialised
    _in_zone(home)
    before = _local_now()
    session_calls(home, "planner", [("waiting", {})])
    home.run("chat", "new", "strategist", "Zones", check=True)
    after = _local_now()
    runs = json.loads(home.run("runs", "list", "--json", check=True).stdout)
    mcp = [r["id"] for r in runs if r.get("trigger") == "mcp"]
    chats = json.loads(home.run("chats", "list", "--json", check=True).stdout)
    chat_ids = [c["id"] for c in (chats["chats"] if isinstance(chats, dict) else chats)]
    assert mcp and all(_within(_id_time(i), before, after) for i in mcp), (mcp, before, after)
    assert chat_ids and all(_within(_id_time(i), before, after) for i in chat_ids), (chat_ids, before, after)


def test_a_second_answer_is_refused_with_the_first_ones_time_on_routines_clock(initialised):
    from routine.journal.questions import Questions, QuestionState

    home = initialised
    _in_zone(home)
    answered = datetime(2026, 11, 28, 13, 53, tzinfo=timezone.utc)
    journal = _journal(home)
    try:
        questions = Questions(journal.db)
        qid = questions.add(run="r", step_run="s", block="asks", step=1, agent="strategist", question="Which?",
                            choices=(), deadline=answered + timedelta(hours=2), default=None, now=answered)
        questions.settle(qid, QuestionState.ANSWERED, "Hiring sync", "cli", answered)
    finally:
        journal.close()
    again = home.run("answer", qid, "Board prep")
    assert again.returncode == 1 and "at 2026-11-28 19:23 IST" in again.stderr, again.stderr


def test_a_prompt_trials_proposal_and_its_listing_are_on_routines_clock(initialised, ollama):
    home = initialised
    _in_zone(home)
    ollama.reply_fn = reply
    planner_ran_twice_and_was_rewritten(home)
    before = _local_now()
    home.run("agent", "try", "planner", "--variant", variant(home, "VARIANT-BETTER"), "--runs", "today", check=True)
    after = _local_now()
    proposal = next((home.vault / "Drafts").glob("*planner proposal for Planner*.md"))
    named = datetime.strptime(proposal.name[:15], "%Y-%m-%d %H%M")
    assert _within(named, before, after), (proposal.name, before, after)
    assert "+05:30" in proposal.read_text(), proposal.read_text()
    listed = home.run("trials", "list", check=True).stdout
    assert "ID (IST)" in listed.splitlines()[0], listed
    shown = next(line for line in listed.splitlines() if line.startswith("prompt"))
    assert f"{named:%Y-%m-%d %H:%M}" in shown, listed


def test_a_qa_verdict_is_written_on_routines_clock(cli, ollama):
    from test_artifacts import QA_PASS, REPORT, write
    from test_projects import PROJECT, QWEN, properties

    home = cli.home
    _in_zone(home)
    cli("project", "new", PROJECT)
    write(home, REPORT, '---\ntype: intellectual\nowner: "[[Research]]"\n---\n# Garden report\n\nThe shed.\n')
    ollama.script(QWEN, QA_PASS)
    cli("artifact", "qa", REPORT, "--json")
    assert str(properties(home, REPORT)["routine"]["at"]).endswith("+05:30"), properties(home, REPORT)
