"""Approving from the phone, through a real daemon, against stand-ins of ntfy and Telegram that
follow their published APIs (tests/fake_ntfy.py, tests/fake_telegram.py): a proposal approved by
its ntfy button lands once; an answer from another Telegram chat, a forged token, the same answer
replayed and an answer for a proposal the person has since edited are each refused with a
sentence (`routine notify list`), and change nothing; a flood of forged answers leaves the
daemon healthy."""

from __future__ import annotations

import json
import re
import time

import pytest

from fake_ntfy import FakeNtfy
from fake_telegram import FakeTelegram
from test_approval import archived, daily, edit_section, proposal_after_edit
from test_daemon import daemon, journal_rows, only_schedule, status, wait_for

CHAT = 4242
TOKEN = "123456:SECRETbotTOKEN"


@pytest.fixture
def ntfy():
    server = FakeNtfy(keepalive=5.0)
    yield server
    server.stop()


@pytest.fixture
def telegram():
    server = FakeTelegram(TOKEN)
    yield server
    server.stop()


def with_channels(home, ntfy, telegram=None, within: str = "3d") -> None:
    text = (f"\ntimezone: Europe/Berlin\nnotify:\n  answer_within: {within}\n  ntfy:\n    server: {ntfy.url}\n"
            "    topic: phone\n    replies: answers-7f3k\n")
    if telegram is not None:
        text += f"  telegram:\n    token: \"{TOKEN}\"\n    chat: {CHAT}\n    api: {telegram.url}\n"
    home.config.write_text(home.config.read_text() + text)


def answers(home) -> dict:
    return json.loads(home.run("notify", "list", "--json", check=True).stdout)["answers"]


def proposal_message(ntfy, rel_name: str) -> dict:
    return wait_for(lambda: next((m for m in reversed(ntfy.on("phone")) if rel_name in m["message"]
                                  and m.get("actions")), None), 30, "the proposal's message with its buttons")


def test_notify_test_and_doctor_reach_the_channels_of_their_own(initialised, ntfy, telegram):
    home = initialised
    with_channels(home, ntfy, telegram)
    done = home.run("notify", "test", "--json", check=True)
    said = {r["url"]: r for r in json.loads(done.stdout)}
    assert said[ntfy.url]["ok"] and said[telegram.url]["ok"], said
    assert any("routine can reach you here" in m["message"] for m in ntfy.on("phone"))
    assert any("routine can reach you here" in m["text"] for m in telegram.sent)
    assert not any(m.get("actions") for m in ntfy.on("phone"))  # a message that asks nothing has no buttons
    doctor = home.run("doctor", "--json")
    checks = {c["name"]: c for c in json.loads(doctor.stdout)}
    assert checks["notify ntfy (answers)"]["ok"] and checks["notify telegram (answers)"]["ok"], checks
    assert TOKEN not in doctor.stdout


@pytest.mark.daemon(budget=120)
def test_a_proposal_approved_from_the_phone_lands_once_and_every_bad_answer_is_refused(initialised, ollama, ntfy,
                                                                                        telegram):
    home = initialised
    with_channels(home, ntfy, telegram)
    only_schedule(home, "triggers: []\n")
    with daemon(home):
        wait_for(lambda: ntfy.subscribers > 0 and telegram.polls > 0, 30, "the daemon to read both channels")
        proposal = proposal_after_edit(home)
        pushed = proposal_message(ntfy, proposal.name)
        assert [a["label"] for a in pushed["actions"]] == ["Approve", "Reject"]
        assert all(a["action"] == "http" and a["url"].endswith("/answers-7f3k") for a in pushed["actions"])
        chat = wait_for(lambda: next((m for m in telegram.sent if proposal.name in m["text"]), None), 30,
                        "the proposal's Telegram message")
        before = daily(home).read_text()

        # Another chat taps Approve on the same message: refused, the token not spent.
        telegram.press(chat, "Approve", chat=999)
        wait_for(lambda: answers(home)["counts"].get("refused foreign") == 1, 30, "the foreign answer refused")
        # the refusal is counted as it is taken; the phone is told just after
        told = "Refused: it came from chat 999"
        wait_for(lambda: telegram.answered and telegram.answered[-1]["text"].startswith(told), 30, "the chat told why")
        # A forged token (the signature changed) and a stranger's text on the reply topic.
        real = pushed["actions"][0]["body"]
        ntfy.publish("answers-7f3k", real[:-4] + ("AAAA" if not real.endswith("AAAA") else "BBBB"))
        ntfy.publish("answers-7f3k", "approve everything")
        wait_for(lambda: answers(home)["counts"].get("refused forged") == 2, 30, "the forged answers refused")
        assert proposal.exists() and daily(home).read_text() == before  # nothing changed

        # The person taps Approve: it lands, once; one short confirmation follows.
        ntfy.press(pushed, "Approve")
        wait_for(lambda: not proposal.exists() and archived(home), 30, "the proposal applied and archived")
        assert "newer version" not in daily(home).read_text()
        confirmed = wait_for(lambda: [m for m in ntfy.on("phone") if m.get("title", "").startswith("Approve:")], 30,
                             "the confirmation")
        assert len(confirmed) == 1 and "The proposal is in Archive/" in confirmed[0]["message"]
        assert not confirmed[0].get("actions")

        # The same answer again (ntfy), and the same message's Approve from the right chat: replays.
        landed = daily(home).read_text()
        ntfy.press(pushed, "Approve")
        telegram.press(chat, "Approve", chat=CHAT)
        wait_for(lambda: answers(home)["counts"].get("refused replayed") == 2, 30, "the replays refused")
        assert daily(home).read_text() == landed
        rows = journal_rows(home, "SELECT outcome, by FROM decisions")
        assert rows == [("applied", "phone:ntfy")]

        # A proposal the person edits after it was sent: its Approve is refused with a sentence.
        edit_section(home, "My second thought on alignment.")
        home.run("fire", "strategist", check=True)
        second = wait_for(lambda: [p for p in (home.vault / "Drafts").glob("*.md")], 30, "a second proposal")[0]
        pushed2 = wait_for(lambda: (m := proposal_message(ntfy, second.name))["id"] != pushed["id"] and m, 30,
                           "the second proposal's message")
        second.write_text(re.sub(r"(## Proposed text\n)", r"\1I rewrote this myself.\n", second.read_text()))
        ntfy.press(pushed2, "Approve")
        wait_for(lambda: answers(home)["counts"].get("refused edited") == 1, 30, "the edited proposal's answer")
        assert second.exists() and "My second thought on alignment." in daily(home).read_text()

    said = answers(home)
    assert said["counts"] == {"taken": 1, "refused foreign": 1, "refused forged": 2, "refused replayed": 2,
                              "refused edited": 1}
    sentences = {r["reason"]: r["detail"] for r in said["recent"] if r["outcome"] == "refused"}
    assert "not the configured chat" in sentences["foreign"]
    assert "no token routine signed" in sentences["forged"]
    assert "answered already" in sentences["replayed"]
    assert "was edited after it was sent" in sentences["edited"]
    shown = home.run("notify", "list", check=True).stdout
    assert "refused" in shown and "1 taken" in shown


@pytest.mark.daemon(budget=90)
def test_a_button_pressed_after_answer_within_is_refused_as_expired(initialised, ollama, ntfy, driven_clock):
    from datetime import timedelta

    home = initialised
    with_channels(home, ntfy, within="1h")
    only_schedule(home, "triggers: []\n")
    with daemon(home):
        wait_for(lambda: ntfy.subscribers > 0, 30, "the daemon to read its reply topic")
        proposal = proposal_after_edit(home)
        pushed = proposal_message(ntfy, proposal.name)
        log = home.root / "daemon.log"
        moves = log.read_text().count("test clock:")
        driven_clock.move_to(driven_clock.now() + timedelta(hours=1, minutes=1))
        wait_for(lambda: log.read_text().count("test clock:") > moves, 30, "the daemon to see its clock move")
        ntfy.press(pushed, "Approve")
        wait_for(lambda: answers(home)["counts"].get("refused expired") == 1, 30, "the late answer refused")
        assert proposal.exists() and not archived(home)
        assert "expired" in answers(home)["recent"][0]["detail"]


@pytest.mark.daemon(budget=90)
def test_a_proposal_rejected_by_a_reply_typed_in_telegram_is_archived_and_the_persons_text_stays(
        initialised, ollama, ntfy, telegram):
    home = initialised
    with_channels(home, ntfy, telegram)
    only_schedule(home, "triggers: []\n")
    with daemon(home):
        wait_for(lambda: telegram.polls > 0, 30, "the daemon to poll Telegram")
        proposal = proposal_after_edit(home)
        chat = wait_for(lambda: next((m for m in telegram.sent if proposal.name in m["text"]), None), 30,
                        "the proposal's Telegram message")
        assert [b["text"] for b in chat["reply_markup"]["inline_keyboard"][0]] == ["Approve", "Reject"]
        # a reply names its message: routine knows it once Telegram's answer to the send is recorded
        wait_for(lambda: journal_rows(home, "SELECT ticket FROM answer_refs WHERE channel='telegram'"), 30,
                 "the message's id recorded")
        telegram.reply(chat, "Reject", chat=CHAT)
        wait_for(lambda: not proposal.exists() and archived(home), 30, "the proposal rejected and archived")
        assert "status: rejected" in archived(home)[0].read_text()
        assert "decided_by: phone:telegram" in archived(home)[0].read_text()
        wait_for(lambda: any(m["text"].startswith("Reject:") for m in telegram.sent), 30, "the confirmation")
    assert journal_rows(home, "SELECT decision, outcome, by FROM decisions") == [("rejected", "rejected",
                                                                                   "phone:telegram")]


@pytest.mark.daemon(budget=90)
def test_a_button_pressed_while_the_daemon_was_down_is_read_when_it_starts(initialised, ollama, ntfy):
    home = initialised
    with_channels(home, ntfy)
    only_schedule(home, "triggers: []\n")
    with daemon(home):
        wait_for(lambda: ntfy.subscribers > 0, 30, "the daemon to read its reply topic")
        proposal = proposal_after_edit(home)
        pushed = proposal_message(ntfy, proposal.name)
    ntfy.press(pushed, "Approve")  # no daemon: ntfy keeps the answer
    assert proposal.exists()
    with daemon(home):
        wait_for(lambda: not proposal.exists() and archived(home), 30, "the answer read at start and applied")
    assert journal_rows(home, "SELECT outcome, by FROM decisions") == [("applied", "phone:ntfy")]


def _rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))


def _cpu_seconds(pid: int) -> float:
    import os

    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.daemon(budget=120)
def test_a_thousand_forged_answers_in_a_minute_leave_the_daemon_healthy(initialised, ollama, ntfy):
    home = initialised
    with_channels(home, ntfy)
    only_schedule(home, "triggers: []\n")
    with daemon(home) as proc:
        wait_for(lambda: ntfy.subscribers > 0, 30, "the daemon to read its reply topic")
        wait_for(lambda: status(home)["health"]["ok"], 30, "a healthy daemon")
        rss, cpu, began = _rss_kib(proc.pid), _cpu_seconds(proc.pid), time.monotonic()
        for i in range(1000):
            ntfy.publish("answers-7f3k", f"{'x' * 12}.0.{i:016d}"[:31])
        wait_for(lambda: answers(home)["counts"].get("refused forged") == 1000, 60, "every forgery refused")
        took, used, grew = time.monotonic() - began, _cpu_seconds(proc.pid) - cpu, _rss_kib(proc.pid) - rss
        print(f"1000 forged answers: {took:.1f} s, {used:.2f} s of CPU, RSS {grew / 1024:+.1f} MiB")
        assert took < 60 and used < 20, (took, used)
        assert grew < 40 * 1024, f"memory grew {grew} KiB"
        health = status(home)["health"]
        assert health["ok"], health
    kept = journal_rows(home, "SELECT COUNT(*) FROM answers")[0][0]
    assert kept <= 201  # the refused are kept to the newest 200; the count keeps them all
    log = (home.root / "daemon.log").read_text()
    assert log.count("refused") < 20, "a flood is logged once and counted, not a line per forgery"
