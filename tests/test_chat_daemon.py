"""Conversations where the person has them: a chat note answered by the running daemon,
`routine ask` streamed through the daemon, `routine chat` in a pseudo-terminal."""

from __future__ import annotations

import os
import re
import select
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from test_chat import MODEL, chat_requests
from test_daemon import all_handled, daemon, journal_rows, only_schedule, settled_as, wait_for
from waits import scaled

# The person's saves of chat notes also set off this trigger: counting its runs counts the saves
# the daemon saw, and routine's own appends must not be among them.
CHAT_TRIGGER = textwrap.dedent("""\
    triggers:
      - "on": modified
        path: "Chats/*.md"
        agent: librarian
        task: "Note that {{ path }} changed."
        debounce: 1s
        write: {note: "Inbox/chat changes.md", section: "Chat changes"}
    """)


@pytest.fixture
def talk(initialised):
    home = initialised
    home.config.write_text(home.config.read_text() + "\nmemory: {embedding_model: 'ollama:nomic-embed-text'}\n"
                           "chat: {quiet: 1s}\n")
    return home


def answers(text: str) -> int:
    return text.count("> [!agent] Strategist")


def saves_seen(home) -> list:
    return [r for r in journal_rows(home, "SELECT status FROM runs WHERE trigger LIKE 'trigger:Chats/%'")
            if r[0] != "running"]


def test_a_chat_note_gets_one_answer_per_message_from_the_running_daemon(talk, ollama):
    home = talk
    only_schedule(home, CHAT_TRIGGER)
    created = home.run("chat", "new", "strategist", "Pricing", check=True)
    assert "Chats/Pricing.md" in created.stdout
    note = home.vault / "Chats" / "Pricing.md"
    with daemon(home) as proc:
        note.write_text(note.read_text() + "Which key result matters most for pricing?\n")
        text = wait_for(lambda: answers(t := note.read_text()) == 1 and t, 40, "the first answer")
        # Marked (a callout naming the agent), linked (its sources), after the question.
        assert re.search(r"^> \[!agent\] Strategist · \d\d:\d\d$", text, re.MULTILINE)
        assert "*Sources:* [[Plans/OKRs]]" in text
        assert text.index("Which key result matters most for pricing?") < text.index("> [!agent]")

        note.write_text(text + "\nAnd what should the first price be?\n")
        text = wait_for(lambda: answers(t := note.read_text()) == 2 and t, 40, "the second answer")
        second = chat_requests(ollama)[-1]["messages"]
        assert [m["role"] for m in second[1:]] == ["user", "assistant", "user"]
        assert second[1]["content"] == "Which key result matters most for pricing?"
        assert "Which key result matters most for pricing?" in second[2]["content"]  # the first answer
        assert second[3]["content"].endswith("And what should the first price be?")

        # The person rewrites their first message: no answer to that save, but the next turn sees it.
        wait_for(lambda: len(saves_seen(home)) == 2, 40, "the trigger runs of the two questions")
        edited = text.replace("matters most for pricing?", "matters most for packaging?")
        note.write_text(edited)
        wait_for(lambda: len(saves_seen(home)) == 3, 40, "the daemon to see the edit")
        assert answers(note.read_text()) == 2
        note.write_text(edited + "\nThird: which one first?\n")
        text = wait_for(lambda: answers(t := note.read_text()) == 3 and t, 40, "the third answer")
        third = chat_requests(ollama)[-1]["messages"]
        assert third[1]["content"] == "Which key result matters most for packaging?"
        assert not any("for pricing?" in m["content"] for m in third)

        # Three answers, four saves seen; routine's own three appends set nothing off.
        wait_for(lambda: len(saves_seen(home)) == 4, 40, "the trigger run of the third question")
        # The third answer's append settles as routine's own write (not a change), and nothing is left to do.
        wait_for(lambda: settled_as(home, "Chats/Pricing.md")[-1:] == ["own write"], 40, "the append to settle")
        wait_for(lambda: all_handled(home), 40, "the daemon to be idle")
        assert len(saves_seen(home)) == 4 and answers(note.read_text()) == 3
        assert len(chat_requests(ollama)) == 3

        # A chat note naming no agent gets no answer, and the person is told where they look.
        stray = home.vault / "Chats" / "Nobody.md"
        stray.write_text("---\nchat: nobody\n---\nHello?\n")
        alerts = wait_for(lambda: list((home.vault / "Alerts").glob("*chat not answered*.md")), 40, "the alert")
        assert "`nobody`, and there is no such agent" in alerts[0].read_text()
        assert stray.read_text().endswith("Hello?\n")
    assert proc.returncode == 0
    rows = journal_rows(home, "SELECT m.role FROM chat_messages m JOIN chats c ON c.id=m.chat "
                              "WHERE c.note='Chats/Pricing.md' ORDER BY m.id")
    assert [r[0] for r in rows] == ["user", "assistant"] * 3


def read_until(fd: int, pattern: str, timeout: float, seen: list[str]) -> str:
    """Read a pipe or terminal until ``pattern`` shows; every read is appended to ``seen``."""
    deadline, text = time.monotonic() + scaled(timeout), "".join(seen)
    while not re.search(pattern, text):
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"timed out waiting for {pattern!r}; got:\n{text}")
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            try:
                chunk = os.read(fd, 4096).decode("utf-8", "replace")
            except OSError:  # the terminal closed: the program ended
                chunk = ""
            if not chunk:
                raise AssertionError(f"the program ended before {pattern!r}; got:\n{text}")
            seen.append(chunk)
            text += chunk
    return text


SLOW = {"content": "Alpha: the pricing key result comes first. " + " ".join(f"step{i}" for i in range(40)) + " Omega.",
        "delay": 2.5}


def test_ask_streams_through_the_daemon_and_c_continues(talk, ollama):
    home = talk
    only_schedule(home, "triggers: []\n")
    with daemon(home):
        ollama.script(MODEL, [SLOW])
        proc = subprocess.Popen([sys.executable, "-m", "routine", "ask", "strategist", "What comes first?"],
                                env=home.env, cwd=home.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        seen: list[str] = []
        read_until(proc.stdout.fileno(), "Alpha", 60, seen)
        partial = "".join(seen)
        assert "Omega" not in partial and proc.poll() is None  # the first words, before the answer ended
        out, err = proc.communicate(timeout=scaled(60))
        assert proc.returncode == 0, err
        assert b"waiting for" not in err, err  # nothing else in the daemon: nothing to wait for, nothing said
        assert (partial + out.decode()).strip().endswith("Omega.")
        chat_id = re.search(r"conversation (c[\w-]+)", err.decode())[1]
        follow = home.run("ask", "strategist", "-c", "And after that?", check=True)
        assert f"conversation {chat_id}" in follow.stderr
        last = chat_requests(ollama)[-1]["messages"]
        assert last[1]["content"].endswith("] What comes first?") and last[2]["content"].startswith("Alpha:")
        assert last[3]["content"].endswith("And after that?")
    log = (home.root / "daemon.log").read_text()
    assert f"strategist answered in conversation {chat_id}" in log  # through the daemon, both times
    assert log.count(f"answered in conversation {chat_id}") == 2


def test_routine_chat_in_a_terminal_streams_and_ends_cleanly(talk, ollama):
    home = talk
    ollama.script(MODEL, [SLOW, "Second answer, shorter."])
    leader, follower = os.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "routine", "chat", "strategist"], env={**home.env, "TERM": "dumb"},
                            cwd=home.root, stdin=follower, stdout=follower, stderr=follower, start_new_session=True)
    os.close(follower)
    seen: list[str] = []
    try:
        read_until(leader, r"Talking with Strategist.*\n> ", 60, seen)
        os.write(leader, b"What comes first?\n")
        read_until(leader, "Alpha", 60, seen)
        assert "Omega" not in "".join(seen)  # streamed: the start shows before the end was written
        read_until(leader, r"Omega\.\s*\r?\n> ", 60, seen)
        os.write(leader, b"/sources\n")
        read_until(leader, r"Plans/OKRs\.md[\s\S]*> $", 30, seen)
        os.write(leader, b"And then?\n")
        read_until(leader, r"Second answer, shorter\.\s*\r?\n> ", 60, seen)
        os.write(leader, b"/exit\n")
        read_until(leader, r"routine chats show c[\w-]+", 30, seen)
        assert proc.wait(timeout=scaled(30)) == 0
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        os.close(leader)
    second = chat_requests(ollama)[-1]["messages"]
    assert second[1]["content"].endswith("] What comes first?") and second[2]["content"].startswith("Alpha:")
