"""Secrets stay in routine.yaml: a notification URL of every kind (the token in the host, the path,
the query, a user and password) and a calendar URL with a password and a private path are used —
`notify test`, `notify list --json`, a dry run, the daemon firing the 07:30 block with the calendar
failing, an alert sent to the phone — and then everything routine wrote or sent is searched for
them: the vault, the state folder (journal, index), the logs, the commands' output, what the
notification receiver got and what the model was asked. None is found. Real Apprise, a real
receiver, the stand-in Ollama, the real daemon."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from calendar_server import refuse, serving
from receiver import Receiver
from test_daemon import daemon

SECRETS = ["HookPathQx7", "NtfyPassWv3", "NtfyTopicZk9", "TgTokenRb4", "PoUserKey8m", "PoTokenJs2",
           "PbTokenYh6", "SlackAaa5T", "SlackBbb6T", "SlackCcc7T", "MailPassNn1", "CalPassGg2", "CalPathHh3",
           "CalKeyKk4"]


def notify_urls(port: int) -> list[str]:
    return [f"json://127.0.0.1:{port}/hook-HookPathQx7", f"ntfy://me:NtfyPassWv3@127.0.0.1:{port}/NtfyTopicZk9",
            "tgram://123456789:TgTokenRb4-abcdefghijklmnopqrstuvwxyzAB/4242", "pover://PoUserKey8m@PoTokenJs2",
            "pbul://PbTokenYh6", "slack://SlackAaa5T/SlackBbb6T/SlackCcc7T",
            "mailtos://me:MailPassNn1@127.0.0.1:9?to=me@example.com"]


@pytest.fixture
def failing_calendar():
    with serving(refuse) as base:
        yield base.replace("http://", "http://me:CalPassGg2@") + "/private-CalPathHh3/basic.ics?key=CalKeyKk4"


def found_in(root: Path) -> list[str]:
    """Each 'file: secret' under ``root`` (binary files too: SQLite, the index)."""
    hits = []
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink() and path.name != "routine.yaml":
            data = path.read_bytes()
            hits += [f"{path}: {s}" for s in SECRETS if s.encode() in data]
    return hits


def test_no_secret_of_a_notification_or_calendar_url_is_written_or_sent_anywhere(initialised, ollama,
                                                                                failing_calendar):
    home = initialised
    receiver = Receiver()
    try:
        urls = ", ".join(f"'{u}'" for u in notify_urls(receiver.port))
        home.config.write_text(home.config.read_text() + f"\nnotify: {{urls: [{urls}], on: [alerts]}}\n"
                               f"calendars: [{{source: '{failing_calendar}', name: family}}]\n")
        outputs = [home.run("notify", "test", "--json"), home.run("notify", "test")]
        outputs.append(home.run("fire", "morning-alignment", "--dry-run", "--debug"))
        with daemon(home):
            outputs.append(home.run("fire", "morning-alignment"))
            outputs.append(home.run("search", "calendar family unreadable", "--json"))
        outputs.append(home.run("notify", "list", "--json"))
        said = [o.stdout + o.stderr for o in outputs]
        shown = json.loads(outputs[0].stdout)
        assert {r["url"] for r in shown} >= {f"json://127.0.0.1:{receiver.port}", "tgram://…", "pover://…",
                                              "pbul://…", "slack://…"}
        assert any("family" in p.name for p in (home.vault / "Alerts").glob("*calendar*"))
        asked = json.dumps(ollama.requests)
        assert "The calendar family could not be read" in asked
        assert receiver.got, "the alert reached the phone"
        sent = " ".join(r.text for r in receiver.got)
    finally:
        receiver.stop()
    leaks = found_in(home.vault) + found_in(home.state) + found_in(home.root / "run") \
        + [f"daemon log: {s}" for s in SECRETS if s in (home.root / "daemon.log").read_text()] \
        + [f"output: {s}" for s in SECRETS for text in said if s in text] \
        + [f"notification: {s}" for s in SECRETS if s in sent and s != "NtfyTopicZk9"] \
        + [f"prompt: {s}" for s in SECRETS if s in asked]  # (an ntfy server is told its own topic)
    assert leaks == []


NAMELESS = ["TokQq1Secret", "FamPwZz2", "IcloudTok3Rr"]


def test_a_calendar_without_a_name_is_named_without_the_secrets_of_its_url(initialised, ollama):
    """A calendar without `name:` was named after the end of its URL: `private.ics?token=…`, the
    `fam-PW@host` of a URL without a path, the token of an iCloud-style `/published/2/TOKEN`. Now
    its name is the host and a short hash: no part of the URL that carries a secret reaches doctor,
    the dry run, the log, the prompt, the journal or an alert's file name and text."""
    home = initialised
    with serving(refuse) as base:
        host = base.removeprefix("http://")
        sources = [f"{base}/private.ics?token=TokQq1Secret", f"http://fam-FamPwZz2@{host}",
                   f"{base}/published/2/IcloudTok3Rr"]
        home.config.write_text(home.config.read_text() + "\ncalendars: [" + ", ".join(f"'{s}'" for s in sources)
                               + "]\n")
        outputs = [home.run("doctor"), home.run("--debug", "fire", "morning-alignment", "--dry-run"),
                   home.run("--debug", "fire", "morning-alignment")]
    said = "\n".join(o.stdout + o.stderr for o in outputs)
    assert outputs[0].stdout.count("FAIL calendar 127.0.0.1-") == 3, outputs[0].stdout  # each tried and named
    assert "could not be read" in outputs[1].stdout + outputs[1].stderr
    alerts = sorted(p.name for p in (home.vault / "Alerts").glob("*calendar*"))
    assert alerts, "an unreadable calendar is an alert"
    asked = json.dumps(ollama.requests)
    assert "could not be read" in asked
    leaks = [f"{p}: {s}" for p in [*(home.vault / "Alerts").iterdir(), *home.state.rglob("*"), *home.vault.rglob("*")]
             if p.is_file() for s in NAMELESS if s.encode() in p.read_bytes() or s in p.name] \
        + [f"output: {s}" for s in NAMELESS if s in said] + [f"prompt: {s}" for s in NAMELESS if s in asked] \
        + [f"alert name: {s}" for s in ["fam-", "private", "published"] for a in alerts if s in a]
    assert leaks == []
