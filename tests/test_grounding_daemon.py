"""Through the running daemon, a realistic grounded reply (rounding, arithmetic, days until a date,
first names, a figure from a note the agent may read but was not shown) lands at once, and a reply
with one unsupported claim of each kind is asked about once, then held as a proposal that marks it."""

from __future__ import annotations

import json
from datetime import date

import pytest

from test_daemon import daemon
from test_grounding import GOOD, MISTRAL, OKRS

pytestmark = pytest.mark.daemon(budget=120)

ATLAS = """---
type: project
status: active
---
# Atlas

Supplier portal. Onboarding with Priya Raman; Tomás Ortega builds the importer.

## Progress
- 210/300 supplier records cleaned.
"""
UNSUPPORTED = {
    "link": ("See [[Plans/Revenue plan]] for the numbers.", "[[Plans/Revenue plan]]"),
    "figure": ("KR 1.3 moved to €7,900 MRR this week.", "€7,900"),
    "derived": ("KR 1.3 stands at €4,150 of €12,400, which is 64% of target.", "64%"),
    "date": ("The supplier deadline moved to 2026-12-05.", "2026-12-05"),
    "person": ("Call Maria Schneider about the API contract.", "Maria Schneider"),
    "project": ("Project Zephyr is waiting on the valves.", "Zephyr"),
}


def grounded_paraphrase(today: date) -> str:
    due = date(2026, 12, 15)
    return (f"## Alignment\n- KR 1.3: €4,150 of €12,400 — about 33% of target, €8,250 to go.\n"
            f"- KR 1.2: p95 at 1.24 s, 440 ms over the 800 ms goal.\n"
            f"- Suppliers: 1 of 3 live; the deadline is {due:%A}, Dec 15 ({(due - today).days} days from today).\n"
            f"- Atlas: 210/300 supplier records cleaned (70%). Ask Priya which 90 are left; check with Tomás.\n")


@pytest.fixture
def strategist(initialised):
    home = initialised
    (home.vault / "Plans" / "OKRs.md").write_text(OKRS)
    (home.vault / "People" / "Jürgen.md").write_text("# Jürgen\nSupplier contact for Atlas.\n")
    (home.vault / "Projects" / "Atlas").mkdir(parents=True, exist_ok=True)
    (home.vault / "Projects" / "Atlas" / "Atlas.md").write_text(ATLAS)
    return home


def _last_run(home) -> dict:
    run_id = json.loads(home.run("runs", "list", "--json", check=True).stdout)[0]["id"]
    return json.loads(home.run("runs", "show", run_id, "--json", check=True).stdout)


def test_the_daemon_lands_a_grounded_paraphrase_and_holds_each_kind_of_unsupported_claim(strategist, ollama):
    home = strategist
    with daemon(home):
        reply = grounded_paraphrase(date.today())
        ollama.script(MISTRAL, [reply])
        assert home.run("fire", "strategist").returncode == 0
        run = _last_run(home)
        assert run["status"] == "ok" and run["grounding"]["findings"] == [], run["grounding"]
        assert run["grounding"]["found_in"]["210"] == "Projects/Atlas/Atlas.md"  # looked up, named as the source
        assert "Ask Priya which 90 are left" in next((home.vault / "Daily").glob("*.md")).read_text()
        assert "Projects/Atlas/Atlas.md" in run["sources"]  # not shown to the model, but one of the run's sources

        for kind, (sentence, claim) in UNSUPPORTED.items():
            answer = GOOD + "\n" + sentence
            ollama.script(MISTRAL, [answer, answer])
            assert home.run("fire", "strategist").returncode == 0
            run = _last_run(home)
            assert run["status"] == "proposal", (kind, run["grounding"])
            assert run["grounding"]["asked_again"] and run["grounding"]["held"]
            assert [(f["kind"], f["claim"]) for f in run["grounding"]["findings_after"]] == [(kind, claim)]
            proposal = home.vault / run["wrote"]["proposal"]
            assert f"=={claim}==[^claim1]" in proposal.read_text(), kind
            asked = [r for r in ollama.requests if r["_path"] == "/api/chat"][-1]["messages"][-1]["content"]
            assert claim in asked and "Write your whole answer again" in asked
