"""The grounding check reads a claim in its context (issue 48, tuned on the held-out corpus): a number
or a date the notes give to another thing, a wrong surname, a project no note names, are held; the
same facts said as the notes say them, or worked out in one step, land."""

from __future__ import annotations

from datetime import date
from functools import partial

import pytest

TODAY = date(2026, 11, 23)  # a Monday


@pytest.fixture(scope="module")
def vault(tmp_path_factory):
    root = tmp_path_factory.mktemp("context") / "Vault"
    notes = {
        "Plans/OKRs.md": "# OKRs\n\n## Objective 1: Win the pilot\n"
                         "- KR 1.2: weekly active pilot users — current 82.1% of signups / target 85%\n"
                         "- KR 1.3: sign the paid contract for 120 seats — by 2026-12-15\n\n"
                         "## Objective 2: Keep the grant on track\n"
                         "- KR 2.1: GPU hours within budget — used 1,820 of 2,500\n",
        "Projects/Pilot/Pilot.md": "# Pilot\n\nContact: Priya Raman (operations lead).\n\n## Tasks\n"
                                   "- [ ] Send the signup reminder to the 23 dispatchers who have not joined\n"
                                   "- Signups: 27 of 50 invited dispatchers\n\n## Log\nSignups went from 19 to 27.\n",
        "Projects/Atlas/Atlas.md": "# Atlas\n\n## Performance\n"
                                   "- p95 page load 1,240 ms (was 1,610 ms on 2026-11-02). The image CDN should take "
                                   "it under 800 ms.\n- Atlas CDN spike: 1,240 ms → 910 ms on the test page.\n\n"
                                   "## Migration\n"
                                   "- Old portal switched off 2026-12-18.\n",
        "Projects/Grant/Grant.md": "# Grant\n\n## Budget\n- Travel: €1,350 spent of €2,000\n",
        "Daily/2026-11-20.md": "# Friday 20 November 2026\n\n## Log\nLabeled 20 tickets, not 30.\n",
    }
    for rel, text in notes.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def check(vault, reply: str, shown: tuple[str, ...] = ("Plans/OKRs.md", "Projects/Pilot/Pilot.md",
                                                         "Projects/Atlas/Atlas.md", "Projects/Grant/Grant.md")):
    from routine.vault.grounding import grounds_for, review
    from routine.vault.notes import wikilink_for
    from routine.vault.scope import in_scope

    texts = [f"## {wikilink_for(rel)}\n{(vault / rel).read_text()}" for rel in shown]
    grounds = grounds_for(vault, partial(in_scope, ["**"]), texts, TODAY)
    return [(f.kind, f.claim) for f in review(reply, grounds, "lenient").findings]


@pytest.mark.parametrize("wrong, claim, right", [
    # the line that matches the claim best gives another figure of its unit
    ("- [ ] 09:00 Send the signup reminder to the 27 dispatchers who have not joined",
     "27", "- [ ] 09:00 Send the signup reminder to the 23 dispatchers who have not joined"),
    ("KR 2.1: GPU hours at 1,350 of 2,500, well within budget.",
     "1,350", "KR 2.1: GPU hours at 1,820 of 2,500, 680 left."),
    # the word after the figure is another figure's on its line
    ("KR 1.2 weekly active pilot users: 85% of signups, on track.",
     "85%", "KR 1.2 weekly active pilot users: 82.1% of signups, a little under the 85% target."),
    ("Grant risk: travel is at €2,000 spent.", "€2,000", "Grant risk: travel is at €1,350 spent of €2,000."),
    # an earlier value given as now
    ("Atlas is the blind spot: p95 is still 1,610 ms.", "1,610 ms",
     "Atlas went from 1,610 ms to 1,240 ms; p95 is 1,240 ms now."),
])
def test_a_figure_the_notes_give_to_another_thing_is_held(vault, wrong, claim, right):
    assert ("figure", claim) in check(vault, wrong)
    assert check(vault, right) == []


def test_a_derived_figure_is_worked_from_the_figure_it_names(vault):
    # 1,240 − 910 is 330, but "over the 800 ms target" says it is worked from 800 ms: 440
    wrong = "The spike took the page from 1,240 ms to 910 ms, still 330 ms over the 800 ms target."
    assert [claim for _, claim in check(vault, wrong)] == ["330 ms"]
    assert check(vault, wrong.replace("330 ms over", "110 ms over")) == []
    assert [claim for _, claim in check(vault, "Signups went from 19 to 27, up by ten.")] == ["ten"]
    assert check(vault, "Signups went from 19 to 27, up by eight.") == []
    assert check(vault, "Signups: 27 of 50, so 23 more to go.") == []


def test_a_date_is_read_on_the_line_of_its_topic(vault):
    held = check(vault, "The old portal is switched off on 2026-12-15.")
    assert ("date", "2026-12-15") in held  # 2026-12-15 is the contract's date, not the portal's
    assert check(vault, "The old portal is switched off on 2026-12-18.") == []
    assert check(vault, "The paid contract for 120 seats is due Tuesday the 15th.") == []  # an ordinal date
    assert check(vault, "The paid contract for 120 seats is due Wednesday the 15th.") == [
        ("date", "Wednesday the 15th")]  # 15 December 2026 is a Tuesday


def test_a_wrong_surname_and_an_unknown_project_are_held(vault):
    assert check(vault, "Send the draft to Priya Shah a day early.") == [("person", "Priya Shah")]
    assert check(vault, "Send the draft to Priya Raman a day early.") == []
    assert ("project", "Robin") in check(vault, "The runs compete with the Robin pipeline for the GPU.")
    assert ("project", "Magpie") in check(vault, "I spent the afternoon on Magpie instead of the budget table.")
    assert check(vault, "Does Atlas's p95 matter for the pilot?") == []  # a question's Does is no first name


def test_numeric_dates_and_model_names_are_not_figures(vault):
    shown = ("Plans/OKRs.md", "Daily/2026-11-20.md")
    assert check(vault, "Carried over: the labeling from Friday (20.11.2026), 20 of 30 done.", shown) == []
    assert check(vault, "The 7B model is next. *Test:* time the first 10 tickets.", shown) == []


def test_a_held_out_part_is_printed_apart_once_used_to_tune(tmp_path, capsys):
    """A heldout-N folder whose README says it was used to tune is printed under its own heading; a new
    one without that line is printed as held out, per kind, by itself."""
    import sys

    from grounding_corpus import REPO
    sys.path.insert(0, str(REPO / "bench"))
    from grounding import groups

    (tmp_path / "heldout-1").mkdir()
    (tmp_path / "heldout-1" / "README.md").write_text("# Part 1\n\nUsed to tune: 2026-11-28\n")
    (tmp_path / "heldout-3").mkdir()
    (tmp_path / "heldout-3" / "README.md").write_text("# Part 3, written blind\n")
    headings = {heading.split(":")[0]: [name for name, _ in parts] for heading, parts in groups(tmp_path)}
    assert headings == {"tuned": ["tuned"], "held out, since used to tune": ["heldout-1 (since 2026-11-28)"],
                        "held out": ["heldout-3"]}
