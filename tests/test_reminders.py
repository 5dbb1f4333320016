"""A task with a due date is nudged the day before and once when overdue, each once (the journal's
notifications table holds the key, so a later round or a restarted daemon never repeats it),
through the daemon on the driven clock, to a real local receiver through real Apprise."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from receiver import Receiver

BERLIN = ZoneInfo("Europe/Berlin")


def test_a_nudge_comes_from_the_day_before_and_when_overdue():
    from routine.projects.reminders import Nudge, due_words, nudge_of

    due, day = date(2026, 12, 1), timedelta(days=1)
    assert [nudge_of(due, due - n * day, day) for n in (2, 1, 0)] == [None, Nudge.SOON, Nudge.SOON]
    assert nudge_of(due, due + day, day) is Nudge.OVERDUE
    assert nudge_of(due, due - 3 * day, 3 * day) is Nudge.SOON  # remind: 3d
    assert due_words(due, due - day) == "due tomorrow" and due_words(due, due + day) == "overdue since 2026-12-01"


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.stop()


@pytest.mark.daemon(budget=150)
def test_a_task_due_tomorrow_is_nudged_once_today_and_once_when_overdue(initialised, ollama, receiver, driven_clock):
    from test_daemon import daemon, only_schedule, wait_for
    from test_notify import with_notify
    from test_recovery import FAKE_EMBEDDINGS

    home = initialised
    with_notify(home, receiver)  # Europe/Berlin, an ntfy server and a webhook: two texts per message
    home.config.write_text(home.config.read_text() + FAKE_EMBEDDINGS)
    only_schedule(home, "triggers: []\n")
    home.run("project", "new", "Garden Shed", check=True)
    homenote = home.vault / "Projects/Garden Shed/Garden Shed.md"
    today = driven_clock.now().astimezone(BERLIN).date()
    due = today + timedelta(days=1)
    homenote.write_text(homenote.read_text() + f"\n- [ ] Buy the hinges [assignee:: [[Ada]]] 📅 {due}\n"
                        "- [x] Order the wood [assignee:: [[Ada]]] 📅 2020-01-01\n")  # done: never nudged

    def count(words: str) -> int:
        return sum(words in t for t in receiver.texts())

    log = home.root / "daemon.log"

    def move(to: datetime) -> None:
        moves = log.read_text().count("test clock:")
        driven_clock.move_to(to)
        wait_for(lambda: log.read_text().count("test clock:") > moves, 30, "the daemon to see its clock move")

    with daemon(home):
        receiver.wait_for(lambda ts: sum("Due tomorrow: Buy the hinges (Ada)" in t for t in ts) >= 2, 60,
                          "the nudge the day before")
        assert all("obsidian://open?vault=Vault&file=Projects%2FGarden%20Shed%2FGarden%20Shed" in t
                   for t in receiver.texts() if "Buy the hinges" in t)
        move(datetime.combine(due + timedelta(days=1), datetime.min.time(), BERLIN) + timedelta(minutes=5))
        receiver.wait_for(lambda ts: sum(f"Overdue since {due}: Buy the hinges" in t for t in ts) >= 2, 60,
                          "the nudge when overdue")
    with daemon(home):  # a restart, a later round: a new task is nudged, the old ones are not again
        later = driven_clock.now().astimezone(BERLIN).date() + timedelta(days=1)
        homenote.write_text(homenote.read_text() + f"- [ ] Paint the door 📅 {later}\n")
        move(driven_clock.now() + timedelta(minutes=30))
        receiver.wait_for(lambda ts: sum("Due tomorrow: Paint the door" in t for t in ts) >= 2, 60,
                          "the next task's nudge")
    assert count("Due tomorrow: Buy the hinges") == 2 and count("Overdue since") == 2, receiver.texts()
    assert count("Order the wood") == 0
    ntfy = [r.headers.get("X-Priority", "default") for r in receiver.got
            if r.path == "/" and b"hinges" in r.body and b"Task for" not in r.body]
    assert ntfy == ["default", "high"]  # ntfy's normal (its header left out), then overdue: urgent
