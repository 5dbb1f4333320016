"""One-shot reminders in the person's words (issue 45): a task line's `(@2026-11-28 15:00)`, "remind me
at 15:00 to …" in a chat note, `routine remind TEXT --at WHEN` and an agent's `remind_person`, each
fired once at 15:00 Europe/Berlin by a real daemon on the driven clock, through real Apprise to a
local receiver; across a restart and DST changes; snoozed once more; a ticked task's never."""

from __future__ import annotations

import json
from datetime import date, datetime, time, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from receiver import Receiver
from routine.errors import ReminderProblem
from routine.schedule.remind_words import asked_in, snooze_until, stamp_of, when_from

BERLIN = ZoneInfo("Europe/Berlin")
MISTRAL = "mistral:7b-instruct-q4_K_M"


def berlin(day: date, hour: int, minute: int = 0, fold: int = 0) -> datetime:
    return datetime.combine(day, time(hour, minute), BERLIN).replace(fold=fold)


# --- the words, no daemon ----------------------------------------------------------------------------------

NOW = datetime(2026, 11, 28, 10, 0, tzinfo=timezone.utc)  # 11:00 in Berlin, a Saturday


@pytest.mark.parametrize("words, wanted", [
    ("15:00", berlin(date(2026, 11, 28), 15)), ("3pm", berlin(date(2026, 11, 28), 15)),
    ("09:00", berlin(date(2026, 11, 29), 9)),  # passed today: tomorrow
    ("tomorrow at 9", berlin(date(2026, 11, 29), 9)), ("monday 15:00", berlin(date(2026, 11, 30), 15)),
    ("2026-11-28 15:00", berlin(date(2026, 11, 28), 15)), ("2026-12-01", berlin(date(2026, 12, 1), 9)),
    ("in 2 hours", NOW + timedelta(hours=2)), ("90m", NOW + timedelta(minutes=90)),
    # DST: a time spring-forward skips fires at the first minute after the gap; a repeated one once, first
    ("2027-03-28 02:30", berlin(date(2027, 3, 28), 3)),
    ("2027-10-31 02:30", datetime(2027, 10, 31, 0, 30, tzinfo=timezone.utc)),
    ("2027-03-28 15:00", datetime(2027, 3, 28, 13, 0, tzinfo=timezone.utc)),
])
def test_a_time_in_words_is_the_local_instant_the_person_means(words, wanted):
    assert when_from(words, NOW, BERLIN) == wanted


@pytest.mark.parametrize("words, said", [("yesterday", "no time routine understands"),
                                         ("2026-11-27 10:00", "is in the past"),
                                         ("25:00", "no time routine understands")])
def test_a_time_that_is_none_or_past_is_one_sentence_with_the_forms(words, said):
    with pytest.raises(ReminderProblem, match=said) as caught:
        when_from(words, NOW, BERLIN)
    assert caught.value.fix


def test_remind_me_in_a_message_is_read_both_ways_and_other_sentences_are_not():
    message = ("Thanks for the summary. Remind me at 15:00 to call Priya. Also remind me to water the plants "
               "tomorrow at 9! And remind me to buy 2 apples. I never said remind me about it.")
    asked = [(a.text, a.at) for a in asked_in(message, NOW, BERLIN)]
    assert asked == [("call Priya", berlin(date(2026, 11, 28), 15)),
                     ("water the plants", berlin(date(2026, 11, 29), 9))]


def test_the_reminder_plugins_stamp_on_a_task_line():
    stamp = stamp_of("Call Priya (@2026-11-28 15:00)")
    assert stamp is not None and (stamp.text, stamp.instant(BERLIN)) == ("Call Priya", berlin(date(2026, 11, 28), 15))
    day_only = stamp_of("Renew the passport (@2026-12-01)")
    assert day_only is not None and day_only.instant(BERLIN) == berlin(date(2026, 12, 1), 9)
    tasks_form = stamp_of("Send the deck ⏰ 2026-11-28 16:30")
    assert tasks_form is not None and tasks_form.instant(BERLIN) == berlin(date(2026, 11, 28), 16, 30)
    assert stamp_of("No stamp here") is None


def test_snooze_choices():
    assert snooze_until("15m", NOW, BERLIN) == NOW + timedelta(minutes=15)
    assert snooze_until("1h", NOW, BERLIN) == NOW + timedelta(hours=1)
    assert snooze_until("tomorrow", NOW, BERLIN) == berlin(date(2026, 11, 29), 9)
    with pytest.raises(ReminderProblem, match="not one routine offers"):
        snooze_until("2d", NOW, BERLIN)


def test_only_the_persons_open_task_lines_set_reminders_and_a_tick_or_a_deletion_cancels_them(tmp_path):
    from routine.journal.timed_reminders import ReminderStatus
    from routine.schedule.timed_reminders import from_note, reminder_log

    journal = tmp_path / "journal.sqlite3"
    note = ("# Calls\n\n- [ ] Call Priya (@2026-11-28 15:00)\n- [ ] Call the bank (@2026-11-28 16:00)\n"
            "- [x] Done already (@2026-11-28 17:00)\n\n## Plan\n%% routine:begin planner run=r1 %%\n"
            "- [ ] Copied by an agent (@2026-11-28 18:00)\n%% routine:end planner %%\n")
    with reminder_log(journal) as book:
        synced = from_note(book, "Inbox/Calls.md", note, NOW, BERLIN)
        assert sorted(r.text for r in synced.added) == ["Call Priya", "Call the bank"]  # not routine's, not ticked
        assert from_note(book, "Inbox/Calls.md", note, NOW, BERLIN).added == []  # seen again: nothing new
        ticked = from_note(book, "Inbox/Calls.md", note.replace("- [ ] Call the bank", "- [x] Call the bank"),
                           NOW, BERLIN)
        assert [r.text for r in ticked.cancelled] == ["Call the bank"]
        gone = from_note(book, "Inbox/Calls.md", None, NOW, BERLIN)  # the note deleted
        assert [r.text for r in gone.cancelled] == ["Call Priya"]
        assert {r.text: r.status for r in book.recent(10)} == {"Call Priya": ReminderStatus.CANCELLED,
                                                               "Call the bank": ReminderStatus.CANCELLED}
        old = from_note(book, "Inbox/Old.md", "- [ ] Long ago (@2026-11-01 09:00)\n", NOW, BERLIN)
        assert [r.status for r in old.added] == [ReminderStatus.PASSED]  # never sent: it is weeks late


# --- the command, no daemon ----------------------------------------------------------------------------------

@pytest.fixture
def berlin_home(initialised):
    initialised.config.write_text(initialised.config.read_text() + "\ntimezone: Europe/Berlin\n")
    return initialised


def test_routine_remind_sets_lists_snoozes_and_ends_a_reminder_without_a_daemon(berlin_home):
    home = berlin_home
    said = home.run("remind", "Call Priya", "--at", "in 2 hours", "--json", check=True)
    reminder = json.loads(said.stdout)
    assert reminder["status"] == "pending" and reminder["text"] == "Call Priya" and reminder["origin"] == "cli"
    listed = home.run("remind", "--list", check=True).stdout
    assert f"{reminder['id']}" in listed and "Call Priya" in listed and "pending" in listed
    assert "Call Priya" in home.run("status").stdout.split("reminders:")[1]  # status shows what is waiting
    snoozed = json.loads(home.run("remind", "--snooze", str(reminder["id"]), "tomorrow", "--json", check=True).stdout)
    assert snoozed["status"] == "pending" and snoozed["at"].endswith(("09:00:00+01:00", "09:00:00+02:00"))
    done = home.run("remind", "--done", str(reminder["id"]), check=True)
    assert done.stdout.startswith("done: ")
    again = home.run("remind", "--done", str(reminder["id"]))
    assert again.returncode == 2 and "has ended: done" in again.stderr
    bad = home.run("remind", "Call Priya", "--at", "yesterday")
    assert bad.returncode == 2 and "'yesterday' is no time routine understands" in bad.stderr
    assert "Traceback" not in bad.stderr
    assert home.run("remind", "Call Priya").returncode == 2  # no time: said, with the fix


def test_snoozing_a_reminder_that_has_not_fired_pushes_it_later_never_earlier(berlin_home):
    home = berlin_home
    set_for = json.loads(home.run("remind", "Send the deck", "--at", "tomorrow 9:00", "--json", check=True).stdout)
    due = datetime.fromisoformat(set_for["at"])
    snoozed = json.loads(home.run("remind", "--snooze", str(set_for["id"]), "15m", "--json", check=True).stdout)
    assert datetime.fromisoformat(snoozed["at"]) == due + timedelta(minutes=15), snoozed  # 09:15, not now + 15m
    told = home.run("remind", "--snooze", str(set_for["id"]), "tomorrow", check=True).stdout
    assert f"{due + timedelta(days=1):%a %d %b} 09:00" in told, told  # the day after its own day


def test_an_agents_reminder_with_a_time_that_is_none_is_refused_to_the_model_and_one_that_reads_is_set(
        berlin_home, ollama):
    home = berlin_home
    (home.vault / "Agents" / "Reminder.md").write_text(REMINDER_AGENT)
    def remind(at: str) -> dict:
        return {"tool_calls": [{"name": "remind_person", "arguments": {"text": "Stretch", "at": at}}]}

    ollama.script(MISTRAL, [remind("soonish"), remind("in 2 hours"), "Set it."])
    home.run("fire", "reminder", check=True)
    run_id = json.loads(home.run("runs", "list", "--json", check=True).stdout)[0]["id"]
    log = json.loads(home.run("runs", "show", run_id, "--json", check=True).stdout)["log"]
    results = [str(e.get("result") or e.get("error")) for e in log if e["type"] == "tool"]
    assert "'soonish' is no time routine understands" in results[0] and "in 2 hours" in results[0]
    assert results[1].startswith("Reminder #1 set: #1 ") and "Stretch (agent)" in results[1]
    (reminder,) = json.loads(home.run("remind", "--list", "--json", check=True).stdout)["reminders"]
    assert (reminder["text"], reminder["origin"], reminder["status"]) == ("Stretch", "agent", "pending")


# --- through the daemon ----------------------------------------------------------------------------------------

@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.stop()


REMINDER_AGENT = """\
---
agent: reminder
role: Sets reminders for the person
model: general
reads: ["Inbox/**"]
writes: ["Inbox/**"]
tools: [remind_person]
write: {note: "Inbox/Reminder log.md", section: "Set"}
task: Set the reminders the person asked for.
---
You set reminders.
"""


def reminder_home(home, receiver):
    from test_daemon import only_schedule
    from test_recovery import FAKE_EMBEDDINGS

    home.config.write_text(home.config.read_text() + f"\ntimezone: Europe/Berlin\nnotify: {{urls: "
                           f"[json://127.0.0.1:{receiver.port}/hook], on: [reminders]}}\nchat: {{quiet: 1s}}\n"
                           + FAKE_EMBEDDINGS)
    only_schedule(home, "triggers: []\n")
    (home.vault / "Agents" / "Reminder.md").write_text(REMINDER_AGENT)
    return home


def fired(home) -> list[dict]:
    recent = json.loads(home.run("notify", "list", "--limit", "50", "--json", check=True).stdout)["recent"]
    return [r for r in recent if r["topic"] == "reminders"]


def move_and_wait(home, clock, when: datetime, lead: float = 2.0) -> None:
    """The daemon's clock to ``lead`` seconds before ``when``, seen by the daemon."""
    from test_daemon import wait_for

    log = home.root / "daemon.log"
    moves = log.read_text().count("test clock:")
    clock.move_to(when.astimezone(timezone.utc) - timedelta(seconds=lead))  # not wall-clock arithmetic: DST
    wait_for(lambda: log.read_text().count("test clock:") > moves, 30, "the daemon to see its clock move")


@pytest.mark.daemon(budget=180)
def test_a_reminder_set_each_of_four_ways_fires_once_at_15_in_berlin_across_a_restart(
        initialised, ollama, receiver, driven_clock):
    from test_daemon import daemon, wait_for

    home = reminder_home(initialised, receiver)
    day = driven_clock.now().astimezone(BERLIN).date() + timedelta(days=2)
    driven_clock.move_to(berlin(day, 10))
    tasks = home.vault / "Inbox" / "Calls.md"
    chat = home.vault / "Chats" / "Plants.md"
    home.run("chat", "new", "librarian", "Plants", check=True)

    def listed() -> list[dict]:
        return json.loads(home.run("remind", "--list", "--json", check=True).stdout)["reminders"]

    with daemon(home):
        # 1. an agent's tool, in a run the daemon makes
        ollama.script(MISTRAL, [{"tool_calls": [{"name": "remind_person",
                                                 "arguments": {"text": "Book the train", "at": "15:00"}}]},
                                "Set one reminder."])
        home.run("fire", "reminder", check=True)
        # 2. the command
        home.run("remind", "Send the deck", "--at", "15:00", check=True)
        # 3. task lines with the Reminder plugin's stamp (one of them ticked below)
        tasks.write_text(f"# Calls\n\n- [ ] Call Priya (@{day} 15:00)\n- [ ] Call the bank (@{day} 15:00)\n")
        # 4. a chat note's message
        chat.write_text(chat.read_text() + "Remind me at 15:00 to water the plants.\n")
        wait_for(lambda: len(listed()) == 5, 30, "five reminders")
        # The chat's answer says the reminder was understood (and it is set once, not again by the answer).
        answered = wait_for(lambda: "Reminder set for" in (t := chat.read_text()) and t, 30, "the chat's answer")
        assert f"Reminder set for {day:%a %d %b} 15:00: water the plants" in answered, answered
        assert len(listed()) == 5
        tasks.write_text(tasks.read_text().replace("- [ ] Call the bank", "- [x] Call the bank"))
        wait_for(lambda: any(r["status"] == "cancelled" for r in listed()), 30, "the ticked one cancelled")
        dashboard = home.vault / "Routine" / "Dashboard.md"
        shown = wait_for(lambda: "## Reminders" in (t := dashboard.read_text()) and "Call the bank" not in t and t,
                         30, "the dashboard's reminders")
        assert all(words in shown for words in ("Call Priya", "water the plants", "Send the deck", "Book the train"))
    with daemon(home):  # a restart: the reminders waiting are planned again
        move_and_wait(home, driven_clock, berlin(day, 15))
        wait_for(lambda: len(receiver.got) >= 4, 30, "four reminders")
        texts = receiver.texts()
        for words in ("Call Priya", "water the plants", "Send the deck", "Book the train"):
            assert sum(f"Reminder: {words}" in t for t in texts) == 1, texts
        assert not any("Call the bank" in t for t in texts)
        for row in fired(home):  # each at 15:00 by the daemon's clock, within two seconds
            at = datetime.fromisoformat(row["at"]).astimezone(BERLIN)
            assert berlin(day, 15) <= at < berlin(day, 15) + timedelta(seconds=3), row

        # Snoozed 15 minutes: once more, on time.
        ids = {r["text"]: r["id"] for r in listed()}
        snoozed = json.loads(home.run("remind", "--snooze", str(ids["Call Priya"]), "15m", "--json",
                                      check=True).stdout)
        again = datetime.fromisoformat(snoozed["at"])
        move_and_wait(home, driven_clock, again)
        wait_for(lambda: len(receiver.got) >= 5, 30, "the snoozed reminder")
        last = fired(home)[0]
        assert last["title"] == "Reminder: Call Priya"
        assert again <= datetime.fromisoformat(last["at"]) < again + timedelta(seconds=3)
    # One whose time passes while the daemon is down fires once at its start, said as late.
    home.run("remind", "Feed the cat", "--at", "15:30", check=True)
    driven_clock.move_to(berlin(day, 15, 40))
    with daemon(home):
        wait_for(lambda: len(receiver.got) >= 6, 30, "the late reminder")
        move_and_wait(home, driven_clock, berlin(day, 18))
    texts = receiver.texts()
    assert sum("Reminder (late): Feed the cat" in t and "was due at 15:30" in t for t in texts) == 1, texts
    assert sum("Call Priya" in t for t in texts) == 2 and len(texts) == 6, texts
    # a json:// URL has no buttons: the message says the commands only
    assert all("the buttons" not in t and "routine remind --snooze" in t for t in texts if "Reminder" in t), texts
    by_text = {r["text"]: r for r in listed()}
    assert by_text["Call Priya"]["fired"] == 2 and by_text["Call the bank"]["fired"] == 0


@pytest.mark.daemon(budget=120)
def test_reminders_across_dst_changes_fire_once_at_the_local_time(initialised, ollama, receiver, driven_clock):
    from test_daemon import daemon, wait_for

    home = reminder_home(initialised, receiver)
    spring, autumn = date(2027, 3, 28), date(2027, 10, 31)
    driven_clock.move_to(berlin(spring - timedelta(days=1), 20))
    with daemon(home):
        for text, at in (("Spring gap", f"{spring} 02:30"), ("Spring afternoon", f"{spring} 15:00"),
                         ("Autumn repeat", f"{autumn} 02:30"), ("Autumn afternoon", f"{autumn} 15:00")):
            home.run("remind", text, "--at", at, check=True)
        move_and_wait(home, driven_clock, berlin(spring, 3))  # 02:30 does not exist: the first minute after the gap
        wait_for(lambda: len(receiver.got) >= 1, 30, "the spring gap's reminder")
        move_and_wait(home, driven_clock, berlin(spring, 15))
        wait_for(lambda: len(receiver.got) >= 2, 30, "the spring afternoon's reminder")
        move_and_wait(home, driven_clock, berlin(autumn, 2, 30))  # the first 02:30 (CEST)
        wait_for(lambda: len(receiver.got) >= 3, 30, "the autumn repeat's reminder")
        second = berlin(autumn, 2, 30, fold=1).astimezone(timezone.utc)  # the second 02:30 (CET): nothing more
        move_and_wait(home, driven_clock, second + timedelta(minutes=1))
        move_and_wait(home, driven_clock, berlin(autumn, 15))
        wait_for(lambda: len(receiver.got) >= 4, 30, "the autumn afternoon's reminder")
        sent = {r["title"]: datetime.fromisoformat(r["at"]) for r in fired(home)}
    assert len(receiver.got) == 4, receiver.texts()
    wanted = {"Spring gap": datetime(2027, 3, 28, 1, 0, tzinfo=timezone.utc),   # 03:00 CEST
              "Spring afternoon": datetime(2027, 3, 28, 13, 0, tzinfo=timezone.utc),  # 15:00 CEST
              "Autumn repeat": datetime(2027, 10, 31, 0, 30, tzinfo=timezone.utc),  # 02:30 CEST, the first
              "Autumn afternoon": datetime(2027, 10, 31, 14, 0, tzinfo=timezone.utc)}  # 15:00 CET
    for text, at in wanted.items():
        when = sent.get(f"Reminder: {text}")
        assert when is not None, (text, sent)
        assert at <= when < at + timedelta(seconds=3), (text, when)


@pytest.mark.daemon(budget=120)
def test_a_reminders_snooze_buttons_on_the_phone(initialised, ollama, driven_clock):
    """Against the ntfy stand-in (tests/fake_ntfy.py): the reminder's message carries the three snoozes
    (ntfy shows three buttons; Telegram also shows Done); "15 min" fires it once more a quarter of an
    hour later, "Tomorrow" moves it to 09:00 the next day."""
    from fake_ntfy import FakeNtfy
    from test_answers_daemon import with_channels
    from test_daemon import daemon, only_schedule, wait_for

    home, ntfy = initialised, FakeNtfy(keepalive=5.0)
    try:
        with_channels(home, ntfy)
        only_schedule(home, "triggers: []\n")
        day = driven_clock.now().astimezone(BERLIN).date() + timedelta(days=1)
        driven_clock.move_to(berlin(day, 10))
        home.run("remind", "Call Priya", "--at", "15:00", check=True)

        def pushed(count: int) -> dict:
            return wait_for(lambda: (found := [m for m in ntfy.on("phone") if "Reminder: Call Priya" in str(m)
                                               and m.get("actions")]) and len(found) >= count and found[-1],
                            30, f"reminder message {count}")

        def reminder() -> dict:
            return json.loads(home.run("remind", "--list", "--json", check=True).stdout)["reminders"][0]
        with daemon(home):
            wait_for(lambda: ntfy.subscribers > 0, 30, "the daemon to read its replies")
            move_and_wait(home, driven_clock, berlin(day, 15))
            first = pushed(1)
            assert [a["label"] for a in first["actions"]] == ["15 min", "1 h", "Tomorrow"]
            ntfy.press(first, "15 min")
            wait_for(lambda: reminder()["status"] == "pending", 30, "the snooze taken")
            move_and_wait(home, driven_clock, datetime.fromisoformat(reminder()["at"]))
            second = pushed(2)
            ntfy.press(second, "Tomorrow")
            wait_for(lambda: reminder()["status"] == "pending" and reminder()["fired"] == 2, 30, "the second snooze")
        assert datetime.fromisoformat(reminder()["at"]) == berlin(day + timedelta(days=1), 9)
        assert len([m for m in ntfy.on("phone") if "Reminder: Call Priya" in str(m)]) == 2
    finally:
        ntfy.stop()
