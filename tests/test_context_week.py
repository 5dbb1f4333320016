"""A simulated week of the shipped schedules on a realistic vault: what every agent was sent.

Checked on each request as the stand-in Ollama received it, counted with Mistral's own tokenizer
(mistral-common): it fits the window beside the answer's reserve; earlier steps' outputs, the
note being written and the Planner's Project Map are never dropped; nothing is sent twice; no
Obsidian comment reaches a model. Every step's model first calls a tool (the Librarian's
list_notes of the whole vault among them) and the step still fits and lands. Friday's OKR
review sees all five weekdays; Monday's alignment sees Friday.
"""

from __future__ import annotations

from datetime import date, timedelta

import pytest
from fake_ollama import FakeOllama, mistral_tokenizer
from weekvault import make_vault, model_reply, problems_of, simulate

MONDAY = date(2026, 11, 23)
# One worker runs the whole module under pytest-xdist: the simulated week (a module fixture) is built once.
pytestmark = pytest.mark.xdist_group("context-week")


@pytest.fixture(scope="module")
def week(tmp_path_factory):
    counter = mistral_tokenizer()
    if counter is None:
        pytest.skip("mistral-common is not installed")
    tmp_path = tmp_path_factory.mktemp("week")
    server = FakeOllama(max_loaded=3, load_delay=0, tokenizer=counter, reply_fn=model_reply).start()
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
    # The stand-in's replies are grounded: none is taken for a reply with unsupported claims.
    flagged = [f"{s.when:%a %H:%M} {s.block}/{s.agent}: {s.grounding['findings']}" for s in week
               if s.grounding and s.grounding["findings"]]
    assert not flagged, flagged[:5]
    problems = [f"{s.when:%a %H:%M} {s.block}/{s.agent}: {p}" for s in week for p in problems_of(s)]
    assert not problems, "\n".join(problems[:20])


def test_the_week_is_seen_as_the_person_means_it(week):
    def sent(day: date, block: str, agent: str) -> str:
        step = next(s for s in week if s.when.date() == day and s.block == block and s.agent == agent)
        return "\n".join(m["content"] for body in step.requests for m in body["messages"]
                         if m["role"] in ("system", "user"))  # what routine composed, not tool results

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
