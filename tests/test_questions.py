"""Agents that ask and wait (issue 45): a block's step ends with a fenced `ask` block; the block run
waits in the journal (holding no model), survives a restart, and goes on from that step with the
person's answer (`routine answer`, the question note's `answer:` property) or, at the deadline,
with its default (or ends `skipped: no answer`). Through a real daemon and the stand-in Ollama,
which counts the models resident at once."""

from __future__ import annotations

import json
import re
import textwrap
from datetime import timedelta

import pytest

from test_daemon import daemon, only_schedule, status, wait_for

SCHEDULE = textwrap.dedent("""\
    blocks:
      asks:
        cron: "0 3 * * *"
        steps:
          - agent: research
            task: Gather the notes for the day.
            write: {note: "Research/{{ today }} Brief.md"}
          - agent: strategist
            task: "Pick the day's focus. ANSWER=[{{ answer }}]"
            write: {note: "Daily/{{ today }}.md", section: "Alignment"}
          - agent: builder
            task: "Build for the focus {{ steps.strategist.output }} ANSWER=[{{ answer }}]"
            write: {note: "Builds/{{ today }} Builder.md"}
      asks-free:
        cron: "0 4 * * *"
        steps:
          - agent: strategist
            task: "Free question. ANSWER=[{{ answer }}]"
            write: {note: "Daily/{{ today }}.md", section: "Free"}
    """)

ASK = textwrap.dedent("""\
    I need one fact first.

    ```ask
    question: Which meeting matters more today?
    choices: [Board prep, Hiring sync]
    deadline: 2h
    default: Board prep
    ```
    """)

ASK_FREE = "```ask\nquestion: What should the day be about?\ndeadline: 1h\n```\n"


class Team:
    """The stand-in's replies: the strategist asks until it is given an answer, then answers with it;
    every prompt kept, by the agent's task."""

    def __init__(self, ollama):
        self.prompts: list[str] = []
        ollama.reply_fn = self

    def __call__(self, model, messages):
        text = "\n".join(m["content"] if isinstance(m["content"], str) else str(m["content"]) for m in messages)
        self.prompts.append(text)
        answer = re.search(r"ANSWER=\[(.*?)\]", text)
        if answer is None:
            return "- the notes of the day are gathered"
        if "Pick the day's focus" in text or "Free question" in text:
            if not answer.group(1):
                return ASK if "Pick" in text else ASK_FREE
            return f"focus on the {answer.group(1).lower()} today"
        return f"- a build for the {answer.group(1).lower()}"


def block_run(home, block="asks") -> dict:
    runs = json.loads(home.run("runs", "list", "-n", "50", "--json", check=True).stdout)
    return next(r for r in runs if r["kind"] == "block" and r["block"] == block)


def question_id(home) -> str:
    waiting = status(home)["waiting"]
    assert len(waiting) == 1, waiting
    return waiting[0]["id"]


def test_a_step_that_asks_waits_across_a_restart_and_resumes_with_the_answer(initialised, ollama):
    home = initialised
    only_schedule(home, SCHEDULE)
    team = Team(ollama)
    with daemon(home):
        fired = home.run("fire", "asks")
        assert fired.returncode == 0, fired.stderr
        assert "routine answer q-" in fired.stdout
        assert block_run(home)["status"] == "waiting"
        qid = question_id(home)
        assert not any(m.get("in_use") for m in status(home)["resident_models"] or [])  # it holds no model
        note = home.note(f"Inbox/Question {qid}.md")
        assert "Which meeting matters more today?" in note and "Hiring sync" in note and "routine:" in note
        wait_for(lambda: "Waiting on you" in (d := home.note("Routine/Dashboard.md")) and qid in d, 30,
                 "the dashboard to show the question")
        asked_prompts = len(team.prompts)
        steps = json.loads(home.run("runs", "list", "-n", "50", "--json", check=True).stdout)
        assert sorted((r["agent"], r["status"]) for r in steps if r["kind"] == "step") == [
            ("research", "ok"), ("strategist", "waiting")]  # the step after the question has not run

    with daemon(home):  # a restart: the question still waits, its block run too
        assert question_id(home) == qid and block_run(home)["status"] == "waiting"
        said = home.run("status", check=True).stdout
        assert f"waiting on you: {qid}" in said
        assert f"waiting: {qid}" in home.run("runs", "list", check=True).stdout
        answered = home.run("answer", qid, "hiring", "sync")
        assert answered.returncode == 0, answered.stderr
        assert "answered" in answered.stdout
        wait_for(lambda: block_run(home)["status"] == "ok", 60, "the block to go on with the answer")
        again = home.run("answer", qid, "Board prep")
        assert again.returncode == 1 and "answered already" in again.stderr
        forged = home.run("answer", "q-000000", "Board prep")
        assert forged.returncode == 1 and "No question 'q-000000'" in forged.stderr

    resumed = team.prompts[asked_prompts:]
    assert not any("Gather the notes" in p for p in resumed)  # the step before the question is not run again
    strategist = next(p for p in resumed if "Pick the day's focus" in p)
    assert "ANSWER=[Hiring sync]" in strategist  # {{ answer }} in the author's template
    assert "The person answered: Hiring sync" in strategist  # and as a piece of context
    assert "focus on the hiring sync today" in home.note(next((home.vault / "Daily").glob("*.md")).relative_to(
        home.vault).as_posix())
    assert any("ANSWER=[Hiring sync]" in p and "Build for the focus" in p for p in resumed)
    steps = json.loads(home.run("runs", "list", "-n", "50", "--json", check=True).stdout)
    assert sorted(r["status"] for r in steps if r["kind"] == "step") == ["answered", "ok", "ok", "proposal"]
    assert "Hiring sync" in home.note(f"Inbox/Question {qid}.md")
    assert ollama.peak_resident <= 2  # three models in the block, never more than two loaded


def test_an_answer_in_the_question_note_resumes_the_block(initialised, ollama):
    home = initialised
    only_schedule(home, SCHEDULE)
    Team(ollama)
    fired = home.run("fire", "asks")  # no daemon: the block waits in the journal all the same
    assert fired.returncode == 0, fired.stderr
    assert block_run(home)["status"] == "waiting"
    with daemon(home):
        qid = question_id(home)
        rel = f"Inbox/Question {qid}.md"
        path = home.vault / rel
        path.write_text(path.read_text().replace('answer: ""', "answer: Board prep").replace("answer: ''",
                                                                                              "answer: Board prep"))
        wait_for(lambda: block_run(home)["status"] == "ok", 60, "the answer in the note to resume the block")
        assert "state: answered" in home.note(rel) and "answered_by: note" in home.note(rel)
        assert status(home)["waiting"] == []
    assert ollama.peak_resident <= 2


def test_an_unanswered_question_takes_its_default_at_the_deadline_or_is_skipped(initialised, ollama, driven_clock):
    home = initialised
    only_schedule(home, SCHEDULE)
    team = Team(ollama)
    with daemon(home):
        assert home.run("fire", "asks").returncode == 0
        assert home.run("fire", "asks-free").returncode == 0
        assert {w["block"] for w in status(home)["waiting"]} == {"asks", "asks-free"}
        driven_clock.move_to(driven_clock.now() + timedelta(hours=2, minutes=1))
        wait_for(lambda: block_run(home)["status"] == "ok", 60, "the default to be taken at the deadline")
        free = wait_for(lambda: (r := block_run(home, "asks-free"))["status"] == "skipped" and r, 30,
                        "the free question's run to be skipped")
        assert "no answer" in free["error"]
        listed = home.run("runs", "list", check=True).stdout
        assert "skipped: no answer" in listed
    assert any("ANSWER=[Board prep]" in p and "Pick the day's focus" in p for p in team.prompts)
    late = home.run("answer", free["id"] and _question_of(home, "asks-free"), "anything")
    assert late.returncode == 1 and "deadline passed" in late.stderr


def _question_of(home, block: str) -> str:
    import sqlite3

    db = sqlite3.connect(home.state / "journal.sqlite3")
    try:
        return db.execute("SELECT id FROM questions WHERE block=?", (block,)).fetchone()[0]
    finally:
        db.close()


def test_an_answer_given_while_no_daemon_runs_is_taken_up_when_it_starts(initialised, ollama):
    home = initialised
    only_schedule(home, SCHEDULE)
    team = Team(ollama)
    assert home.run("fire", "asks").returncode == 0  # no daemon: asked in this process
    assert home.run("fire", "asks-free").returncode == 0
    waiting = {w["block"]: w["id"] for w in json.loads(home.run("status", "--json").stdout)["waiting"]}
    said = home.run("answer", waiting["asks"], "2")  # a choice by its number
    assert said.returncode == 0 and "once the daemon runs" in said.stdout
    assert home.run("answer", waiting["asks-free"], "{{ 7 * 7 }} and {% for x in range(3) %}x{% endfor %}",
                    check=True)  # a free answer: data, never a template
    assert block_run(home)["status"] == "waiting"
    with daemon(home):
        wait_for(lambda: block_run(home)["status"] == "ok" and block_run(home, "asks-free")["status"] == "ok", 60,
                 "the daemon to resume the answered blocks at start")
    assert "focus on the hiring sync today" in next((home.vault / "Daily").glob("*.md")).read_text()
    free = next(p for p in team.prompts if "Free question" in p and "ANSWER=[{" in p)
    assert "ANSWER=[{{ 7 * 7 }} and {% for x in range(3) %}x{% endfor %}]" in free and "ANSWER=[49" not in free


# --- the ask block as read from a reply (no daemon) ---------------------------------------------------

def _ask(text: str):
    from datetime import datetime, timezone

    from routine.runner.asking import ask_in

    return ask_in(text, datetime(2026, 11, 28, 9, 0, tzinfo=timezone.utc))


def test_an_ask_block_is_read_with_its_deadline_as_written():
    ask = _ask("```ask\nquestion: Send the draft?\nchoices: [yes, no]\ndeadline: 15:00\ndefault: No\n```")
    assert ask.choices == ("yes", "no") and ask.default == "no"  # the choice as the agent spelled it
    assert ask.deadline.hour == 15 and ask.deadline.day == 28  # an unquoted 15:00 (YAML's 900) is the time
    assert _ask("```ask\nquestion: Q?\ndeadline: 08:30\n```").deadline.day == 29  # past today: tomorrow
    assert _ask("no question here") is None


@pytest.mark.parametrize("block, said", [
    ("question: Q?\nchoices: [only one]", "2 to 4"),
    ("question: Q?\nchoices: [a, b]\ndefault: c", "none of its choices"),
    ("choices: [a, b]", "no `question`"),
    ("question: Q?\ndeadline: 30d", "not within"),
    ("question: Q?\ndeadline: soon", "neither a duration"),
    ("a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
     "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
     "e: [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nquestion: Q?", "aliases"),
])
def test_a_malformed_ask_block_is_one_sentence(block, said):
    from routine.runner.asking import BadAsk

    with pytest.raises(BadAsk, match=re.escape(said)):
        _ask(f"```ask\n{block}\n```")


def test_the_ask_person_tool_asks_as_the_ask_block_does_and_the_question_is_pushed(initialised, ollama, monkeypatch):
    from receiver import Receiver

    home = initialised
    only_schedule(home, SCHEDULE)
    phone = Receiver()
    home.config.write_text(home.config.read_text() + f"\nnotify: {{urls: [ntfy://127.0.0.1:{phone.port}/routine]}}\n")
    agent = home.vault / "Agents" / "Strategist.md"
    agent.write_text(agent.read_text().replace("tools: [search_notes, read_note, now, date_math]",
                                               "tools: [search_notes, read_note, now, date_math, ask_person]"))
    calls = {"n": 0}

    def reply(model, messages):
        text = "\n".join(str(m.get("content")) for m in messages)
        if "ANSWER=[]" in text and not any(m.get("role") == "tool" for m in messages):
            calls["n"] += 1
            return {"tool_calls": [{"name": "ask_person", "arguments": {
                "question": "Ship the draft today?", "choices": "yes | no", "deadline": "3h", "default": "no"}}]}
        return "no further model turn is wanted after a question"
    ollama.reply_fn = reply
    fired = home.run("fire", "asks-free")  # no daemon: asked in this process
    assert fired.returncode == 0, fired.stderr
    assert calls["n"] == 1 and block_run(home, "asks-free")["status"] == "waiting"
    waiting = json.loads(home.run("answer", "--json").stdout)
    assert [(w["question"], w["choices"], w["default"]) for w in waiting] == [
        ("Ship the draft today?", ["yes", "no"], "no")]
    refused = home.run("answer", waiting[0]["id"], "maybe")
    assert refused.returncode == 1 and "none of the choices" in refused.stderr
    try:
        phone.wait_for(lambda texts: any("Ship the draft today?" in t for t in texts), 10, "the question's push")
        pushed = phone.texts()
    finally:
        phone.stop()
    assert any(f"routine answer {waiting[0]['id']}" in t and "yes / no" in t for t in pushed)

    from routine.config.loader import load_config
    from routine.flows.questions import answer_question

    for key, value in home.env.items():
        monkeypatch.setenv(key, value)
    forged = answer_question(load_config(str(home.config)), waiting[0]["id"], "yes", "note", note="Inbox/Other.md")
    assert not forged.accepted and "No question" in forged.message  # an answer in a note not the question's own
    assert block_run(home, "asks-free")["status"] == "waiting"


def test_an_answer_to_a_block_changed_since_is_said_not_applied(initialised, ollama):
    home = initialised
    only_schedule(home, SCHEDULE)
    Team(ollama)
    assert home.run("fire", "asks").returncode == 0
    qid = json.loads(home.run("answer", "--json").stdout)[0]["id"]
    assert home.run("answer", qid, "Board prep").returncode == 0
    changed = SCHEDULE.replace('agent: strategist\n        task: "Pick', 'agent: planner\n        task: "Pick')
    assert changed != SCHEDULE
    only_schedule(home, changed)  # the step that asked is now another agent's
    with daemon(home):
        run = wait_for(lambda: (r := block_run(home))["status"] == "failed" and r, 60, "the block run to fail")
    assert "changed or was removed" in run["error"]
    assert any("could not go on" in p.name for p in (home.vault / "Alerts").glob("*.md"))


@pytest.mark.daemon(budget=120)
def test_a_question_answered_by_its_phone_button_resumes_the_block_once(initialised, ollama):
    """The question's choices are the phone's buttons (ntfy); the daemon is restarted while it waits;
    the button's answer goes through the one path `routine answer` takes, the block goes on from the
    step that asked with at most two models resident, and the same button pressed again changes nothing."""
    from fake_ntfy import FakeNtfy
    from test_answers_daemon import answers, with_channels

    home = initialised
    only_schedule(home, SCHEDULE)
    team = Team(ollama)
    ntfy = FakeNtfy(keepalive=5.0)
    try:
        with_channels(home, ntfy)
        with daemon(home):
            wait_for(lambda: ntfy.subscribers > 0, 30, "the daemon to read the reply topic")
            assert home.run("fire", "asks").returncode == 0
            qid = question_id(home)
            pushed = wait_for(lambda: next((m for m in ntfy.on("phone") if m.get("actions")
                                            and "Which meeting" in (m.get("title") or "") + m["message"]), None),
                              30, "the question's message with its buttons")
            assert [a["label"] for a in pushed["actions"]] == ["Board prep", "Hiring sync"]
        with daemon(home):  # a restart while the question waits; then the person presses a button
            wait_for(lambda: ntfy.subscribers > 0, 30, "the daemon to read the reply topic again")
            assert question_id(home) == qid
            ntfy.press(pushed, "Hiring sync")
            wait_for(lambda: block_run(home)["status"] == "ok", 60, "the block to go on with the phone's answer")
            ntfy.press(pushed, "Board prep")  # pressed again: the ticket is spent
            wait_for(lambda: answers(home)["counts"].get("refused replayed") == 1, 30, "the replay refused")
    finally:
        ntfy.stop()
    strategist = [p for p in team.prompts if "Pick the day's focus" in p and "ANSWER=[Hiring sync]" in p]
    assert strategist and "The person answered: Hiring sync" in strategist[0]
    assert not any("Gather the notes" in p for p in team.prompts[team.prompts.index(strategist[0]):])
    assert "phone:ntfy" in home.note(f"Inbox/Question {qid}.md")
    assert not any("ANSWER=[Board prep]" in p for p in team.prompts)  # the second press changed nothing
    assert ollama.peak_resident <= 2
