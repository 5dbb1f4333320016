"""Advice that becomes a change (issue 40): the weekly Watcher's **Fix first** names changes to an
agent note in `change` blocks; each is queued, tried by the daemon in its trials window on the
agent's real runs (the stand-in Ollama answers the variants), and only the one that did better
is proposed, with its figures; approving it changes the agent note, and the worse one never
lands. `routine agent try` while the daemon runs queues its variant for the same window."""

from __future__ import annotations

import sqlite3
import textwrap
from datetime import datetime, timedelta, timezone

import pytest

from receiver import Receiver
from routine.vault.frontmatter import parse_frontmatter
from test_daemon import daemon, journal_rows, only_schedule, wait_for
from test_prompt_trials import planner_ran_twice_and_was_rewritten, variant
from test_prompt_trials import reply as planner_reply

ADVICE = textwrap.dedent("""\
    **Fix first**
    1. The Planner's plans held more than the day.

    ```change
    agent: planner
    why: The plans held more than the day
    add: VARIANT-BETTER: plan the day in two blocks at most.
    ```

    ```change
    agent: Planner
    why: Looser plans
    add: "VARIANT-WORSE: plan loosely."
    ```

    ```change
    agent: nobody
    add: Be better.
    ```

    ```change
    agent: critic
    why: Sharper challenges
    add: Name one risk per plan.
    ```
    """)


def team_health(at) -> str:
    return textwrap.dedent(f"""\
        blocks:
          team-health:
            cron: "{at:%M %H} * * *"
            missed: skip
            steps:
              - agent: guardian
                advice: true
                task: Team health, and what to fix first.
                inputs: ["journal: 7d"]
                write: {{note: "Weekly/Team.md", section: "Team Health"}}
        """)


def reply(model, messages):
    system = str(messages[0].get("content") or "") if messages else ""
    if "You are **the Guardian**" in system:
        return ADVICE
    return planner_reply(model, messages)


def team_report_of(home) -> str:
    from datetime import datetime

    from routine.journal.report import team_report

    db = sqlite3.connect(home.state / "journal.sqlite3")
    db.row_factory = sqlite3.Row
    try:
        return team_report(db, datetime.now(timezone.utc) + timedelta(days=1), 7)
    finally:
        db.close()


def queue_rows(home):
    return journal_rows(home, "SELECT agent, status, error FROM prompt_trial_queue ORDER BY id")


@pytest.mark.daemon(budget=120)
def test_the_watchers_advice_is_tried_and_only_the_better_change_is_proposed_and_approved(initialised, ollama,
                                                                                          driven_clock, request):
    home = initialised
    receiver = Receiver()
    request.addfinalizer(receiver.stop)
    now = driven_clock.now().astimezone(timezone.utc)
    home.config.write_text(home.config.read_text() + f'\ntimezone: UTC\ntrials: {{window: "{now:%H:%M}-'
                           f'{now + timedelta(hours=3):%H:%M}", clear: 15m}}\n'
                           f"notify: {{urls: [json://127.0.0.1:{receiver.port}/hook]}}\n")
    only_schedule(home, team_health(now + timedelta(hours=12)))
    ollama.reply_fn = reply
    before = planner_ran_twice_and_was_rewritten(home)

    fired = home.run("fire", "team-health")  # no daemon yet: the advice waits for its trials window
    assert fired.returncode == 0, fired.stderr
    assert "Fix first" in (home.vault / "Weekly" / "Team.md").read_text()
    # the unknown agent's block is said, not queued
    assert queue_rows(home) == [("planner", "queued", None)] * 2 + [("critic", "queued", None)]
    assert not list((home.vault / "Drafts").glob("*proposal*"))

    with daemon(home, "advice.log"):
        wait_for(lambda: all(s in ("done", "failed") for _, s, _ in queue_rows(home)), 120, "the changes tried")
        # The Critic has no runs to try its change on: said in an alert, not lost.
        [(_, status, error)] = [r for r in queue_rows(home) if r[0] == "critic"]
        assert status == "failed" and error.startswith("critic has no step runs from"), error
        rows = queue_rows(home)
        assert [s for agent, s, _ in rows if agent == "planner"] == ["done", "done"], (rows, journal_rows(
            home, "SELECT agent, kind, status, started_at, prompt IS NULL FROM runs ORDER BY started_at"),
            journal_rows(home, "SELECT since, until FROM prompt_trial_queue"))  # what the trials saw
        alerts = [a.read_text() for a in (home.vault / "Alerts").glob("*change not tried*.md")]
        alert = next((a for a in alerts if "The change to critic (advice of run" in a), alerts)
        assert "routine agent try critic" in alert, alerts
        queued = home.run("agent", "try", "planner", "--variant", variant(home, "VARIANT-AGAIN"), "--runs", "today")
        assert queued.returncode == 0, queued.stderr
        window = f"{now:%H:%M}-{now + timedelta(hours=3):%H:%M}"
        assert f"the daemon tries Drafts/Planner VARIANT-AGAIN.md on 2 run(s) of planner in its trials window " \
               f"({window})" in queued.stdout, queued.stdout
        wait_for(lambda: len(queue_rows(home)) == 4 and queue_rows(home)[-1][1] == "done", 120,
                 "the queued `agent try`")
    assert "change block 3 of the advice is not tried: there is no agent 'nobody'" in fired.stderr, fired.stderr

    # Each outcome pushed once: the better change as a proposal, the worse one and VARIANT-AGAIN as not better.
    wait_for(lambda: len([t for t in receiver.texts() if "planner's change" in t]) >= 3, 30, "the trials' pushes")
    pushed = [t for t in receiver.texts() if "planner's change" in t]
    assert sum("did better: approve it?" in t for t in pushed) == 1, pushed
    assert sum("was not better" in t for t in pushed) == 2, pushed
    trials = journal_rows(home, "SELECT variant_note, current_passed, variant_passed, better, proposal "
                                "FROM prompt_trials ORDER BY id")
    assert len(trials) == 3, trials
    (_, now_passed, worse_passed, worse_better, worse_proposal) = next(t for t in trials if t[3] == 0 and
                                                                      t[2] < t[1])
    assert worse_passed < now_passed and not worse_better and worse_proposal is None  # scored below, not proposed
    [proposed] = [t for t in trials if t[3] == 1 and t[0].startswith("advice of run")]
    assert (home.vault / "Agents" / "Planner.md").read_text() == before  # nothing applied by itself
    text = (home.vault / proposed[4]).read_text()
    assert "The plans held more than the day." in text and "did better with the variant" in text
    assert "checks passed" in text and "closeness to what you kept" in text and "grounding held" in text

    # Next week's Watcher reads what came of its advice in the journal's report.
    report = team_report_of(home)
    assert "**Prompt trials**" in report and "not better, so not proposed" in report, report
    assert f"proposed in [[{proposed[4].removesuffix('.md')}]]" in report, report

    home.run("approve", proposed[4], check=True)
    after = parse_frontmatter((home.vault / "Agents" / "Planner.md").read_text())
    assert "VARIANT-BETTER: plan the day in two blocks at most." in after.body
    assert "VARIANT-WORSE" not in after.body
    assert after.data["model"] == parse_frontmatter(before).data["model"]


def test_a_change_block_that_is_none_is_said_in_one_sentence_and_a_change_is_queued_once(initialised,
                                                                                        monkeypatch, caplog):
    """What the advice's blocks may be: YAML or a small model's `key: value` lines; a whole new
    body or a rule added; a schedule change without its block, an unknown agent, no change at all
    each said and skipped."""
    for key, value in initialised.env.items():
        monkeypatch.setenv(key, value)
    from datetime import datetime

    from routine.config.loader import load_agents, load_config
    from routine.journal import Journal
    from routine.runner.advice import changes_in, queue_advice

    config = load_config()
    agents = load_agents(config)[0]
    planner = agents["planner"].system_prompt
    reply_text = textwrap.dedent("""\
        ```change
        agent: critic
        why: sharper
        instructions: |
          You are the Critic. Name one risk.
        ```
        ```change
        schedule: daily.yaml
        add: Run the planner at 08:00.
        ```
        ```change
        agent: planner
        ```
        ```change
        agent planner
        add: [unclosed
        ```
        ```change
        agent: planner
        instructions: "SAME"
        ```
        """).replace('"SAME"', '"' + planner.replace('"', '\\"').replace("\n", "\\n") + '"')
    with caplog.at_level("WARNING", logger="routine.runner.advice"):
        found = changes_in(reply_text, agents)
    assert [(c.agent, c.body, c.why) for c in found] == [("critic", "You are the Critic. Name one risk.\n", "sharper")]
    said = [r.getMessage() for r in caplog.records]
    assert said == [
        "change block 2 of the advice is not tried: a change to a schedule needs `block:` and `set:` (e.g. "
        '`set: {cron: "30 7 * * *"}`)',
        "change block 3 of the advice is not tried: it gives neither `add:` (a rule to add) nor `instructions:` "
        "(the whole new instructions)",
        said[2],
        "change block 5 of the advice is not tried: it leaves planner's instructions as they are",
    ], said
    assert said[2].startswith("change block 4 of the advice is not tried: it is not YAML")

    journal = Journal()
    try:
        now = datetime.now().astimezone()
        assert queue_advice(config, journal.db, reply_text, agents, "guardian", "run-1", now) == 1
        assert queue_advice(config, journal.db, reply_text, agents, "guardian", "run-2", now) == 0  # tried once
    finally:
        journal.close()


SCHEDULE_ADVICE = textwrap.dedent("""\
    **Fix first**
    1. Team Health comes too late on Sunday evening.

    ```change
    schedule: test.yaml
    block: team-health
    why: Sunday evening is too late to act on it
    set: {cron: "0 9 * * mon"}
    ```

    ```change
    schedule: test.yaml
    block: team-health
    set: {cron: "99 * * * *"}
    ```

    ```change
    schedule: test.yaml
    block: team-health
    set: {steps: []}
    ```
    """)


def test_advice_to_a_schedule_is_checked_proposed_with_its_next_fires_and_approved_into_the_file(initialised,
                                                                                               ollama, request):
    home = initialised
    receiver = Receiver()
    request.addfinalizer(receiver.stop)
    home.config.write_text(home.config.read_text() + f"\nnotify: {{urls: [json://127.0.0.1:{receiver.port}/hook]}}\n")
    only_schedule(home, "# The team's own review.\n" + team_health(datetime(2026, 1, 4, 19, 30)).replace(
        '"30 19 * * *"', '"30 19 * * sun"  # Sunday evening'))
    advice = {"text": SCHEDULE_ADVICE}
    ollama.reply_fn = lambda model, messages: advice["text"]
    fired = home.run("fire", "team-health")
    assert fired.returncode == 0, fired.stderr
    assert "the change to team-health of test.yaml is not proposed: test.yaml:" in fired.stderr, fired.stderr
    assert "`set:` may change only cron, grace, missed, description of a block, not steps" in fired.stderr
    [proposal] = (home.vault / "Drafts").glob("*guardian proposal for test.yaml*.md")
    text = proposal.read_text()
    assert "Sunday evening is too late to act on it." in text and "next fires now: Sun" in text, text
    assert "with the change: Mon" in text and 'cron: "0 9 * * mon"' in text, text
    pushed = [t for t in receiver.texts() if "proposes a change to block team-health of test.yaml" in t]
    assert len(pushed) == 1 and proposal.name in pushed[0], receiver.texts()  # pushed like every proposal
    waiting = home.run("approve", "--json", check=True).stdout  # listed with the file it changes
    assert '"target": "schedules/test.yaml"' in waiting and '"section": "team-health"' in waiting, waiting
    schedule = home.config.parent / "schedules" / "test.yaml"
    assert "30 19 * * sun" in schedule.read_text()  # nothing changes before the person approves

    home.run("approve", str(proposal.relative_to(home.vault)), check=True)
    changed = schedule.read_text()
    assert 'cron: "0 9 * * mon"' in changed and "# The team's own review." in changed, changed
    assert "advice: true" in changed  # the rest of the block as it was
    listed = home.run("schedule", "list", check=True).stdout
    assert "team-health" in listed

    # The same advice again changes nothing, so nothing is proposed; a later change to a block the
    # person edited since is refused on approval, the file as the person left it.
    again = home.run("fire", "team-health")
    assert "It leaves block team-health of test.yaml as it is." in again.stderr, again.stderr
    assert not list((home.vault / "Drafts").glob("*guardian proposal for test.yaml*.md"))
    advice["text"] = SCHEDULE_ADVICE.replace("0 9 * * mon", "0 10 * * mon")
    home.run("fire", "team-health", check=True)
    [later] = (home.vault / "Drafts").glob("*guardian proposal for test.yaml*.md")
    schedule.write_text(changed.replace('"0 9 * * mon"', '"0 8 * * mon"'))
    refused = home.run("approve", str(later.relative_to(home.vault)))
    assert "changed after this proposal was written" in refused.stdout + refused.stderr, refused
    assert '"0 8 * * mon"' in schedule.read_text()


def test_an_advice_queued_in_the_second_of_its_runs_still_finds_them(tmp_path):
    """On a quick box the runs and the advice that names them fall in one second: the queue keeps
    the milliseconds the runs are stamped with, so the trial finds them (it once did not)."""
    from routine.journal import Journal
    from routine.journal.prompt_trials import PromptTrialQueue, QueuedVariant
    from routine.trials.select import agent_runs_between

    journal = Journal(tmp_path / "journal.sqlite3")
    try:
        second = datetime(2026, 11, 28, 16, 30, 46, tzinfo=timezone.utc)
        for at in (second + timedelta(milliseconds=100), second + timedelta(milliseconds=400)):
            run = journal.start(agent="planner", trigger="cli", at=at)
            journal.update(run, prompt=[{"role": "user", "content": "plan"}])
            journal.finish(run, "ok", output="- [ ] 09:00 Draft")
        advice_at = second + timedelta(milliseconds=900)
        queue = PromptTrialQueue(journal.db)
        assert queue.add(QueuedVariant("planner", "Plan in two blocks.", "advice of run x", "why",
                                       advice_at - timedelta(days=7), advice_at), advice_at)
        queued = queue.claim()
        assert queued is not None
        found = agent_runs_between(journal, "planner", queued.since, queued.until)
        assert len(found) == 2, [queued.since, queued.until]
    finally:
        journal.close()
