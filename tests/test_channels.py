"""The same send/receive cases over every channel (APScheduler runs its suite over every data store):
each channel behind ``routine.person.channels.base.Channel`` against a real HTTP stand-in of its
service (tests/fake_ntfy.py, tests/fake_telegram.py; Apprise's JSON webhook to tests/receiver.py).
A new channel adds its harness to ``HARNESSES``; the cases then hold it to the seam."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Callable

import pytest

from fake_ntfy import FakeNtfy
from fake_telegram import FakeTelegram
from receiver import Receiver
from routine.config.notify import NtfySettings, Priority, TelegramSettings
from routine.person.channels.apprise import AppriseChannel
from routine.person.channels.base import Button, Channel, Incoming, Outgoing
from routine.person.channels.ntfy import NtfyChannel
from routine.person.channels.telegram import TelegramChannel
from waits import scaled, wait_until

CHAT = 4242
TOKEN = "123456:SECRETbotTOKEN"


@dataclass
class Harness:
    channel: Channel
    texts: Callable[[], list[str]]  # what the person has been shown, each message's words
    press: Callable[[str], None] | None  # the person taps the button of this label on the last message
    stop: Callable[[], None]
    dead: Channel  # the same channel pointed at a server that is not there
    connected: Callable[[], bool] = lambda: True  # the reader holds its connection (the stand-in counts it)
    server: object = None  # the stand-in
    refuse: Callable[[bool], None] = lambda on: None  # the stand-in refuses the channel's credentials, or not


def _ntfy() -> Harness:
    server = FakeNtfy(keepalive=0.5)
    channel = NtfyChannel(NtfySettings(server.url, "phone", "answers", ""))
    dead = NtfyChannel(NtfySettings("http://127.0.0.1:9", "phone", "answers", ""))
    return Harness(channel, lambda: [f"{m.get('title')} {m['message']}" for m in server.on("phone")],
                   lambda label: server.press(server.on("phone")[-1], label), server.stop, dead,
                   lambda: server.subscribers > 0, server,
                   lambda on: setattr(server, "token", "tk_other" if on else None))


def _telegram() -> Harness:
    server = FakeTelegram(TOKEN)
    channel = TelegramChannel(TelegramSettings(TOKEN, str(CHAT), server.url))
    dead = TelegramChannel(TelegramSettings(TOKEN, str(CHAT), "http://127.0.0.1:9"))
    return Harness(channel, lambda: [m["text"] for m in server.sent],
                   lambda label: server.press(server.sent[-1], label, CHAT), server.stop, dead,
                   lambda: server.polls > 0, server,
                   lambda on: setattr(server, "token", "999:OTHER" if on else TOKEN))


def _apprise() -> Harness:
    server = Receiver()
    return Harness(AppriseChannel(f"json://127.0.0.1:{server.port}/hook"), server.texts, None,
                   server.server.shutdown, AppriseChannel("json://127.0.0.1:9/hook"))


HARNESSES = {"ntfy": _ntfy, "telegram": _telegram, "apprise": _apprise}


@pytest.fixture(params=sorted(HARNESSES))
def harness(request):
    made = HARNESSES[request.param]()
    yield made
    made.stop()


def _reading(channel: Channel, cursor: str | None = None) -> tuple[list[Incoming], threading.Thread, threading.Event]:
    got: list[Incoming] = []
    stop = threading.Event()

    def deliver(incoming: Incoming) -> str:
        got.append(incoming)
        return "Received."

    thread = threading.Thread(target=channel.receive, args=(stop, deliver, cursor), daemon=True)
    thread.start()
    return got, thread, stop


def test_a_message_reaches_the_person_with_its_title_and_words(harness):
    result = harness.channel.send(Outgoing("k1", "Proposal waiting", "Daily/2026-11-28.md changed", Priority.NORMAL))
    assert result.ok, result.error
    shown = wait_until(lambda: harness.texts(), scaled(10), "the message to arrive")
    assert "Proposal waiting" in shown[-1] and "Daily/2026-11-28.md changed" in shown[-1]


def test_a_server_that_is_not_there_is_one_sentence_and_no_secret(harness):
    result = harness.dead.send(Outgoing("k1", "t", "b", Priority.HIGH))
    assert not result.ok and result.error and "\n" not in result.error
    assert TOKEN not in (result.error or "") and "SECRET" not in (result.error or "")
    assert harness.dead.check() is not None  # `routine doctor` says it too


def test_a_pressed_button_comes_back_as_its_data(harness):
    if not harness.channel.two_way:
        pytest.skip("a one-way channel: its text alone is sent")
    got, thread, stop = _reading(harness.channel)
    buttons = (Button("Approve", "tokenA.0.sig"), Button("Reject", "tokenA.1.sig"))
    assert harness.channel.send(Outgoing("k2", "Proposal", "body", Priority.NORMAL, buttons)).ok
    wait_until(lambda: harness.texts(), scaled(10), "the message")
    _until_connected(harness)
    harness.press("Reject")
    wait_until(lambda: got, scaled(10), "the answer to come back")
    assert got[-1].data == "tokenA.1.sig" and got[-1].foreign is None and got[-1].cursor
    stop.set()
    harness.channel.interrupt()
    thread.join(scaled(5))
    assert not thread.is_alive(), "interrupt ends the blocking read at once"


def test_reading_resumes_after_its_cursor_and_nothing_before_it_comes_again(harness):
    if not harness.channel.two_way:
        pytest.skip("a one-way channel")
    harness.channel.send(Outgoing("k3", "P", "b", Priority.NORMAL, (Button("Approve", "first.0.sig"),)))
    got, thread, stop = _reading(harness.channel)
    _until_connected(harness)
    harness.press("Approve")
    first = wait_until(lambda: got and got[-1], scaled(10), "the first answer")
    stop.set()
    harness.channel.interrupt()
    thread.join(scaled(5))
    again = type(harness.channel)(harness.channel.settings)  # type: ignore[attr-defined]  # a restarted daemon
    harness.channel.send(Outgoing("k4", "P", "b", Priority.NORMAL, (Button("Approve", "second.0.sig"),)))
    harness.press("Approve")
    later, thread, stop = _reading(again, first.cursor)
    wait_until(lambda: later, scaled(10), "the answer given while no one read")
    assert [i.data for i in later] == ["second.0.sig"]
    stop.set()
    again.interrupt()
    thread.join(scaled(5))


def _until_connected(harness: Harness) -> None:
    wait_until(harness.connected, scaled(10), "the reader to hold its connection")


def test_the_unit_and_doctor_know_the_hosts_answers_come_from(tmp_path, monkeypatch):
    """The channels' servers are peers: `routine service install` lets them through the unit's IP
    filter and `doctor`/`status` say when the installed unit does not (routine/host/unitcheck.py)."""
    from routine.config.loader import load_config
    from routine.host.peers import peers
    from routine.person.channels import answering

    monkeypatch.setenv("ROUTINE_STATE_DIR", str(tmp_path / "state"))
    path = tmp_path / "routine.yaml"
    path.write_text("vault: Vault\nmodels:\n  general: ollama_chat/m\nnotify:\n  ntfy:\n    server: http://ntfy.lan:8080\n"
                    "    topic: phone\n    replies: answers\n  telegram:\n    token: \"1:A\"\n    chat: 42\n"
                    "    api: https://tg.example.org\n")
    config = load_config(path)
    found = {p.host: p.what for p in peers(config)}
    assert found["ntfy.lan"] == "notify (ntfy, with answers)"
    assert found["tg.example.org"] == "notify (telegram, with answers)"
    assert [c.name for c in answering(config.notify)] == ["ntfy", "telegram"]
    path.write_text("vault: Vault\nmodels:\n  general: ollama_chat/m\n")  # none configured: no reader, no peer
    quiet = load_config(path)
    assert not answering(quiet.notify) and not quiet.notify.answers
    assert not [p for p in peers(quiet) if p.what.startswith("notify")]


def test_a_reply_typed_in_telegram_names_the_message_it_answers_and_another_chat_is_marked():
    harness = _telegram()
    try:
        got, thread, stop = _reading(harness.channel)
        assert harness.channel.send(Outgoing("k5", "Which meeting matters?", "A or B", Priority.NORMAL,
                                             typed=True)).ok
        _until_connected(harness)
        server = harness.server
        server.reply(server.sent[-1], "B, the budget one", CHAT)
        server.reply(server.sent[-1], "A", 999)
        wait_until(lambda: len(got) == 2, scaled(10), "both replies")
        mine, theirs = got
        assert (mine.text, mine.in_reply_to, mine.foreign) == ("B, the budget one", str(server.sent[-1]["message_id"]),
                                                               None)
        assert theirs.foreign == "it came from chat 999, not the configured chat"
        stop.set()
        harness.channel.interrupt()
        thread.join(scaled(5))
    finally:
        harness.stop()


def test_a_reader_refused_for_a_while_says_so_once_and_once_more_when_it_reads_again(harness, monkeypatch):
    from routine.person.channels import reading

    if not harness.channel.two_way:
        pytest.skip("a one-way channel reads nothing")
    monkeypatch.setattr(reading, "FIRST", 0.01)
    told: list[str | None] = []
    harness.refuse(True)
    stop = threading.Event()
    thread = threading.Thread(target=harness.channel.receive, args=(stop, lambda i: "", None, told.append),
                              daemon=True)
    thread.start()
    wait_until(lambda: told, scaled(10), "the lasting failure to be told")
    assert len(told) == 1 and told[0] and "answered 40" in told[0] and "SECRET" not in told[0], told
    harness.refuse(False)
    # Telegram's long poll answers when an update comes (or after its timeout): the person taps one.
    assert harness.channel.send(Outgoing("k6", "P", "b", Priority.NORMAL, (Button("OK", "again.0.sig"),))).ok
    harness.press("OK")
    wait_until(lambda: len(told) == 2, scaled(10), "reading again to be told")
    assert told[1] is None
    stop.set()
    harness.channel.interrupt()
    thread.join(scaled(5))


def test_the_readmes_phone_examples_load_as_written(tmp_path, monkeypatch):
    import re
    from pathlib import Path

    from routine.config.loader import load_config
    from routine.person.channels import answering

    monkeypatch.setenv("ROUTINE_STATE_DIR", str(tmp_path / "state"))
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    section = readme.split("#### Approving from the phone", 1)[1].split("\n### ", 1)[0]
    blocks = re.findall(r"```yaml\n(.*?)```", section, re.S)
    assert len(blocks) == 2
    made = []
    for block in blocks:
        path = tmp_path / "routine.yaml"
        path.write_text("vault: Vault\nmodels:\n  general: ollama_chat/m\n" + block)
        made += [c.name for c in answering(load_config(path).notify)]
    assert made == ["ntfy", "telegram"]
