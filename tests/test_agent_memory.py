"""Agent memory over two simulated weeks: each agent's memory note holds bounded, dated, sourced
entries learned from its own days (what the person kept or rewrote, what they told it in chat,
what a review found); a week-one entry reaches a week-two prompt; an entry the person deleted
stays deleted; no entry carries text from a note its agent may not read. In process, on an
injected clock, through the stand-in Ollama."""

from __future__ import annotations

import json
import re
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest

from routine.vault.agent_memory import MAX_ENTRIES

TZ = ZoneInfo("Europe/Berlin")
MONDAY = date(2026, 11, 23)
BUILD = """\
blocks:
  build:
    cron: "0 10 * * mon-fri"
    steps:
      - agent: builder
        task: Propose the first implementation step for today's deep-work task.
        write: {note: "Builds/{{ today }} Build.md"}
      - agent: critic
        task: "Review the build above. End with `VERDICT: ok` or `VERDICT: needs review`."
        inputs: ["{{ steps.builder.output }}"]
        write: {note: "Critiques/{{ today }} Build Review.md"}
"""
SECRET_POINT = "the rollback plan relies on the staging database"  # the Critic's words, in Critiques/


def reply(model, messages):
    asked = "\n".join(str(m.get("content") or "") for m in messages)
    if "Review the build above" in asked:
        return f"- {SECRET_POINT[0].upper()}{SECRET_POINT[1:]}.\n- Name who runs it.\n\nVERDICT: needs review"
    if "Propose the first implementation step" in asked:
        return "Add a dry-run flag to the import script and run it on last week's export."
    if "time-blocked plan" in asked:
        return "**Time blocks**\n- [ ] 09:00–10:00 Answer supplier emails\n- [ ] 10:00–12:00 Draft the pilot spec"
    return None


@pytest.fixture
def env(initialised, ollama, monkeypatch):
    home = initialised
    for key, value in home.env.items():
        if key.startswith(("ROUTINE_", "OLLAMA")):
            monkeypatch.setenv(key, value)
    (home.config.parent / "schedules" / "build.yaml").write_text(BUILD)
    ollama.reply_fn = reply
    return home


def rewrite_plan(vault, day: date) -> None:
    note = vault / "Daily" / f"{day.isoformat()}.md"
    text = note.read_text()
    start = text.index("%% routine:begin plan")
    body_start = text.index("\n", start) + 1
    end = text.index("%% routine:end plan")
    note.write_text(text[:body_start] + "- [ ] 10:30–12:00 Draft the pilot spec (my way)\n" + text[end:])


def memory_entries(vault, name: str) -> list[str]:
    note = vault / "Agents" / name / "Memory.md"
    return [line for line in note.read_text().splitlines() if re.match(r"- \d{4}-\d{2}-\d{2} · ", line)] \
        if note.exists() else []


def test_two_weeks_of_agent_memory(env, ollama):
    from routine.chat.sessions import ask
    from routine.config.loader import load_agents, load_config
    from routine.flows.step_setup import STEP_SETUP
    from routine.journal import Journal
    from routine.runner.block import run_block
    from routine.runner.step import Runner, StepRequest
    from routine.schedule.loader import load_schedules

    config = load_config(None)
    agents, _ = load_agents(config)
    block = load_schedules(config, agents).blocks["build"]
    now = [datetime.combine(MONDAY, time(8), TZ)]
    journal = Journal()
    runner = Runner(config, journal, clock=lambda: now[0], setup=STEP_SETUP)
    week_two_prompts: list[str] = []
    deleted_key = None
    try:
        for offset in range(12):  # Monday of week one to Friday of week two
            day = MONDAY + timedelta(days=offset)
            if day.weekday() >= 5:
                continue
            now[0] = datetime.combine(day, time(8, 30), TZ)
            seen = len(ollama.requests)
            assert runner.run_step(StepRequest.for_agent(config, agents["planner"], None)).error is None
            if offset >= 7:
                week_two_prompts += [json.dumps(r["messages"]) for r in ollama.requests[seen:] if r.get("messages")]
            if day.weekday() in (0, 2):  # the person rewrites Monday's and Wednesday's plans
                rewrite_plan(config.vault, day)
            if offset == 1:
                now[0] = datetime.combine(day, time(12), TZ)
                told = ask(runner, journal, agents["planner"], "Remember: I never take meetings before 10:00.")
                assert told.answer.endswith("Noted for next time: Remember: I never take meetings before 10:00.")
                assert "never take meetings" in (config.vault / "Agents" / "Planner" / "Memory.md").read_text()
                asked = ask(runner, journal, agents["planner"], "What is on today?")  # not a thing to remember
                assert "Noted" not in asked.answer
            now[0] = datetime.combine(day, time(10), TZ)
            run_block(runner, block, agents, trigger="schedule")
            if offset == 4:  # Friday of week one: the person deletes one of the Planner's entries
                note = config.vault / "Agents" / "Planner" / "Memory.md"
                entries = memory_entries(config.vault, "Planner")
                victim = next(e for e in entries if "kept" in e or "rewrote" in e)
                deleted_key = victim.rsplit("^", 1)[1]
                note.write_text(note.read_text().replace(victim + "\n", "") + "- Deep work goes before lunch.\n")
    finally:
        runner.close()
        journal.close()

    planner = memory_entries(config.vault, "Planner")
    assert 0 < len(planner) <= MAX_ENTRIES
    assert all(re.search(r"\^[a-z]+-\S+$", e) for e in planner)  # each sourced by its evidence
    told = [e for e in planner if "never take meetings before 10:00" in e]
    assert len(told) == 1 and told[0].endswith("^chat-1")  # learned once, from the chat, dated as said
    assert not any("What is on today" in e for e in planner)
    assert any("rewrote your Plan, keeping" in e and "— [[Daily/2026-11-23]] ^keep-" in e for e in planner), planner
    assert any("kept your Plan as you wrote it. — [[Daily/2026-11-24]] ^keep-" in e for e in planner), planner
    assert deleted_key and not any(e.endswith("^" + deleted_key) for e in planner)  # stays deleted
    text = (config.vault / "Agents" / "Planner" / "Memory.md").read_text()
    assert text.count("What routine has learned") == 1 and len(text.splitlines()) < 12 + MAX_ENTRIES
    # A week-one entry reached the Planner's prompts in week two.
    assert week_two_prompts and all("never take meetings before 10:00" in p for p in week_two_prompts)
    assert "- Deep work goes before lunch." in text  # the person's own line, kept and given
    assert all("Deep work goes before lunch" in p for p in week_two_prompts)
    # The Builder learns the Critic's verdict, not the Critic's words: Critiques/ is outside its reads.
    builder = memory_entries(config.vault, "Builder")
    assert any("A review by the Critic of your [[Builds/" in e and "verdict needs review" in e for e in builder)
    assert not any("staging database" in e for e in builder)
    for note in (config.vault / "Agents").rglob("Memory.md"):  # no agent's memory but the Critic's own
        assert note.parent.name == "Critic" or "staging database" not in note.read_text()
