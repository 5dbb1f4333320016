"""Notifications outside the vault, through real Apprise to a real local HTTP receiver (an
ntfy-style server and a JSON webhook): what arrived, how often, and when quiet hours hold it."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from receiver import Receiver

BERLIN = ZoneInfo("Europe/Berlin")


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.stop()


def with_notify(home, receiver, extra: str = "") -> None:
    urls = f"[ntfy://127.0.0.1:{receiver.port}/routine, json://127.0.0.1:{receiver.port}/hook]"
    home.config.write_text(home.config.read_text() + f"\ntimezone: Europe/Berlin\nnotify: {{urls: {urls}{extra}}}\n")


@pytest.fixture
def config(initialised, receiver, monkeypatch):
    from routine.config.loader import load_config

    with_notify(initialised, receiver, ", quiet_hours: '22:00-07:00'")
    for key, value in initialised.env.items():
        if key.startswith("ROUTINE_"):
            monkeypatch.setenv(key, value)
    return load_config(str(initialised.config))


def test_notify_test_reaches_an_ntfy_server_and_a_webhook_and_names_a_dead_one(initialised, receiver):
    home = initialised
    with_notify(home, receiver)
    done = home.run("notify", "test", check=True)
    assert done.stdout.count(": sent") == 2
    assert [r.path for r in receiver.got] == ["/", "/hook"]
    assert all("routine can reach you here" in text for text in receiver.texts())
    home.config.write_text(home.config.read_text().replace(f"127.0.0.1:{receiver.port}/hook", "127.0.0.1:9/hook"))
    dead = home.run("notify", "test", "--json")
    said = {r["url"]: r for r in json.loads(dead.stdout)}
    assert dead.returncode == 1 and said["json://127.0.0.1:9"]["ok"] is False
    assert "Connection error" in said["json://127.0.0.1:9"]["error"]


def test_notify_test_without_urls_says_how_to_add_one(initialised):
    done = initialised.run("notify", "test")
    assert done.returncode == 2 and "No notification URLs are set" in done.stderr and "notify:" in done.stderr


def test_an_alert_notifies_once_per_cause_and_once_when_it_resolves(config, receiver):
    from routine.person import notifications
    from routine.person.alerts import raise_alert, resolve_alerts

    at = datetime(2026, 11, 24, 9, 0, tzinfo=BERLIN)
    for i in range(3):
        raise_alert(
            config,
            at + timedelta(minutes=i),
            "Ollama unreachable at http://h:11434",
            "Ollama is not reachable.",
            "start it.",
            cause="ollama:http://h:11434",
            affected=f"block-{i}",
        )
    resolve_alerts(config, at + timedelta(minutes=5), "ollama:http://h:11434", "Ollama answers again.")
    assert notifications.flush()
    texts = receiver.texts()
    assert len(texts) == 4, texts  # two services, two messages each: the alert and its resolution
    assert sum("Ollama unreachable at http://h:11434" in t and "start it." in t for t in texts) == 2
    assert sum("Resolved: Ollama unreachable" in t and "Ollama answers again." in t for t in texts) == 2


def test_quiet_hours_hold_a_message_until_they_end(config, receiver):
    from routine.person import notifications
    from routine.person.alerts import raise_alert

    night = datetime(2026, 11, 24, 23, 30, tzinfo=BERLIN)
    raise_alert(config, night, "The vault is not writable", "Writing failed.", cause="vault:/v")
    assert notifications.flush() and receiver.got == []
    assert notifications.deliver_held(config, night + timedelta(hours=7)) == 0  # 06:30: still quiet
    assert notifications.deliver_held(config, night + timedelta(hours=8)) == 1  # 07:30
    assert notifications.flush()
    assert len(receiver.got) == 2 and all("The vault is not writable" in t for t in receiver.texts())
    assert notifications.deliver_held(config, night + timedelta(hours=9)) == 0  # sent once


def test_a_proposal_waiting_notifies_once_and_a_failing_url_never_fails_the_run(initialised, ollama, receiver):
    home = initialised
    with_notify(home, receiver)
    text = home.config.read_text()
    home.config.write_text(text.replace("ntfy://127.0.0.1", "ntfy://127.0.0.1:9/x, ntfy://127.0.0.1", 1))
    out = home.run("fire", "builder", process=True, check=True).stdout  # a fresh process: sent before it exits
    assert "need your approval" in out
    texts = receiver.texts()
    assert len(texts) == 2 and all("builder proposes a change to Builds/" in t and "Drafts/" in t for t in texts)
    listed = json.loads(home.run("notify", "list", "--json", check=True).stdout)
    assert listed["counts"] == {"failed": 1}  # one message, one URL of three refused: counted, not fatal
    assert "127.0.0.1:9" in listed["recent"][0]["error"]


def test_a_blocks_note_is_sent_with_its_first_lines_when_named_in_ready(initialised, ollama, receiver, monkeypatch):
    from routine.config.loader import load_config
    from routine.daemon.ready import ready
    from routine.person import notifications
    from routine.runner.block import BlockOutcome
    from routine.runner.step import StepOutcome
    from routine.vault.writer import WriteResult

    home = initialised
    with_notify(home, receiver, ", ready: [morning]")
    for key, value in home.env.items():
        if key.startswith("ROUTINE_"):
            monkeypatch.setenv(key, value)
    (home.vault / "Daily").mkdir(exist_ok=True)
    (home.vault / "Daily" / "2026-11-24.md").write_text(
        "---\ntype: daily\n---\n## Alignment\n%% routine:begin x %%\nShip the shed plan first.\n%% routine:end x %%\n")
    config = load_config(str(home.config))
    wrote = WriteResult("Daily/2026-11-24.md", "section", None, "wrote")
    done = BlockOutcome("r1", "ok", [StepOutcome("s1", "ok", wrote=wrote)])
    now = datetime(2026, 11, 24, 7, 40, tzinfo=BERLIN)
    ready(config, "morning", "2026-11-24T06:30Z", done, now)
    ready(config, "morning", "2026-11-24T06:30Z", done, now)  # the same slot: once
    ready(config, "evening", "2026-11-24T16:30Z", done, now)  # not named in ready
    assert notifications.flush()
    texts = receiver.texts()
    assert len(texts) == 2 and all("Daily/2026-11-24.md is ready" in t for t in texts)
    assert all("## Alignment" in t and "Ship the shed plan first." in t and "routine:begin" not in t for t in texts)


def quiet_window_ahead(now: datetime, hours: int = 3) -> tuple[datetime, datetime]:
    """Quiet hours of two hours beginning a whole minute some ``hours`` after ``now`` (Berlin)."""
    start = (now.astimezone(BERLIN) + timedelta(hours=hours)).replace(second=0, microsecond=0) + timedelta(minutes=1)
    return start, start + timedelta(hours=2)


@pytest.mark.daemon(budget=150)
def test_with_the_daemon_an_outage_a_proposal_and_a_persons_task_each_notify_once_and_quiet_hours_hold(
        initialised, ollama, receiver, driven_clock):
    from test_daemon import daemon, only_schedule, settled_as, wait_for
    from test_recovery import FAKE_EMBEDDINGS

    home = initialised
    quiet_from, quiet_to = quiet_window_ahead(driven_clock.now())  # the daemon's clock is outside them now
    with_notify(home, receiver, f", quiet_hours: '{quiet_from:%H:%M}-{quiet_to:%H:%M}'")
    home.config.write_text(home.config.read_text() + FAKE_EMBEDDINGS)
    only_schedule(home, "triggers: []\n")
    home.run("project", "new", "Garden Shed", check=True)
    ollama.stop()
    with daemon(home):
        receiver.wait_for(lambda ts: sum("Ollama" in t for t in ts) >= 2, 60, "the outage's message")
        ollama.start()
        receiver.wait_for(lambda ts: sum("Resolved:" in t for t in ts) >= 2, 60, "the resolution's message")
        rel = "Projects/Garden Shed/Garden Shed.md"
        homenote = home.vault / rel
        homenote.write_text(homenote.read_text() + "\n- [ ] Buy the hinges [assignee:: [[Ada]]] 📅 2026-12-01\n")
        receiver.wait_for(lambda ts: any("Task for Ada: Buy the hinges" in t for t in ts), 30, "the task message")
        homenote.write_text(homenote.read_text() + "\nThe shed goes behind the pear tree.\n")  # saved again
        wait_for(lambda: settled_as(home, rel).count("modified") >= 2, 30, "the second save to settle")
        topics = [r["topic"] for r in json.loads(home.run("notify", "list", "--json", check=True).stdout)["recent"]]
        assert topics.count("tasks") == 1, topics
        outage = [t for t in receiver.texts() if "Ollama" in t and "Resolved" not in t]
        assert len(outage) == 2, receiver.texts()  # one message (two services), however long the outage
        assert sum("Resolved:" in t for t in receiver.texts()) == 2
        tasks = [t for t in receiver.texts() if "Task for Ada" in t]
        assert len(tasks) == 2 and all("due 2026-12-01" in t for t in tasks)

        # A proposal waiting: the builder proposes (a fire the daemon runs), the person is told once.
        fired = home.run("fire", "builder", check=True)
        assert "need your approval" in fired.stdout
        receiver.wait_for(lambda ts: sum("builder proposes" in t for t in ts) >= 2, 30, "the proposal's message")
        proposal = [t for t in receiver.texts() if "builder proposes a change to Builds/" in t]
        assert len(proposal) == 2 and all("Drafts/" in t and "Waiting for you" in t for t in proposal)

        # Quiet hours, by the daemon's clock: a new task for Ada is held, then sent when they end.
        log = home.root / "daemon.log"
        moves = log.read_text().count("test clock:")
        driven_clock.move_to(quiet_from + timedelta(minutes=1))
        wait_for(lambda: log.read_text().count("test clock:") > moves, 30, "the daemon to see its clock move")
        homenote.write_text(homenote.read_text() + "\n- [ ] Paint the door [assignee:: [[Ada]]]\n")

        def painted() -> list[dict]:
            recent = json.loads(home.run("notify", "list", "--json", check=True).stdout)["recent"]
            return [r for r in recent if "Paint the door" in r["title"]]
        assert wait_for(painted, 30, "the held task")[0]["status"] == "held"
        assert not any("Paint the door" in t for t in receiver.texts())
        moves = log.read_text().count("test clock:")
        driven_clock.move_to(quiet_to + timedelta(minutes=1))
        wait_for(lambda: log.read_text().count("test clock:") > moves, 30, "the daemon to see its clock move")
        receiver.wait_for(lambda ts: sum("Task for Ada: Paint the door" in t for t in ts) >= 2, 30,
                          "the held task, once quiet hours are over")
        wait_for(lambda: painted()[0]["status"] == "sent", 30, "the held task recorded as sent")

        topics = [r["topic"] for r in json.loads(home.run("notify", "list", "--json", check=True).stdout)["recent"]]
        assert sorted(topics) == ["alerts", "alerts", "proposals", "tasks", "tasks"], topics
        texts = receiver.texts()
        assert sum("builder proposes" in t for t in texts) == 2  # the proposal: once, to each service
        assert sum("Task for Ada" in t for t in texts) == 4  # two tasks, each once, to each service
        assert len(texts) == 10, texts


def test_notify_on_written_plainly_is_read_as_meant_and_bad_quiet_hours_are_located(initialised):
    home = initialised
    text = home.config.read_text()
    home.config.write_text(text + "\nnotify:\n  urls: [json://127.0.0.1:9/x]\n  on: [alerts]\n")
    assert home.run("schedule", "list").returncode == 0  # YAML 1.1 reads `on` as true: taken as meant
    home.config.write_text(text + "\nnotify:\n  urls: [json://127.0.0.1:9/x]\n  on: [alert]\n")
    bad = home.run("schedule", "list")  # `all` (the default) or a list of kinds: the wrong one named, with the kinds
    assert bad.returncode == 2 and "'alert' is not one of 'alerts', 'proposals'" in bad.stderr, bad.stderr
    home.config.write_text(text + "\nnotify:\n  urls: [json://127.0.0.1:9/x]\n  quiet_hours: '25:00-07:00'\n")
    bad = home.run("schedule", "list")
    assert bad.returncode == 2 and "notify.quiet_hours" in bad.stderr and "two times of day" in bad.stderr


def test_an_outage_is_sent_high_its_resolution_low_each_with_a_link_that_opens_the_note(config, receiver):
    from routine.person import notifications
    from routine.person.alerts import raise_alert, resolve_alerts

    at = datetime(2026, 11, 24, 9, 0, tzinfo=BERLIN)
    rel = raise_alert(config, at, "Ollama unreachable at http://h:11434", "Ollama is not reachable.", "start it.",
                      cause="ollama:http://h:11434")
    resolve_alerts(config, at + timedelta(minutes=5), "ollama:http://h:11434", "Ollama answers again.")
    assert notifications.flush()
    ntfy = [r.headers.get("X-Priority") for r in receiver.got if r.path == "/"]
    assert ntfy == ["high", "low"], ntfy  # ntfy's own scale
    hook = [json.loads(r.body) for r in receiver.got if r.path == "/hook"]
    assert [m["type"] for m in hook] == ["warning", "info"]  # a service without priorities: Apprise's kind
    link = f"obsidian://open?vault={config.vault.name}&file={rel[:-3].replace('/', '%2F').replace(' ', '%20')}"
    assert all(link in text for text in receiver.texts()), (link, receiver.texts())
