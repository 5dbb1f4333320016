"""Note content that once hung routine: every parser of it is linear and bounded.

Each case runs in a real `routine` (or Python) process under a generous wall-clock limit, so a
return to the old quadratic parsers fails the test instead of hanging the suite."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from test_chat import (
    MODEL,
    chat_home,  # noqa: F401 (fixture)
    chat_note,
    chat_requests,
    fold_requests,
    small_window,
)

GUARD = 90  # seconds; the fixed code takes a few, the old code hours


def test_a_megabyte_task_line_with_an_unclosed_field_is_skipped_with_a_log_line(initialised, ollama):
    home = initialised
    home.run("project", "new", "Acme", "--goal", "Ship it", check=True)
    note = home.vault / "Projects" / "Acme" / "Acme.md"
    hostile = "- [ ] Summarise [assignee:: " + "[[x " * 250_000      # 1 MB, the field never closed
    blanks = "- [ ] Pad" + " " * 200_000 + "end"
    note.write_text(note.read_text() + "\n## Tasks\n- [ ] Draft the launch note [assignee:: [[Builder]]]\n"
                    + hostile + "\n" + blanks + "\n")
    proc = home.run("project", "show", "Acme", "--json", process=True, timeout=GUARD,
                    env_extra={"ROUTINE_LOG_LEVEL": "WARNING"})
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    tasks = [t["text"] for ts in json.loads(proc.stdout)["open_tasks"].values() for t in ts]
    assert "Draft the launch note" in tasks and not any(t.startswith("Summarise") for t in tasks), tasks
    assert "Projects/Acme/Acme.md line" in proc.stderr and "over routine's limit of 4000" in proc.stderr



def test_a_note_of_more_tasks_than_the_cap_is_read_the_rest_named_once_and_kept(initialised):
    """6,000 task lines pasted into a home note: `project show` answers in bounded time with the first
    5,000, says once which line the rest start at, and a later edit of a task keeps every line."""
    from routine.projects.tasks import MAX_TASKS_PER_NOTE

    home = initialised
    home.run("project", "new", "Acme", "--goal", "Ship it", check=True)
    note = home.vault / "Projects" / "Acme" / "Acme.md"
    filler = "".join(f"- [ ] Step {i}\n" for i in range(MAX_TASKS_PER_NOTE + 1000))
    note.write_text(note.read_text() + "- [ ] Draft the launch note [assignee:: [[Builder]]]\n" + filler
                    + "- [ ] Past the cap [assignee:: [[Research]]]\n")
    first_unread = [i for i, line in enumerate(note.read_text().splitlines()) if line.startswith("- [ ] ")][
        MAX_TASKS_PER_NOTE] + 1
    proc = home.run("project", "show", "Acme", "--json", process=True, timeout=GUARD,
                    env_extra={"ROUTINE_LOG_LEVEL": "WARNING"})
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    shown = json.loads(proc.stdout)["open_tasks"]
    assert [t["text"] for t in shown["Builder"]] == ["Draft the launch note"] and "Research" not in shown, shown.keys()
    said = (f"Projects/Acme/Acme.md holds more than {MAX_TASKS_PER_NOTE} tasks; those from line {first_unread} "
            "on are not read; split the note")
    assert proc.stderr.count("more than") == 1 and said in proc.stderr, proc.stderr[-2000:]

    before = note.read_text()
    home.run("project", "assign", "Acme", "research", "--task", "Draft the launch note", check=True)
    body = note.read_text().split("\n---\n", 1)[1]  # (its properties now list Research as a member)
    assert body == before.split("\n---\n", 1)[1].replace("[assignee:: [[Builder]]]", "[assignee:: [[Research]]]")

ANSWER = textwrap.dedent("""\
    import sys
    sys.path.insert(0, {tests!r})
    from test_chat import runner_for
    from routine.chat.notes import answer_note
    runner, journal, agents = runner_for(None)
    try:
        done = answer_note(runner, journal, agents, "Chats/Endless.md")
    finally:
        runner.close()
        journal.close()
    print("folded", done.folded)
    """)


def test_a_chat_note_of_ten_thousand_messages_is_answered(chat_home, ollama):  # noqa: F811
    import os

    small_window(chat_home, 4096, 512)
    ollama.reply_fn = lambda model, messages: (
        "- The person and the strategist talked about the kiln." if messages[0]["content"].startswith(
            "You keep the running summary") else None)
    turns = []
    for i in range(5000):
        turns.append(f"Message {i}: should the kiln fire on Thursday?\n")
        turns.append(f"> [!agent] Strategist · 09:00\n> Answer {i}: Thursday works for the kiln.\n")
    turns.append("So, Thursday or Friday?\n")
    chat_note(chat_home, "Chats/Endless.md", "\n".join(turns))
    env = {**os.environ, **chat_home.env, "OLLAMA_API_BASE": chat_home.env["OLLAMA_HOST"]}
    tests = os.path.dirname(__file__)
    proc = subprocess.run([sys.executable, "-c", ANSWER.format(tests=tests)], env=env, capture_output=True,
                          text=True, timeout=GUARD, cwd=chat_home.root)
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = chat_home.note("Chats/Endless.md")
    assert text.count("> [!agent]") == 5001 and text.rstrip().split("\n> [!agent]")[-1].startswith(" Strategist")
    assert "summary_covers:" in text and "> [!summary] Summary so far" in text
    asked = chat_requests(ollama)
    assert asked and "So, Thursday or Friday?" in asked[-1]["messages"][-1]["content"]
    # Folded as one answer can (a few requests, not one per window of 10,000 messages), and said so.
    assert 1 <= len(fold_requests(ollama)) <= 6, len(fold_requests(ollama))
    assert "the oldest 9600 are passed over" in proc.stderr, proc.stderr[-2000:]
    assert MODEL in asked[-1]["model"]


def test_a_note_of_blank_lines_that_mentions_an_assignee_does_not_stall_agent_show(initialised):
    home = initialised
    home.run("project", "new", "Acme", "--goal", "Ship it", check=True)
    (home.vault / "Inbox").mkdir(exist_ok=True)
    (home.vault / "Inbox" / "Pasted.md").write_text("\n" * 400_000 + "see [assignee:: later\n")
    (home.vault / "Projects" / "Acme" / "Review.md").write_text(
        "- [ ] Review the brief [assignee:: [[Builder]]]\n" + "- [ ] x [assignee:: [[y " * 100_000 + "\n")
    proc = home.run("agent", "show", "builder", "--json", process=True, timeout=GUARD)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert "Projects/Acme/Review.md" in proc.stdout


def test_a_heading_with_a_long_run_of_blanks_does_not_stall_a_run(initialised, ollama):
    from datetime import date

    home = initialised
    (home.vault / "Plans" / "OKRs.md").write_text("# OKRs\n- O1: Launch the beta by December\n")
    daily = home.vault / "Daily" / f"{date.today():%Y-%m-%d}.md"
    daily.parent.mkdir(exist_ok=True)
    daily.write_text("## Notes" + " " * 200_000 + "end\nPasted from a form.\n")
    proc = home.run("fire", "strategist", process=True, timeout=GUARD)
    assert "Traceback" not in proc.stderr and "Wrote" in proc.stdout, proc.stderr[-2000:]
    assert "Pasted from a form." in daily.read_text() and "## Alignment" in daily.read_text()
