"""A run's events are typed (routine.runner.events): what the daemon learns from them, and what
crosses the control socket, field for field."""

from __future__ import annotations

import dataclasses
import json
from datetime import datetime, timezone

import pytest

from routine.daemon.run_events import RunEvents
from routine.journal.status import RunStatus
from routine.runner import events as ev
from routine.vault.writer import WriteOutcome

SAMPLES = [
    ev.BlockStarted("20260105-070000-aaaa", "morning-alignment", 2),
    ev.BlockStep("20260105-070000-aaaa", "morning-alignment", 0, ("planner",)),
    ev.StepStarted("20260105-070001-bbbb", "strategist", "mistral:7b-instruct-q4_K_M"),
    ev.Phase("20260105-070001-bbbb", "loading mistral:7b-instruct-q4_K_M"),
    ev.Token("20260105-070001-bbbb", "Plan: "),
    ev.ToolsUsed("20260105-070001-bbbb", RunStatus.OK, "done", None, 3, 2, 1),
    ev.Wrote("20260105-070001-bbbb", "Daily/2026-01-05.md", WriteOutcome.CREATED,
             "Wrote Strategist in Daily/2026-01-05.md."),
    ev.StepFailed("20260105-070001-bbbb", RunStatus.FAILED, "Ollama is not answering.", "Alerts/Ollama down.md"),
    ev.Retrying("20260105-070000-aaaa", "strategist", 2, 3, 0.5, "Ollama is not answering."),
    ev.Indexing("embedding", 10, 40),
    ev.IndexProgress("embedding", 10, 40),
    ev.Queued(2),
    ev.Asked("20260105-070001-bbbb", "q-3f2a9c", "Which meeting matters more today?", "2026-01-05T09:00:00+00:00"),
]


def test_every_event_kind_has_a_sample():
    assert sorted(type(e).kind for e in SAMPLES) == sorted(ev.EVENTS)


@pytest.mark.parametrize("event", SAMPLES, ids=lambda e: type(e).kind)
def test_each_event_crosses_the_control_socket_whole(event):
    line = json.loads(json.dumps(event.to_json()))  # as the daemon sends it and the CLI reads it
    assert line["event"] == type(event).kind
    assert set(line) == {"event", *(f.name for f in dataclasses.fields(event))}  # no field dropped
    assert ev.from_json(line) == event


def test_the_wire_format_is_the_one_the_cli_already_reads():
    assert ev.StepStarted("r1", "planner", "m").to_json() == {
        "event": "start",
        "run": "r1",
        "agent": "planner",
        "model": "m",
    }
    assert json.loads(json.dumps(ev.BlockStep("r0", "b", 1, ("critic", "scribe")).to_json())) == {
        "event": "step", "run": "r0", "block": "b", "index": 1, "after": ["critic", "scribe"]}
    assert ev.Queued(3).to_json() == {"event": "queued", "ahead": 3}


def test_an_event_of_a_newer_daemon_is_passed_over():
    assert ev.from_json({"event": "something-new", "run": "x"}) is None


def test_the_forecast_learns_from_a_typed_block_step(initialised, monkeypatch):
    """A block's job holds the models of its steps still to come: when its second step starts,
    the first step's model is no longer needed now, the later one's is."""
    for key, value in initialised.env.items():
        monkeypatch.setenv(key, value)
    from routine.daemon.live import Live
    from routine.daemon.residency import Residency
    from routine.daemon.work import Work, WorkQueue

    now = datetime(2026, 1, 7, 3, 17, tzinfo=timezone.utc)  # no scheduled step at this minute
    live, queue = Live(), WorkQueue(workers=1)
    residency = Residency(live, queue, lambda: now)
    try:
        general, = residency.keys_for_agents(["strategist"])
        analyst, = residency.keys_for_agents(["critic"])
        work = Work(key="block:test", label="test", models=residency.keys_for_agents(["strategist", "critic"]))
        queue.submit(work)
        assert residency.forecast(general, now) == now and residency.forecast(analyst, now) == now
        heard: list[ev.RunEvent] = []
        listen = RunEvents(residency.keys_for_agents, lambda: None, lambda: None).listener(work, heard.append)

        listen(ev.BlockStep("r0", "test", 1, ("critic",)))  # the strategist's step is done

        assert residency.forecast(analyst, now) == now
        assert residency.forecast(general, now) != now  # its next use is the schedule's, later
        assert heard == [ev.BlockStep("r0", "test", 1, ("critic",))]  # the caller hears it too
    finally:
        residency.stop()


def test_a_failed_or_written_step_tells_the_monitor_and_the_graph():
    checks, finished = [], []
    listen = RunEvents(lambda names: (), lambda: checks.append(1), lambda: finished.append(1)).listener()
    listen(ev.StepFailed("r1", RunStatus.FAILED, "Ollama is not answering.", None))
    listen(ev.Wrote("r2", "Daily/x.md", WriteOutcome.CREATED, "Wrote."))
    listen(ev.Token("r2", "x"))
    assert (len(checks), len(finished)) == (1, 2)

