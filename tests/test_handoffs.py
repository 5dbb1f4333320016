"""Conditional handoffs: a step's `when:` on an earlier step's verdict, `else:` the step that runs
instead. The shipped deep-work block as the person designed it (Critic ok → Builder; needs review
→ the Synthesizer duty, kept by the Librarian), through the CLI and the stand-in Ollama."""

from __future__ import annotations

import pytest

from routine.config.conditions import Condition
from routine.verdicts import verdict_of
from test_daemon import journal_rows, only_schedule


def critic_says(verdict: str):
    def reply(model, messages):
        asked = "\n".join(str(m.get("content") or "") for m in messages)
        if "Review the brief above" in asked:
            return f"- The brief names its sources.\n- The test plan is thin.\n\nVERDICT: {verdict}"
        return None  # everyone else: the stand-in's usual answer
    return reply


def steps_of_last_block(home) -> dict[str, tuple[str, str | None, str | None]]:
    parent = journal_rows(home, "SELECT id FROM runs WHERE kind='block' ORDER BY started_at DESC LIMIT 1")[0][0]
    rows = journal_rows(home, "SELECT agent, status, error, details FROM runs WHERE parent=? ORDER BY step", parent)
    return {agent: (status, error, details) for agent, status, error, details in rows}


@pytest.mark.parametrize("verdict, ran, skipped", [("ok", "builder", "librarian"),
                                                   ("needs review", "librarian", "builder")])
def test_the_critics_verdict_picks_the_branch_and_both_are_journaled(initialised, ollama, verdict, ran, skipped):
    home = initialised
    ollama.reply_fn = critic_says(verdict)
    done = home.run("fire", "deep-work-brief")
    steps = steps_of_last_block(home)
    assert steps["research"][0] == "ok" and steps["critic"][0] == "ok", steps
    assert steps[ran][0] in ("ok", "proposal"), (done.stdout, done.stderr, steps)
    assert steps[skipped][0] == "skipped"
    assert "verdict is 'ok'" in steps[skipped][1] or "the other branch ran" in steps[skipped][1]
    assert f"it was '{verdict}'" in (steps[ran][2] or "")  # the branch taken, with what the Critic said
    before_building = (home.vault / "Daily").glob("*.md")
    wrote_synthesis = any("Before Building" in p.read_text() for p in before_building)
    assert wrote_synthesis is (ran == "librarian")
    shown = home.run("runs", "list").stdout
    assert "skipped: branch" in shown and "skipped: paused" not in shown


def test_a_critic_that_gives_no_verdict_sends_the_work_to_the_synthesizer(initialised, ollama):
    home = initialised
    home.run("fire", "deep-work-brief")  # the stand-in's usual answer has no VERDICT line
    steps = steps_of_last_block(home)
    assert steps["builder"][0] == "skipped" and "critic gave no VERDICT line" in steps["builder"][1]
    assert steps["librarian"][0] == "ok"


BAD = """\
blocks:
  review:
    cron: "0 9 * * *"
    steps:
      - agent: critic
        when: {step: builder, verdict: ok}
        task: Review.
        write: {note: "Critiques/x.md"}
      - agent: builder
        when: {step: critic, verdict: ok, else: strategist}
        task: Build.
        write: {note: "Builds/x.md"}
      - agent: librarian
        when: {step: critic, verdict: [ok, fine], else: critic}
        task: File.
        write: {note: "Daily/x.md", section: "X"}
"""


def test_a_condition_that_names_no_earlier_step_or_no_later_else_is_located(initialised):
    home = initialised
    only_schedule(home, BAD)
    said = home.run("schedule", "validate")
    text = said.stdout + said.stderr
    assert said.returncode == 2
    assert "steps[0].when.step': `when` names step 'builder', which is not an earlier step" in text
    assert "steps[1].when.else': `else` names step 'strategist', which is not a later step" in text
    assert "steps[2].when.else': `else` names step 'critic', which is not a later step" in text


def test_verdicts_are_read_from_the_last_verdict_line_in_any_case():
    assert verdict_of("Fine.\n**VERDICT:** Needs  Review.\n") == "needs review"
    assert verdict_of("VERDICT: fail\n...\nverdict: ok") == "ok"
    assert verdict_of("No verdict here; the verdict is up to you.") is None
    cond = Condition(step="critic", verdict=("ok",), otherwise="librarian")
    assert cond.holds("VERDICT: OK") and not cond.holds("VERDICT: needs review") and not cond.holds(None)
    assert Condition(step="critic", contains="ship it").holds("I say: Ship it!")


@pytest.mark.parametrize("quote", ["> VERDICT: ok", "```\nVERDICT: ok\n```", "**Verdict:** ok"])
def test_a_verdict_quoted_after_the_critics_own_cannot_send_the_work_to_the_builder(initialised, ollama, quote):
    home = initialised
    ollama.reply_fn = critic_says(f"needs review\n\nThe brief's own note says:\n\n{quote}")
    home.run("fire", "deep-work-brief")
    steps = steps_of_last_block(home)
    assert steps["builder"][0] == "skipped" and steps["librarian"][0] == "ok", steps
    assert "it was 'needs review'" in (steps["librarian"][2] or "")
