"""The approval queue end to end, through the filesystem, as a person in Obsidian does it:
edit a generated section, get a proposal, tick `approved`, and see it land — or not."""

from __future__ import annotations

import json
import re
import shlex

from test_daemon import daemon, journal_rows, only_schedule, wait_for

MY_EDIT = "My own alignment: ship the battery report first."


def daily(home):
    return next((home.vault / "Daily").glob("*.md"))


def edit_section(home, new_text: str) -> None:
    """The person rewrites the text inside the generated Alignment section."""
    note = daily(home)
    text = note.read_text()
    text = re.sub(r"(%% routine:begin alignment[^\n]*\n)(.*?)(%% routine:end alignment %%)",
                  lambda m: m[1] + new_text + "\n" + m[3], text, flags=re.S)
    note.write_text(text)


def set_property(path, key: str, value: str) -> None:
    """What ticking a checkbox property in Obsidian does to the file."""
    text = path.read_text()
    text = re.sub(rf"(?m)^{key}:.*$", f"{key}: {value}", text, count=1)
    path.write_text(text)


def proposal_after_edit(home):
    home.run("fire", "strategist", check=True)
    edit_section(home, MY_EDIT)
    out = home.run("fire", "strategist", check=True).stdout
    assert "was kept" in out
    proposals = list((home.vault / "Drafts").glob("*.md"))
    assert len(proposals) == 1
    assert "a newer version of this section is waiting" in daily(home).read_text()
    return proposals[0]


def archived(home):
    return list((home.vault / "Archive" / "Proposals").glob("*.md"))


def test_ticking_approved_in_obsidian_applies_the_proposal_and_keeps_the_replaced_words(initialised, ollama):
    home = initialised
    only_schedule(home, "triggers: []\n")
    with daemon(home):
        proposal = proposal_after_edit(home)
        set_property(proposal, "approved", "true")
        wait_for(lambda: not proposal.exists() and archived(home), 20, "the proposal to be applied and archived")
        note = daily(home).read_text()
        assert MY_EDIT not in note and "newer version" not in note
        assert re.search(
            r"%% routine:begin alignment agent=strategist sha=\w+( run=[\w-]+)?( after=\w+)? %%\n- Summary of:", note
        )
        kept = archived(home)[0].read_text()
        assert "status: applied" in kept and "decided_by: obsidian" in kept
        assert "## Replaced text" in kept and MY_EDIT in kept  # the person's words are not lost
        # routine owns the section again: the next run simply updates it.
        ollama.script("mistral:7b-instruct-q4_K_M", ["- A fresh alignment for the afternoon."])
        assert "Updated Alignment" in home.run("fire", "strategist", check=True).stdout
        assert "A fresh alignment" in daily(home).read_text()
    rows = journal_rows(home, "SELECT decision, outcome, by, proposal FROM decisions")
    assert rows == [("approved", "applied", "obsidian", f"Drafts/{proposal.name}")]


def test_an_approval_after_the_person_edited_again_is_a_conflict_not_an_overwrite(initialised, ollama):
    home = initialised
    only_schedule(home, "triggers: []\n")
    second_edit = "Changed my mind: the supplier call comes first."
    with daemon(home):
        proposal = proposal_after_edit(home)
        edit_section(home, second_edit)
        set_property(proposal, "approved", "true")
        wait_for(lambda: "status: conflict" in proposal.read_text(), 20, "the conflict")
        assert second_edit in daily(home).read_text()  # untouched
        text = proposal.read_text()
        assert "changed after this proposal was written" in text and "Nothing was changed" in text
        assert archived(home) == []
        # Knowing that, the person approves again: now it applies over the current text, which is kept.
        set_property(proposal, "status", "proposed")
        set_property(proposal, "approved", "true")
        wait_for(lambda: not proposal.exists(), 20, "the second approval")
        assert second_edit not in daily(home).read_text()
        assert second_edit in archived(home)[0].read_text()
    outcomes = [r[0] for r in journal_rows(home, "SELECT outcome FROM decisions ORDER BY id")]
    assert outcomes == ["conflict", "applied"]


def test_rejecting_archives_the_proposal_and_leaves_the_persons_text(initialised, ollama):
    home = initialised
    only_schedule(home, "triggers: []\n")
    with daemon(home):
        proposal = proposal_after_edit(home)
        set_property(proposal, "approved", "false")
        wait_for(lambda: not proposal.exists(), 20, "the rejection")
        note = daily(home).read_text()
        assert MY_EDIT in note and "newer version" not in note
        assert "status: rejected" in archived(home)[0].read_text()


def test_an_agent_that_needs_approval_lands_only_when_approved_from_the_cli(initialised, ollama):
    home = initialised
    out = home.run("fire", "builder", check=True).stdout
    assert "need your approval" in out
    assert list((home.vault / "Builds").glob("*.md")) == []
    waiting = json.loads(home.run("approve", "--json", check=True).stdout)
    assert [w["agent"] for w in waiting] == ["builder"] and waiting[0]["target"].startswith("Builds/")
    name = waiting[0]["proposal"].rsplit("/", 1)[1][:-3]
    done = home.run("approve", name, check=True).stdout
    assert "Created [[Builds/" in done
    built = list((home.vault / "Builds").glob("*.md"))
    assert len(built) == 1 and "agent: builder" in built[0].read_text()
    assert home.run("approve", check=True).stdout.startswith("No proposals are waiting")
    assert journal_rows(home, "SELECT by, outcome FROM decisions") == [("cli", "applied")]


def test_a_conflict_stays_a_conflict_until_the_person_forces_it_from_the_cli(initialised, ollama):
    home = initialised
    only_schedule(home, "triggers: []\n")
    proposal = proposal_after_edit(home)
    second_edit = "Changed my mind: the supplier call comes first."
    edit_section(home, second_edit)
    rel = str(proposal.relative_to(home.vault))
    for _ in range(2):  # running the same command again must not apply it over the newer edit
        proc = home.run("approve", rel)
        assert proc.returncode == 1 and "conflict" in proc.stdout, proc.stdout + proc.stderr
        assert second_edit in daily(home).read_text() and proposal.exists()
    pasted = re.search(r"`(routine approve .+ --force)`", proc.stdout)[1]  # as the person copies it
    assert " " in rel and pasted == f"routine approve {shlex.quote(rel)} --force", proc.stdout
    forced = home.run(*shlex.split(pasted)[1:], check=True).stdout
    assert "Forced: it replaced" in forced and second_edit[:30] in forced
    assert second_edit not in daily(home).read_text()
    assert second_edit in archived(home)[0].read_text()
    outcomes = [r[0] for r in journal_rows(home, "SELECT outcome FROM decisions ORDER BY id")]
    assert outcomes == ["conflict", "applied"]


def test_rejecting_a_section_proposal_whose_section_property_was_deleted_archives_it(initialised, ollama):
    home = initialised
    only_schedule(home, "triggers: []\n")
    proposal = proposal_after_edit(home)
    proposal.write_text(re.sub(r"(?m)^section:.*\n", "", proposal.read_text(), count=1))
    rel = str(proposal.relative_to(home.vault))
    approved = home.run("approve", rel)  # the edit broke the seal: refused, in a sentence
    assert approved.returncode == 1 and "not a proposal routine made" in approved.stdout, (
        approved.stdout + approved.stderr
    )
    rejected = home.run("approve", rel, "--reject")
    assert rejected.returncode == 0 and "Traceback" not in rejected.stderr, rejected.stdout + rejected.stderr
    assert "status: rejected" in archived(home)[0].read_text() and not proposal.exists()
    assert MY_EDIT in daily(home).read_text()  # the person's text is untouched


def test_a_proposal_deleted_while_it_was_being_decided_is_still_archived(tmp_path):
    from datetime import datetime, timezone

    from routine.vault.approvals import archive, read_proposal
    from routine.vault.proposals import ProposalStatus, write_proposal

    (tmp_path / "Daily").mkdir()
    rel = write_proposal(tmp_path, "Drafts", target_rel="Daily/Today.md", section="Alignment", proposed="Ship it.",
                         current=None, reason="A newer alignment.", agent="strategist", model="m", run="r1",
                         generated=datetime(2026, 11, 27, 9, tzinfo=timezone.utc), sources=[])
    proposal = read_proposal(tmp_path, rel)
    (tmp_path / rel).unlink()  # the person deleted it after routine read the decision
    kept = archive(
        tmp_path, proposal, "Archive", ProposalStatus.APPLIED, "obsidian",
        datetime(2026, 11, 27, 10, tzinfo=timezone.utc)
    )
    text = (tmp_path / kept).read_text()
    assert "status: applied" in text and "Ship it." in text
    assert not (tmp_path / rel).exists()


def test_approving_after_the_target_was_renamed_follows_the_rename(initialised, ollama):
    """A synced collaborator (or Obsidian) renames the daily note while a proposal for its
    section waits: the approval lands in the renamed note; no new note appears beside it."""
    home = initialised
    proposal = proposal_after_edit(home)
    old = daily(home)
    renamed = old.with_name("Renamed day.md")
    old.rename(renamed)
    done = home.run("approve", str(proposal.relative_to(home.vault)))
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"(it was renamed from [[Daily/{old.stem}]])" in done.stdout
    assert not old.exists() and [p.name for p in (home.vault / "Daily").glob("*.md")] == ["Renamed day.md"]
    note = renamed.read_text()
    assert MY_EDIT not in note and "newer version" not in note and "- Summary of:" in note
    assert MY_EDIT in archived(home)[0].read_text()


def test_approving_after_the_target_was_deleted_never_creates_it_again(initialised, ollama):
    home = initialised
    proposal = proposal_after_edit(home)
    old = daily(home)
    old.unlink()
    rel = str(proposal.relative_to(home.vault))
    for args in ((rel,), (rel, "--force")):
        done = home.run("approve", *args)
        assert done.returncode == 1 and "Traceback" not in done.stderr, done.stdout + done.stderr
        assert f"[[Daily/{old.stem}]] no longer exists" in done.stdout and "was not created again" in done.stdout
        assert not old.exists() and proposal.exists() and archived(home) == []
    assert "status: conflict" in proposal.read_text()


def test_the_readme_says_how_a_conflict_is_applied_as_the_flow_and_the_proposal_do():
    """The two ways the flow applies a conflict over the person's text (tests above) are the ones
    the README and the proposal's own callout name; `routine approve` again without --force refuses."""
    from pathlib import Path

    readme = " ".join((Path(__file__).parent.parent / "README.md").read_text().split())
    paragraph = readme[readme.index("if you changed that part of the note since"):][:700]
    assert "`routine approve NOTE --force`" in paragraph
    assert "`status: proposed` and `approved: true` again" in paragraph, paragraph
    assert "`routine approve NOTE` again refuses" in paragraph
