"""Prompt trials: an agent's real runs asked again with a variant of its note, judged beside what
the current note gave. A variant the stand-in answers worse scores below and is never proposed;
a better one is proposed with its figures, and approving it changes the agent note (its
properties kept). Through the CLI, the stand-in Ollama and the real journal."""

from __future__ import annotations

import json
from datetime import timedelta

from routine.vault.frontmatter import parse_frontmatter

KEPT = "**Time blocks**\n- [ ] 09:00–10:30 Draft the pilot spec\n- [ ] 11:00–12:00 Admin"


def reply(model, messages):
    system = str(messages[0].get("content") or "") if messages else ""
    if "VARIANT-WORSE" in system:
        return "Sure! Here is your plan. [[Projects/Atlantis]] meets on 2031-02-30 with 97 people."
    if "VARIANT-BETTER" in system:
        return KEPT
    return None  # the current note: the stand-in's usual answer


def variant(home, marker: str) -> str:
    note = (home.vault / "Agents" / "Planner.md").read_text()
    split = parse_frontmatter(note)
    rel = f"Drafts/Planner {marker}.md"
    (home.vault / rel).write_text(note.replace(split.body, f"\n{marker}: plan the day in two blocks at most.\n"))
    return rel


def planner_ran_twice_and_was_rewritten(home) -> str:
    """Two Planner runs today, the second's Plan rewritten by the person as ``KEPT``; the agent note
    as it was (what a trial must not change)."""
    for _ in range(2):
        home.run("fire", "planner", check=True)
    daily = next((home.vault / "Daily").glob("*.md"))
    text = daily.read_text()
    start = text.index("\n", text.index("%% routine:begin plan")) + 1
    daily.write_text(text[:start] + KEPT + "\n" + text[text.index("%% routine:end plan"):])
    return (home.vault / "Agents" / "Planner.md").read_text()


def test_a_worse_variant_is_never_proposed_and_a_better_one_is_approved_into_the_note(initialised, ollama,
                                                                                      driven_clock):
    home = initialised
    ollama.reply_fn = reply
    before = planner_ran_twice_and_was_rewritten(home)
    daily = next((home.vault / "Daily").glob("*.md"))

    worse = json.loads(home.run("agent", "try", "planner", "--variant", variant(home, "VARIANT-WORSE"),
                                "--runs", "today", "--json", check=True).stdout)
    assert len(worse["runs"]) == 2 and worse["passed"]["variant"] < worse["passed"]["current"], worse
    assert worse["better"] is False and worse["proposal"] is None
    assert (home.vault / "Agents" / "Planner.md").read_text() == before
    assert not list((home.vault / "Drafts").glob("*proposal*"))

    better = home.run("agent", "try", "planner", "--variant", variant(home, "VARIANT-BETTER"), "--runs", "today")
    assert better.returncode == 0, better.stderr
    assert "checks passed 2/2 now, 2/2 with the variant; closeness to what you kept" in better.stdout, better.stdout
    proposal = next((home.vault / "Drafts").glob("*planner proposal for Planner*.md"))
    assert "did better with the variant" in proposal.read_text()
    today = driven_clock.now().astimezone().date()  # `--runs today` picks today's runs; the proposal is dated today
    assert today.isoformat() in proposal.name and (today + timedelta(days=1)).isoformat() not in proposal.read_text()
    listed = home.run("trials", "list", check=True).stdout  # both trials, each with its verdict
    assert "not better: 0/2 vs 2/2 checks passed; not proposed" in listed and "proposed in Drafts/" in listed, listed
    home.run("approve", str(proposal.relative_to(home.vault)), check=True)
    after = parse_frontmatter((home.vault / "Agents" / "Planner.md").read_text())
    assert "VARIANT-BETTER: plan the day in two blocks at most." in after.body
    assert after.data["model"] == parse_frontmatter(before).data["model"]  # its properties kept
    assert "planner" in home.run("agent", "show", "planner").stdout  # still a valid agent note
    # The keep-rate is counted per version of the note: the runs before the approval and the one after.
    third = home.run("fire", "planner", check=True)
    assert "09:00–10:30 Draft the pilot spec" in daily.read_text(), (third.stdout, daily.read_text())
    driven_clock.move_to(driven_clock.now() + timedelta(days=3))
    rates = json.loads(home.run("runs", "keep", "--json", check=True).stdout)["rates"]
    versions = [r for r in rates if r["by"] == "version"]
    assert len(versions) == 2 and all(r["name"].startswith("planner@") for r in versions), rates
    # One section each: the old note's (its second run wrote the same text, so no new one), and the new's.
    assert sorted(r["sections"] for r in versions) == [1, 1]
    old, new = sorted(versions, key=lambda r: r["kept"])
    assert old["kept"] < 0.5 and new["kept"] == 1.0  # the person rewrote the old note's Plan, kept the new one
