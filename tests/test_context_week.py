"""A simulated week of the shipped schedules on a realistic vault: what every agent was sent.

Checked on each request as the stand-in Ollama received it, counted as its own model family counts
it (tests/chat_tokens.py: Mistral's template and tokenizer for the `general` alias, Qwen's for
`analyst` and `coder`; the stand-in reports the same counts, as Ollama does): it fits the window
beside the answer's reserve; earlier steps' outputs, the note being written and the Planner's
Project Map are never dropped; nothing is sent twice; no Obsidian comment reaches a model. Every
step's model first calls a tool (the Librarian's list_notes of the whole vault among them) and the
step still fits and lands. Friday's OKR review sees all five weekdays; Monday's alignment sees
Friday. What a task names arrives: the 15:30 Guardian gets the day's research brief, what the
agents wrote today and the notes the brief cites; dream seeding every objective and key result of
the OKRs; Friday's systemic review the day's postmortem.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

import pytest

from chat_tokens import family_of, request_tokens
from fake_ollama import FakeOllama, mistral_tokenizer
from weekvault import make_vault, model_reply, problems_of, simulate

MONDAY = date(2026, 11, 23)
# One worker runs the whole module under pytest-xdist: the simulated week (a module fixture) is built once.
pytestmark = pytest.mark.xdist_group("context-week")


@pytest.fixture(scope="module")
def week_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("week")  # config, state and the vault (Vault/) of the simulated week


@pytest.fixture(scope="module")
def week(week_dir):
    from routine.models.tokens import mistral_available, qwen_available

    if not (mistral_available() and qwen_available()):
        pytest.skip("mistral-common or Qwen's tokenizer (dashscope, tiktoken) is not installed")
    tmp_path = week_dir
    server = FakeOllama(max_loaded=3, load_delay=0, tokenizer=mistral_tokenizer(), reply_fn=model_reply,
                        prompt_counter=request_tokens).start()
    with pytest.MonkeyPatch.context() as monkeypatch:
        yield from _week(tmp_path, server, monkeypatch)


def _week(tmp_path, server, monkeypatch):
    for key, sub in (("ROUTINE_CONFIG", "config/routine.yaml"), ("ROUTINE_STATE_DIR", "state"),
                     ("ROUTINE_RUNTIME_DIR", "run")):
        monkeypatch.setenv(key, str(tmp_path / sub))
    monkeypatch.setenv("OLLAMA_HOST", server.url)
    monkeypatch.setenv("ROUTINE_TEST_EMBEDDER", "hashing")  # the context's fit is under test, not search
    from routine.cli import main

    vault = tmp_path / "Vault"
    assert main(["init", str(vault)]) == 0
    config_file = tmp_path / "config" / "routine.yaml"
    config_file.write_text(config_file.read_text() + "\ntimezone: Europe/Berlin\n")
    make_vault(vault, MONDAY)
    from routine.config.loader import load_config

    try:
        yield simulate(load_config(), server, [MONDAY + timedelta(days=i) for i in range(8)])
    finally:
        server.stop()


def test_every_request_of_a_week_fits_and_carries_its_handoffs(week):
    failed = [f"{s.when:%a %H:%M} {s.block}/{s.agent}: {s.status}" for s in week if s.status not in ("ok", "proposal")]
    assert not failed, failed
    assert len(week) >= 140, "the whole week should have run"
    tool_steps = [s for s in week if any(m.get("role") == "tool" for b in s.requests for m in b["messages"])]
    assert len(tool_steps) == len(week), "every step of the week calls a tool (scripted) and carries on"
    # The stand-in's replies are grounded, and paraphrase as a model does (a percent of target, what is
    # left, a unit converted, days until a due date, a first name): none is taken for a reply with
    # unsupported claims (figures are checked in their context: issue 48).
    checked = [s for s in week if s.grounding]
    flagged = [f"{s.when:%a %H:%M} {s.block}/{s.agent}: {s.grounding['findings']}" for s in checked
               if s.grounding["findings"]]
    assert not flagged and len(checked) >= 140, (len(checked), flagged[:5])
    worked = [s for s in checked if re.search(r"% of target|to go\.|days from today|still to cut| s against|Ask ",
                                              s.output)]
    assert len(worked) >= len(checked) // 3, "the stand-in's replies should paraphrase the notes"
    problems = [f"{s.when:%a %H:%M} {s.block}/{s.agent}: {p}" for s in week for p in problems_of(s)]
    assert not problems, "\n".join(problems[:20])
    # Each request was counted by its own model's family (problems_of): both families are in the week.
    assert {family_of(body["model"]) for s in week for body in s.requests} == {"mistral", "qwen"}


def composed(step) -> str:
    """What routine composed for a step's requests (system and user messages, not tool results)."""
    return "\n".join(m["content"] for body in step.requests for m in body["messages"]
                     if m["role"] in ("system", "user"))


def flat(text: str) -> str:
    return " ".join(text.split())


def test_the_week_is_seen_as_the_person_means_it(week):
    def sent(day: date, block: str, agent: str) -> str:
        return composed(next(s for s in week if s.when.date() == day and s.block == block and s.agent == agent))

    friday, next_monday = MONDAY + timedelta(days=4), MONDAY + timedelta(days=7)
    review = sent(friday, "okr-review", "strategist")
    for i in range(4):  # Monday to Thursday as their digests, Friday as today's note
        assert f"[[Daily/{MONDAY + timedelta(days=i)}]] (§ Digest)" in review
    assert f"## [[Daily/{friday}]]" in review
    assert f"[[Daily/{friday + timedelta(days=3)}]]" not in review  # never next week's draft
    alignment = sent(next_monday, "morning-alignment", "strategist")
    assert f"[[Daily/{friday}]]" in alignment
    assert "period: 2026-Q4" in alignment  # note properties reach the model
    assert "EXAMPLE (not a real goal" not in alignment  # the OKR template's comment does not
    scope = sent(MONDAY + timedelta(days=1), "scope-audit", "critic")
    assert "[[Inbox/" in scope


def test_the_1530_guardian_checks_the_research_brief_and_what_the_agents_wrote_today(week, week_dir):
    from routine.vault import resolve_wikilink, split_frontmatter, wikilink_for, wikilinks
    from routine.vault.outline import readable

    vault = week_dir / "Vault"
    guardians = [s for s in week if s.block == "postmortem" and s.agent == "guardian"]
    assert len(guardians) == 6  # Monday to Friday, and the next Monday
    for step in guardians:
        day, text = step.when.date(), composed(step)
        _, brief = split_frontmatter((vault / "Research" / f"{day} Deep Work Brief.md").read_text())
        assert flat(readable(brief)) in flat(text), f"{day}: the research brief did not arrive whole"
        for link in wikilinks(brief):  # the notes the brief's claims rest on
            rel = resolve_wikilink(vault, link)
            assert rel is None or f"## {wikilink_for(rel)}" in text, f"{day}: {link}, cited by the brief, is missing"
        written = [s for s in week if s.when.date() == day and s.when < step.when and s.status == "ok"
                   and s.target_label == f"[[Daily/{day}]]"]
        assert len(written) >= 6, [s.agent for s in written]
        for earlier in written:  # the claims to check: every section the agents wrote today
            assert flat(earlier.output)[:200] in flat(text), f"{day}: {earlier.block}/{earlier.agent}'s section"


def test_dream_seeding_sees_every_objective_and_key_result(week, week_dir):
    from routine.vault.okrs import okr_items

    okrs = okr_items((week_dir / "Vault" / "Plans" / "OKRs.md").read_text())
    assert [i.name for i in okrs if i.objective is None] == ["Objective 1", "Objective 2", "Objective 3"]
    seeding = [s for s in week if s.block == "dream-seeding"]
    assert len(seeding) == 8  # every evening, Monday to the next Monday
    for step in seeding:
        text = flat(composed(step))
        lost = [item.name for item in okrs if flat(item.line) not in text]
        assert not lost, f"{step.when:%a}: dream seeding lost {lost}"


def test_the_weekly_systemic_review_sees_the_days_postmortem(week):
    review = next(s for s in week if s.block == "systemic-improvement" and s.agent == "critic")
    postmortem = next(s for s in week if s.block == "postmortem" and s.agent == "critic"
                      and s.when.date() == review.when.date())
    assert postmortem.status == "ok" and postmortem.target_section == "Postmortem"
    assert flat(postmortem.output)[:200] in flat(composed(review))


def test_fridays_review_gives_fridays_note_before_a_whole_thursday_without_its_digest(week, week_dir):
    """The issue's week: Thursday's note lost its Digest (the digest failed, or the person deleted
    it) and grew a long log. Friday's 16:30 OKR review still gets Friday's own note, and of Thursday
    the sections that matter, not its whole text."""
    import re
    from datetime import datetime, time

    from routine.config.loader import load_agents, load_config
    from routine.flows.step_setup import STEP_SETUP
    from routine.runner.block import run_block
    from routine.runner.step import Runner
    from routine.schedule.loader import load_schedules
    from weekvault import TZ

    vault = week_dir / "Vault"
    thursday, friday = MONDAY + timedelta(days=3), MONDAY + timedelta(days=4)
    note = vault / "Daily" / f"{thursday}.md"
    text = re.sub(r"\n## Digest\n.*?(?=\n## |\Z)", "\n", note.read_text(), flags=re.S)
    assert "## Digest" not in text
    long_log = "\n\n".join(f"Call {i} with the supplier about the portal rollout went on for a while; we "
                           f"agreed to revisit item {i} of the checklist next sprint." for i in range(260))
    note.write_text(text + f"\n## Meeting Log\n{long_log}\n")

    config = load_config()
    agents, _ = load_agents(config)
    block = load_schedules(config, agents).blocks["okr-review"]
    runner = Runner(config, journal=None, clock=lambda: datetime.combine(friday, time(16, 30), TZ), setup=STEP_SETUP)
    try:
        outcome = run_block(runner, block, agents, dry_run=True)
    finally:
        runner.close()
    step = outcome.steps[0]
    assert step.error is None, step.error
    sent = "\n".join(m["content"] for m in step.prompt.messages)
    assert f"## [[Daily/{friday}]]" in sent, [d for d in step.prompt.dropped]  # Friday's own note
    for i in range(3):  # Monday to Wednesday as their digests
        assert f"[[Daily/{MONDAY + timedelta(days=i)}]] (§ Digest)" in sent
    assert f"[[Daily/{thursday}]]" in sent  # Thursday is not missed either
    assert "item 259 of the checklist" not in sent  # but not its whole long log
    print(f"\nFriday's review: {step.prompt.counted} of {step.prompt.limit} tokens; left out: "
          f"{[(d['label'], d['reason'][:60]) for d in step.prompt.dropped]}")
