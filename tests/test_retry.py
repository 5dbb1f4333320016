"""Resuming work: `routine runs retry ID` picks a failed block up at its failed step, reusing
the earlier steps' outputs; a block's `retry:` policy tries a passing failure again by itself."""

from __future__ import annotations

import json
import os
import textwrap
from datetime import datetime

import pytest

ALWAYS_SUBPROCESS = os.environ.get("ROUTINE_TEST_SUBPROCESS") == "1"

TWO_STEPS = textwrap.dedent("""\
    blocks:
      two-steps:
        cron: "0 3 * * *"
        {retry}
        steps:
          - agent: strategist
            task: Pick today's focus.
            write: {{note: "Daily/{{{{ today }}}}.md", section: "Alignment"}}
          - agent: planner
            task: "Plan the day around this focus: {{{{ steps.strategist.output }}}}"
            write: {{note: "Daily/{{{{ today }}}}.md", section: "Plan"}}
    """)


def only_schedule(home, retry: str = "") -> None:
    folder = home.config.parent / "schedules"
    for f in folder.glob("*.yaml"):
        f.unlink()
    (folder / "test.yaml").write_text(TWO_STEPS.format(retry=retry))


class PlannerFails:
    """The stand-in Ollama answers the strategist, and fails the planner while ``failures`` last."""

    def __init__(self, ollama, failures: int):
        self.failures, self.strategist_calls, self.planner_prompts = failures, 0, []
        ollama.reply_fn = self

    def __call__(self, model, messages):
        user = messages[-1]["content"] if isinstance(messages[-1]["content"], str) else str(messages[-1]["content"])
        if "Plan the day" not in user:
            self.strategist_calls += 1
            return "1. Ship the pricing page FOCUS-7731"  # a code, no figure: nothing for the grounding check
        self.planner_prompts.append(user)
        if self.failures > 0:
            self.failures -= 1
            return {"error": (503, "Ollama is restarting")}
        return "- 09:00 pricing page"


def runs(home) -> list[dict]:
    return json.loads(home.run("runs", "list", "-n", "50", "--json", check=True).stdout)


def test_retry_resumes_a_failed_block_at_its_failed_step_with_the_earlier_output(initialised, ollama):
    home = initialised
    only_schedule(home)
    model = PlannerFails(ollama, failures=1000)
    failed = home.run("fire", "two-steps")
    assert failed.returncode == 1
    block = next(r for r in runs(home) if r["kind"] == "block")
    assert block["status"] == "failed" and model.strategist_calls == 1

    model.failures = 0  # Ollama is back
    retried = home.run("runs", "retry", block["id"][:-1])  # a unique prefix will do
    assert retried.returncode == 0, retried.stderr
    assert "Wrote Plan in Daily/" in retried.stdout
    assert model.strategist_calls == 1  # the strategist's step was not run again
    assert "FOCUS-7731" in model.planner_prompts[-1]  # its journaled output fed the planner
    after = runs(home)
    assert [r["id"] for r in after if r["kind"] == "block"] == [block["id"]]  # the same block run
    again = next(r for r in after if r["id"] == block["id"])
    assert again["status"] == "ok" and again["error"] is None
    note = next((home.vault / "Daily").glob("*.md")).name
    assert again["wrote"] == [f"Daily/{note}", f"Daily/{note}"]  # the earlier step's write, then the new one
    steps = [r for r in after if r["parent"] == block["id"]]
    assert sorted((r["step"], r["status"]) for r in steps) == [(0, "ok"), (1, "failed"), (1, "ok")]
    assert next(r for r in steps if r["status"] == "ok" and r["step"] == 1)["trigger"] == "retry"
    daily = next((home.vault / "Daily").glob("*.md")).read_text()
    assert "FOCUS-7731" in daily and "09:00 pricing page" in daily

    refused = home.run("runs", "retry", block["id"])  # it ended well now: nothing to resume
    assert refused.returncode == 2 and "only a failed or interrupted one is resumed" in refused.stderr


def test_retry_of_a_one_off_run_says_to_fire_it_again(initialised, ollama):
    home = initialised
    home.run("fire", "strategist", env_extra={"OLLAMA_HOST": "http://127.0.0.1:9"})
    run = runs(home)[0]
    proc = home.run("runs", "retry", run["id"])
    assert proc.returncode == 2
    assert "is a one-off run of strategist, not a block" in proc.stderr and "routine fire strategist" in proc.stderr


def test_a_retry_policy_tries_a_passing_failure_again_under_the_same_block_run(initialised, ollama):
    home = initialised
    only_schedule(home, retry="retry: {attempts: 3, backoff: 0.1s}")
    # The first attempt fails through every client retry and fallback; the second succeeds.
    PlannerFails(ollama, failures=_calls_of_one_failed_attempt(home, ollama))
    proc = home.run("fire", "two-steps")
    assert proc.returncode == 0, proc.stderr
    block = next(r for r in runs(home) if r["kind"] == "block" and r["status"] == "ok")
    steps = [r for r in runs(home) if r["parent"] == block["id"]]
    assert sorted((r["step"], r["status"]) for r in steps) == [(0, "ok"), (1, "failed"), (1, "ok")]
    second = next(r for r in steps if r["step"] == 1 and r["status"] == "ok")
    assert second["details"]["attempt"] == 2
    assert not list((home.vault / "Alerts").glob("*planner*.md"))  # a failure retried is not an alert
    shown = home.run("runs", "show", block["id"], check=True).stdout
    assert "planner ok" in shown and "attempt 2" in shown


def test_a_retry_policy_gives_up_after_its_attempts_and_alerts_once(initialised, ollama):
    home = initialised
    only_schedule(home, retry="retry: {attempts: 2, backoff: 0.1s}")
    PlannerFails(ollama, failures=1000)
    proc = home.run("fire", "two-steps")
    assert proc.returncode == 1
    block = next(r for r in runs(home) if r["kind"] == "block")
    steps = [r for r in runs(home) if r["parent"] == block["id"]]
    assert sorted((r["step"], r["status"]) for r in steps) == [(0, "ok"), (1, "failed"), (1, "failed")]
    assert len(list((home.vault / "Alerts").glob("*planner failed*.md"))) == 1


def test_a_bad_retry_policy_is_a_config_error_with_its_line(initialised):
    home = initialised
    only_schedule(home, retry="retry: {attempts: 0}")
    proc = home.run("schedule", "validate")
    assert proc.returncode == 2 and "test.yaml:4: At 'blocks.two-steps.retry.attempts'" in proc.stderr


def _calls_of_one_failed_attempt(home, ollama) -> int:
    """How many model calls one failed step makes (client retries, fallbacks), measured."""
    probe = PlannerFails(ollama, failures=1000)
    only_schedule(home)
    home.run("fire", "two-steps")
    calls = len(probe.planner_prompts)
    for f in (home.vault / "Alerts").glob("*.md"):
        f.unlink()
    for f in (home.vault / "Daily").glob("*.md"):
        f.unlink()
    only_schedule(home, retry="retry: {attempts: 3, backoff: 0.1s}")
    return calls


class Clock:
    """The runners' clock (``routine.runner.step.local_now``), set by the test: day D, then D+1."""

    def __init__(self, monkeypatch, at: datetime):
        self.at = at
        monkeypatch.setattr("routine.runner.step.local_now", lambda config: self.at)

    def __call__(self):
        return self.at


DAY = datetime(2026, 3, 2, 23, 50).astimezone()  # a Monday, late: the retry comes the next day
NEXT = datetime(2026, 3, 3, 9, 0).astimezone()


@pytest.mark.skipif(ALWAYS_SUBPROCESS, reason="the clock is set in this process")
def test_a_block_retried_the_next_day_finishes_the_note_of_its_own_day(initialised, ollama, monkeypatch):
    home = initialised
    only_schedule(home)
    clock = Clock(monkeypatch, DAY)
    model = PlannerFails(ollama, failures=1000)
    assert home.run("fire", "two-steps").returncode == 1
    block = next(r for r in runs(home) if r["kind"] == "block")

    clock.at, model.failures = NEXT, 0  # the next morning, Ollama is back
    retried = home.run("runs", "retry", block["id"])
    assert retried.returncode == 0, retried.stderr
    assert "Wrote Plan in Daily/2026-03-02.md" in retried.stdout
    day = (home.vault / "Daily" / "2026-03-02.md").read_text()
    assert "FOCUS-7731" in day and "09:00 pricing page" in day
    assert not (home.vault / "Daily" / "2026-03-03.md").exists()  # the next day's note was not begun


@pytest.mark.skipif(ALWAYS_SUBPROCESS, reason="the clock is set in this process")
def test_an_attempt_after_midnight_still_writes_the_blocks_own_day(initialised, ollama, monkeypatch):
    home = initialised
    only_schedule(home, retry="retry: {attempts: 2, backoff: 0.1s}")
    clock = Clock(monkeypatch, DAY)
    model = PlannerFails(ollama, failures=_calls_of_one_failed_attempt(home, ollama))
    fail = model.__call__

    def midnight_passes(name, messages):  # the planner's first attempt fails just before midnight
        answer = fail(name, messages)
        if isinstance(answer, dict):
            clock.at = NEXT
        return answer

    ollama.reply_fn = midnight_passes
    proc = home.run("fire", "two-steps")
    assert proc.returncode == 0, proc.stderr
    assert clock.at == NEXT  # the second attempt ran on the next day
    day = (home.vault / "Daily" / "2026-03-02.md").read_text()
    assert "FOCUS-7731" in day and "09:00 pricing page" in day
    assert not (home.vault / "Daily" / "2026-03-03.md").exists()
