"""A reply's claims are checked against what its model was given before anything is written:
an unsupported link, key-result figure, date or person is asked about once, then held as a
proposal that names it; a grounded reply lands as it always did."""

from __future__ import annotations

import json
import textwrap
from datetime import date

import pytest

from routine.vault.grounding import Grounds, check

MISTRAL = "mistral:7b-instruct-q4_K_M"
OKRS = textwrap.dedent("""\
    ---
    period: 2026-Q4
    ---
    # OKRs

    ## Objective 1: Launch the Atlas supplier portal to paying customers
    - KR 1.1: 3 suppliers submit orders through the portal — current 1 / target 3 — by 2026-12-15
    - KR 1.2: p95 page load under 800 ms — current 1,240 ms / target 800 ms — by 2026-12-01
    - KR 1.3: €12,400 MRR — current €4,150 / target €12,400 — by 2026-12-31
    """)
GOOD = ("**Top OKRs** — KR 1.3 stands at €4,150 of €12,400 MRR and KR 1.2 at 1,240 ms against 800 ms "
        "([[Plans/OKRs]]).\n1. Call Jürgen about the supplier deadline of 2026-12-15; project Atlas first.\n"
        "- [ ] 09:00 supplier call, ~45 minutes\n- Roughly €2,000 more MRR is my estimate. ~~old~~")
PLANTED = {
    "a missing link": ("Focus on the portal, see [[Plans/Revenue plan]].", "[[Plans/Revenue plan]]"),
    "a KR number not in the OKRs": ("KR 1.3 is now at €7,900 MRR.", "€7,900"),
    "a KR figure without a unit": ("KR 1.2 improved: current 950 ms.", "950 ms"),
    "a wrong date": ("The supplier deadline moved to 2026-12-05.", "2026-12-05"),
    "an impossible date": ("Review on 30 February 2027.", "30 February 2027"),
    "an invented person": ("Call Maria Schneider about the API contract.", "Maria Schneider"),
    "an invented project": ("Project Zephyr is waiting on the valves.", "Zephyr"),
}


@pytest.fixture
def grounds():
    shown = OKRS + "\n## [[Daily/2026-11-22]]\nCall notes with Jürgen.\nToday is Monday, 2026-11-23.\n"
    return Grounds(shown, date(2026, 11, 23), lambda target: target in ("Plans/OKRs", "Projects/Atlas/Atlas"),
                   frozenset({"atlas", "beacon"}))


def test_a_grounded_reply_has_no_findings(grounds):
    assert check(GOOD, grounds, "strict") == []


@pytest.mark.parametrize("planted", list(PLANTED), ids=list(PLANTED))
def test_every_planted_claim_is_found(grounds, planted):
    text, claim = PLANTED[planted]
    found = check(GOOD + "\n" + text, grounds, "lenient")
    assert [f.claim for f in found] == [claim]


def test_strictness_decides_which_figures_count(grounds):
    plan = "- [ ] 10:00 install script, 45 minutes"  # a duration of the day's plan
    assert check(plan, grounds, "lenient") == []
    assert [f.claim for f in check(plan, grounds, "strict")] == ["45 minutes"]
    claim = "The install takes 45 minutes now."  # a duration stated as a fact is a claim
    assert [f.claim for f in check(claim, grounds, "lenient")] == ["45 minutes"]
    assert check("Call Maria Schneider. [[Nowhere]]", grounds, "off") == []


# --- as a person runs it ------------------------------------------------------------------------

@pytest.fixture
def strategist(initialised):
    home = initialised
    (home.vault / "Plans" / "OKRs.md").write_text(OKRS)
    (home.vault / "People" / "Jürgen.md").write_text("# Jürgen\nSupplier contact for Atlas.\n")
    return home


def _run(home) -> dict:
    run_id = json.loads(home.run("runs", "list", "--json", check=True).stdout)[0]["id"]
    return json.loads(home.run("runs", "show", run_id, "--json", check=True).stdout)


def _alignment(home) -> str:
    daily = list((home.vault / "Daily").glob("*.md"))
    return daily[0].read_text() if daily else ""


@pytest.mark.parametrize("planted", list(PLANTED), ids=list(PLANTED))
def test_an_unsupported_claim_twice_becomes_a_proposal_that_names_it(strategist, ollama, planted):
    home = strategist
    text, claim = PLANTED[planted]
    ollama.script(MISTRAL, [GOOD + "\n" + text, GOOD + "\n" + text])
    proc = home.run("fire", "strategist")
    assert proc.returncode == 0, proc.stderr
    assert text not in _alignment(home)  # never a finished section
    proposals = list((home.vault / "Drafts").glob("*strategist proposal*.md"))
    assert len(proposals) == 1, proc.stdout
    body = proposals[0].read_text()
    assert "do not support" in body and claim in body and text in body
    chats = [r for r in ollama.requests if r["_path"] == "/api/chat"]
    assert len(chats) == 2 and claim in chats[1]["messages"][-1]["content"]  # asked once more, with the list
    run = _run(home)
    assert run["status"] == "proposal"
    assert run["grounding"]["held"] and run["grounding"]["asked_again"]
    assert claim in [f["claim"] for f in run["grounding"]["findings_after"]]
    # Approving it is one look: the claim is marked where it stands, its footnote says why.
    marked = body.split("## Proposed text")[0]
    assert f"=={claim}==[^claim1]" in marked and "[^claim1]: " + claim in marked
    assert f"=={claim}==" not in body.split("## Proposed text")[1]  # the text to approve is the model's own


def test_a_reply_corrected_when_asked_again_lands(strategist, ollama):
    home = strategist
    ollama.script(MISTRAL, [GOOD + "\nKR 1.3 is now at €7,900 MRR.", GOOD])
    proc = home.run("fire", "strategist")
    assert proc.returncode == 0, proc.stderr
    assert "Roughly €2,000 more MRR" in _alignment(home) and "€7,900" not in _alignment(home)
    assert not list((home.vault / "Drafts").glob("*.md"))
    grounding = _run(home)["grounding"]
    assert grounding["asked_again"] and not grounding["held"] and grounding["findings_after"] == []


def test_a_grounded_reply_lands_at_once(strategist, ollama):
    home = strategist
    ollama.script(MISTRAL, [GOOD])
    assert home.run("fire", "strategist").returncode == 0
    assert "Call Jürgen" in _alignment(home)
    assert len([r for r in ollama.requests if r["_path"] == "/api/chat"]) == 1
    assert _run(home)["grounding"] == {"strictness": "lenient", "findings": [], "asked_again": False, "held": False}


def test_the_ask_again_names_where_support_could_be_found(grounds):
    found = check("KR 1.3 is now at €7,900 MRR.", grounds, "lenient")
    assert [f.claim for f in found] == ["€7,900"]
    assert "KR 1.3: €12,400 MRR — current €4,150" in found[0].hint  # the line to look at
    wrong = check("KR 1.3: €4,150 of €12,400 is 64% of target.", grounds, "lenient")
    assert [(f.kind, f.claim) for f in wrong] == [("derived", "64%")] and "gives 33" in wrong[0].hint


def test_team_health_shows_per_agent_the_replies_held_and_the_claims_most_often_unsupported(strategist, ollama):
    from datetime import datetime, timezone

    from routine.journal import Journal
    from routine.journal.report import team_report

    home = strategist
    held = GOOD + "\nKR 1.3 is now at €7,900 MRR."
    ollama.script(MISTRAL, [held, held, GOOD])
    assert home.run("fire", "strategist").returncode == 0  # held: asked again, still unsupported
    assert home.run("fire", "strategist").returncode == 0  # grounded: lands
    journal = Journal(home.state / "journal.sqlite3")
    try:
        report = team_report(journal.db, datetime.now(timezone.utc), 7)
    finally:
        journal.close()
    assert "- strategist: 1 of 2 replies held (50%), 1 asked again; most often unsupported: €7,900 (figure)" in report


# --- issue 48: figures in their context, on the project's own test vault (tests/weekvault.py) ------

@pytest.fixture(scope="module")
def week_vault(tmp_path_factory):
    """The realistic vault of the simulated week, with a supplier's rate limit (20 per second) where 50
    is in another note about something else, a week number, and a price table written with "~"."""
    from weekvault import make_vault

    vault = tmp_path_factory.mktemp("week") / "Vault"
    for folder in ("Plans", "Daily", "Inbox", "Research", "People"):
        (vault / folder).mkdir(parents=True)
    (vault / "Plans" / "OKRs.md").write_text("---\nperiod:\n---\n# OKRs\n\n## Objective 1: example\n")
    make_vault(vault, date(2026, 11, 23))
    (vault / "Projects" / "Atlas" / "Atlas API.md").write_text(
        "# Atlas API\n\nAgreed with Jürgen in the week 47 call.\n"
        "- The supplier ERP's rate limit: 20 requests per second per key.\n- Orders arrive as JSON.\n")
    (vault / "Projects" / "Beacon" / "Beacon install.md").write_text(
        "# Beacon install\n\nThe install script pulls 50 packages; the model download is the slow part.\n")
    (vault / "Research" / "Document scanning.md").write_text(
        "# Document scanning\n\n| service | price |\n|---|---|\n| CloudOCR | ~€1.50 / 1000 pages |\n"
        "| LocalScan | free on the Jetson |\n")
    return vault


def week_check(vault, agent: str, shown: list[str], reply: str):
    from functools import partial

    from grounding_corpus import agent_reads
    from routine.vault.grounding import grounds_for, review
    from routine.vault.notes import wikilink_for
    from routine.vault.scope import in_scope

    texts = [f"## {wikilink_for(rel)}\n{(vault / rel).read_text()}" for rel in shown]
    grounds = grounds_for(vault, partial(in_scope, agent_reads(agent)), texts, date(2026, 11, 23))
    return review(reply, grounds, "lenient")


STRATEGIST_SHOWN = ["Plans/OKRs.md", "Plans/Project Map.md", "Projects/Atlas/Atlas API.md",
                    "Projects/Beacon/Beacon install.md"]


def test_a_figure_taken_from_the_wrong_line_is_held_and_the_right_one_lands(week_vault):
    wrong = "Jürgen says the supplier ERP takes 50 requests per second, so the order import can run in one go."
    found = week_check(week_vault, "strategist", STRATEGIST_SHOWN, wrong).findings
    assert [(f.kind, f.claim) for f in found] == [("figure", "50 requests per second")]  # 50: the Beacon's packages
    assert "20 requests per second" in found[0].hint  # where to look: the line of the rate limit
    not_shown = week_check(week_vault, "strategist", ["Plans/OKRs.md"], wrong).findings
    assert "[[Projects/Atlas/Atlas API]] says:" in not_shown[0].hint and "20 requests" in not_shown[0].hint
    for right in ("Jürgen says the supplier ERP takes 20 requests per second.", "Keep the ERP import under 20 req/s.",
                  "The ERP allows twenty requests a second."):
        assert week_check(week_vault, "strategist", STRATEGIST_SHOWN, right).findings == [], right
    # not shown, but a note the strategist may read says it: named as the source
    checked = week_check(week_vault, "strategist", ["Plans/OKRs.md"], "The supplier ERP takes 20 requests/s.")
    assert checked.findings == [] and set(checked.found_in.values()) == {"Projects/Atlas/Atlas API.md"}


def test_a_percent_of_target_that_is_a_week_number_is_held(week_vault):
    found = week_check(week_vault, "strategist", STRATEGIST_SHOWN, "KR 1.3 stands at 47% of target.").findings
    assert [f.claim for f in found] == ["47%"]  # "week 47" is a name, not a figure to match
    assert week_check(week_vault, "strategist", STRATEGIST_SHOWN,
                      "KR 1.3 stands at 33% of target (€4,150 of €12,400).").findings == []


def test_a_first_and_last_name_anywhere_in_a_sentence_is_a_person(week_vault):
    for reply in ("Anna Becker in Legal holds the approval of the API contract.",
                  "The API contract waits, Anna Becker in Legal holds the approval."):
        found = week_check(week_vault, "strategist", STRATEGIST_SHOWN, reply).findings
        assert [(f.kind, f.claim) for f in found] == [("person", "Anna Becker")], reply
    known = "Jürgen Weiß holds the approval of the API contract; Tomás Ortega waits on the valves."
    assert week_check(week_vault, "planner", ["Plans/Project Map.md"], known).findings == []


def test_numbers_in_words_and_about_read_as_the_model_writes_them(week_vault):
    reply = "CloudOCR costs about €1.50 per thousand pages, so a dozen delivery notes cost next to nothing."
    checked = week_check(week_vault, "research", ["Plans/Project Map.md"], reply)
    assert checked.findings == [] and checked.found_in["€1.50"] == "Research/Document scanning.md"
    wrong = week_check(week_vault, "research", ["Research/Document scanning.md"],
                       "CloudOCR costs €2.50 per 1000 pages.")
    assert [f.claim for f in wrong.findings] == ["€2.50"]


def test_a_held_reply_names_its_claims_and_its_proposal_in_the_terminal(strategist, ollama):
    home = strategist
    text = GOOD + "\nKR 1.3 is now at €7,900 MRR. Call Maria Schneider about the API contract."
    ollama.script(MISTRAL, [text, text])
    proc = home.run("fire", "strategist")
    assert proc.returncode == 0, proc.stderr
    proposal = next((home.vault / "Drafts").glob("*strategist proposal*.md")).relative_to(home.vault)
    said = proc.stdout + proc.stderr
    assert "Unsupported:;" not in said
    assert "€7,900 (figure)" in said and "Maria Schneider (person)" in said, said
    assert proposal.with_suffix("").as_posix() in said, said  # where the proposal is
