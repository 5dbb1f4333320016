"""write_output and the atomic writes under it, on real files: the person's words survive."""

from __future__ import annotations

import os
import stat
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

import routine.vault.writer as writer_module
from routine.errors import NoteExists, ScopeError
from routine.vault import (
    NoteChanged,
    Provenance,
    WriteTarget,
    atomic_create,
    atomic_write,
    find_section,
    split_frontmatter,
    write_output,
)

DAY = "Daily/2026-11-22.md"
WHEN = datetime(2026, 11, 22, 7, 30, tzinfo=timezone(timedelta(hours=1)))
PERSON_FRONT = "---\ntitle: Sunday   # I like this title\ntags: [daily]\nmood: calm\n---\n"
PERSON_BEFORE = "I woke up early.\n\n## Notes\n- call Anna\n"
PERSON_AFTER = "\n## Evening\nWhat went well.\n"
SECTION = "Alignment"


def prov(agent="strategist", run="run-1", sources=("Plans/OKRs.md",)) -> Provenance:
    return Provenance(agent=agent, model="ollama_chat/mistral:7b", run=run, generated=WHEN, sources=list(sources))


def section_write(vault, content, agent="strategist", run="run-1", writes=("Daily/**",), **kw):
    return write_output(vault, WriteTarget(note=DAY, section=SECTION), content, prov(agent, run), list(writes), **kw)


def leftovers(vault: Path) -> list[str]:
    return [str(p) for p in vault.rglob("*") if ".routine-tmp-" in p.name]


@pytest.fixture
def vault(tmp_path) -> Path:
    root = tmp_path / "vault"
    (root / "Daily").mkdir(parents=True)
    (root / "Plans").mkdir()
    (root / "Plans" / "OKRs.md").write_text("# OKRs\n")
    return root


def front_and_body(path: Path) -> tuple[dict, str]:
    return split_frontmatter(path.read_text(encoding="utf-8"))


def test_section_created_keeps_the_persons_note_and_records_provenance(vault):
    note = vault / DAY
    note.write_text(PERSON_FRONT + PERSON_BEFORE)
    result = section_write(vault, "Focus on OKR 1, see [[OKRs]].")
    assert (result.outcome, result.rel, result.proposal_rel) == ("created", DAY, None)
    text = note.read_text()
    assert "title: Sunday   # I like this title\n" in text   # their comment survives
    data, body = front_and_body(note)
    assert list(data)[:3] == ["title", "tags", "mood"]
    assert (data["title"], data["mood"]) == ("Sunday", "calm")
    assert "tags: [daily]\n" in text   # the person's flow list, as they wrote it
    # One small property says who wrote last; the run's sources are in the journal.
    assert data["routine"] == {"agent": "strategist", "run": "run-1", "at": "2026-11-22T07:30:00+01:00"}
    assert not {"agent", "model", "run", "generated", "sources"} & set(data)
    assert body.startswith(PERSON_BEFORE)
    assert find_section(body, "alignment").content == "Focus on OKR 1, see [[OKRs]].\n"
    assert leftovers(vault) == []


def test_section_replaced_changes_only_that_section(vault):
    note = vault / DAY
    note.write_text(PERSON_FRONT + PERSON_BEFORE)
    section_write(vault, "first version")
    write_output(vault, WriteTarget(note=DAY, section="Plan"), "09:00 deep work", prov("planner"), ["Daily/**"])
    with note.open("a") as handle:
        handle.write(PERSON_AFTER)
    _, before = front_and_body(note)
    result = section_write(vault, "second version", run="run-2")
    assert result.outcome == "replaced"
    data, after = front_and_body(note)
    old, new = find_section(before, "alignment"), find_section(after, "alignment")
    assert new.content == "second version\n"
    assert after[:new.start] == before[:old.start]     # the person's text before: byte-identical
    assert after[new.end:] == before[old.end:]         # the Plan section and their evening notes too
    assert after.endswith("09:00 deep work\n%% routine:end plan %%\n" + PERSON_AFTER)
    # The note's property names the latest write; each section's marker names its own agent and run.
    assert data["routine"]["run"] == "run-2" and data["mood"] == "calm" and data["tags"] == ["daily"]
    assert "routine:begin plan agent=planner" in after and "run=run-1" in after


def test_unchanged_section_is_not_rewritten(vault):
    section_write(vault, "same")
    before = (vault / DAY).read_bytes()
    os.utime(vault / DAY, (1, 1))
    assert section_write(vault, "same", run="run-2").outcome == "unchanged"
    assert (vault / DAY).read_bytes() == before
    assert (vault / DAY).stat().st_mtime == 1


def test_person_edit_is_kept_and_the_new_text_becomes_a_proposal(vault):
    note = vault / DAY
    note.write_text(PERSON_FRONT + PERSON_BEFORE)
    section_write(vault, "Ship the beta.")
    edited = note.read_text().replace("Ship the beta.", "Ship the beta. My note: not before Friday!")
    note.write_text(edited + PERSON_AFTER)
    kept = note.read_text()

    result = section_write(vault, "Ship the beta today.", run="run-2")
    assert result.outcome == "proposal"
    assert result.message.startswith(f"Your edit of Alignment in {DAY} was kept; the new version is in [[Drafts/")
    text = note.read_text()
    assert "My note: not before Friday!" in text
    assert text.count("routine:proposal alignment") == 1
    pointer_free = text.replace(next(line for line in text.splitlines(True) if "routine:proposal" in line) + "\n", "")
    assert pointer_free == kept                      # the only change: routine's own pointer line
    assert f"[[{result.proposal_rel[:-3]}]]" in text

    proposal = (vault / result.proposal_rel).read_text()
    data, body = split_frontmatter(proposal)
    assert result.proposal_rel == "Drafts/2026-11-22 0730 strategist proposal for 2026-11-22.md"
    assert data["status"] == "proposed" and data["approved"] is None
    assert (data["target"], data["section"], data["run"]) == ("[[Daily/2026-11-22]]", "Alignment", "run-2")
    assert data["tags"] == ["routine/proposal"] and data["sources"] == ["[[Plans/OKRs]]"]
    assert "\napproved:\n" in proposal
    assert body.startswith("You edited this section after routine wrote it, so routine did not overwrite it.")
    assert "## Proposed text\n\nShip the beta today.\n" in body
    assert "```diff\n" in body
    assert "-Ship the beta. My note: not before Friday!\n+Ship the beta today.\n" in body

    # A later run, with the person's edit still there: a new proposal, the one pointer updated.
    later = section_write(vault, "Ship the beta tomorrow.", run="run-3")
    assert later.outcome == "proposal" and later.proposal_rel.endswith("2026-11-22-2.md")
    text = note.read_text()
    assert text.count("routine:proposal alignment") == 1
    assert f"[[{later.proposal_rel[:-3]}]]" in text and f"[[{result.proposal_rel[:-3]}]]" not in text
    assert "My note: not before Friday!" in text


def test_pointer_is_cleared_when_the_section_is_written_normally_again(vault):
    section_write(vault, "v1")
    note = vault / DAY
    original = note.read_text()
    note.write_text(original.replace("v1", "v1 edited"))
    section_write(vault, "v2")
    assert "routine:proposal" in note.read_text()
    note.write_text(note.read_text().replace("v1 edited", "v1"))  # the person undoes their edit
    assert section_write(vault, "v1").outcome == "unchanged"
    assert "routine:proposal" not in note.read_text()
    assert note.read_text() == original
    assert section_write(vault, "v3").outcome == "replaced"


def test_a_heading_the_person_wrote_gets_a_proposal_not_a_duplicate(vault):
    (vault / DAY).write_text("## Alignment\nMy own plan.\n")
    result = section_write(vault, "generated plan")
    assert result.outcome == "proposal"
    text = (vault / DAY).read_text()
    assert text.count("## Alignment") == 1 and "My own plan." in text and "routine:begin" not in text


def test_broken_frontmatter_is_not_damaged(vault):
    broken = "---\ntitle: [unclosed\nmy: : thoughts\n---\nBody words.\n"
    (vault / DAY).write_text(broken)
    assert section_write(vault, "generated").outcome == "created"
    text = (vault / DAY).read_text()
    assert text.startswith(broken)
    assert "generated\n%% routine:end alignment %%\n" in text


def test_crlf_bom_and_non_utf8_bytes_outside_the_section_survive(vault):
    person = "\ufeffI wrote this on Windows.\r\nCaf\xe9 menu:\r\n".encode("utf-8")
    person = person.replace("Caf\xe9".encode(), b"Caf\xe9")  # a Latin-1 byte, not UTF-8
    (vault / DAY).write_bytes(person)
    section_write(vault, "one\ntwo")
    raw = (vault / DAY).read_bytes()
    assert b"I wrote this on Windows.\r\nCaf\xe9 menu:\r\n" in raw
    assert raw.startswith(b"\xef\xbb\xbf---\r\nroutine: {agent: strategist,") and raw.count(b"\xef\xbb\xbf") == 1
    assert b"\r\none\r\ntwo\r\n%% routine:end alignment %%\r\n" in raw
    assert section_write(vault, "one\ntwo").outcome == "unchanged"


def test_new_note_is_created_with_provenance(vault):
    result = write_output(vault, WriteTarget(note="Research/Edge LLMs.md"), "# Findings\nQuantized 7B fits.",
                          prov("research"), ["Research/**"])
    assert (result.outcome, result.rel) == ("created", "Research/Edge LLMs.md")
    data, body = front_and_body(vault / "Research" / "Edge LLMs.md")
    assert data["routine"]["agent"] == "research" and data["tags"] == ["routine/research"]
    assert body == "# Findings\nQuantized 7B fits.\n"


def test_new_note_target_that_exists_becomes_a_proposal(vault):
    mine = "My research, by hand.\n"
    (vault / "Research").mkdir()
    (vault / "Research" / "Edge LLMs.md").write_text(mine)
    result = write_output(vault, WriteTarget(note="Research/Edge LLMs.md"), "Generated findings.",
                          prov("research"), ["Research/**"])
    assert result.outcome == "proposal"
    assert (vault / "Research" / "Edge LLMs.md").read_text() == mine
    proposal = (vault / result.proposal_rel).read_text()
    assert "routine never replaces a whole note" in proposal and "Generated findings." in proposal


def test_append_creates_then_adds_timestamped_entries(vault):
    target = WriteTarget(append="Inbox/Log.md")
    assert write_output(vault, target, "filed 3 notes", prov("librarian"), ["Inbox/**"]).outcome == "appended"
    log = vault / "Inbox" / "Log.md"
    log.write_text(log.read_text() + "my own line\n")
    write_output(vault, target, "linked 2 notes", prov("librarian", run="run-2"), ["Inbox/**"])
    data, body = front_and_body(log)
    assert body == ("### 07:30 — librarian\nfiled 3 notes\nmy own line\n"
                    "\n### 07:30 — librarian\nlinked 2 notes\n")
    assert data["routine"]["run"] == "run-2"


def test_approval_required_never_touches_the_target(vault):
    (vault / "Builds").mkdir()
    (vault / "Builds" / "Script.md").write_text("old\n")
    result = write_output(vault, WriteTarget(note="Builds/Script.md", section="Code"), "new code",
                          prov("builder"), ["Builds/**"], approval_required=True)
    assert result.outcome == "proposal"
    assert (vault / "Builds" / "Script.md").read_text() == "old\n"
    body = split_frontmatter((vault / result.proposal_rel).read_text())[1]
    assert body.startswith("Builder's writes need your approval.")


def test_out_of_scope_write_is_refused_and_nothing_is_written(vault):
    before = (vault / "Plans" / "OKRs.md").read_text()
    with pytest.raises(ScopeError, match="strategist may not write Plans/OKRs.md"):
        write_output(vault, WriteTarget(note="Plans/OKRs.md", section="X"), "x", prov(), ["Daily/**"])
    assert (vault / "Plans" / "OKRs.md").read_text() == before
    assert not (vault / "Drafts").exists()


def test_proposals_go_to_drafts_even_outside_the_agents_scope(vault):
    section_write(vault, "v1", writes=["Daily/**"])
    (vault / DAY).write_text((vault / DAY).read_text().replace("v1", "mine"))
    result = section_write(vault, "v2", writes=["Daily/**"])
    assert result.proposal_rel.startswith("Drafts/") and (vault / result.proposal_rel).is_file()


def test_an_edit_saved_while_routine_writes_is_not_lost(vault, monkeypatch):
    section_write(vault, "v1")
    real_load = writer_module.load_note_text
    calls = []

    def load_then_person_saves(path):
        current = real_load(path)
        if not calls:  # the person saves just after routine read the note (an edit at the top:
            # an addition at the end would be carried over without reading again)
            path.write_text("typed meanwhile\n" + path.read_text())
        calls.append(path)
        return current

    monkeypatch.setattr(writer_module, "load_note_text", load_then_person_saves)
    assert section_write(vault, "v2").outcome == "replaced"
    assert len(calls) == 2
    text = (vault / DAY).read_text()
    assert "typed meanwhile\n" in text and "v2\n" in text


def test_atomic_write_preserves_mode_and_leaves_no_temp_files(tmp_path):
    note = tmp_path / "n.md"
    note.write_text("old")
    note.chmod(0o640)
    atomic_write(note, "new")
    assert note.read_text() == "new"
    assert stat.S_IMODE(note.stat().st_mode) == 0o640
    atomic_write(tmp_path / "deep" / "er" / "m.md", "made folders")
    assert (tmp_path / "deep" / "er" / "m.md").read_text() == "made folders"
    assert leftovers(tmp_path) == []


def test_atomic_write_failure_keeps_the_old_note_and_removes_the_temp(tmp_path, monkeypatch):
    note = tmp_path / "n.md"
    note.write_text("old")

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError):
        atomic_write(note, "new")
    assert note.read_text() == "old"
    assert leftovers(tmp_path) == []


def test_atomic_write_refuses_when_the_note_changed(tmp_path):
    note = tmp_path / "n.md"
    note.write_text("person's latest")
    with pytest.raises(NoteChanged):
        atomic_write(note, "ours", expected=b"what we read earlier")
    assert note.read_text() == "person's latest"
    assert leftovers(tmp_path) == []


def test_atomic_write_through_a_symlink_keeps_the_link(tmp_path):
    (tmp_path / "real.md").write_text("old")
    (tmp_path / "link.md").symlink_to("real.md")
    atomic_write(tmp_path / "link.md", "new")
    assert (tmp_path / "link.md").is_symlink()
    assert (tmp_path / "real.md").read_text() == "new"


def test_atomic_create_never_replaces(tmp_path):
    note = tmp_path / "n.md"
    atomic_create(note, "first")
    with pytest.raises(NoteExists):
        atomic_create(note, "second")
    assert note.read_text() == "first"
    (tmp_path / "dangling.md").symlink_to(tmp_path / "nowhere.md")
    with pytest.raises(NoteExists):
        atomic_create(tmp_path / "dangling.md", "x")
    assert not (tmp_path / "nowhere.md").exists()
    assert leftovers(tmp_path) == []


def _property_lines(path: Path) -> list[str]:
    text = path.read_text()
    return text.split("---\n")[1].splitlines()


def test_a_month_of_runs_leaves_a_daily_note_with_a_few_lines_of_properties(vault):
    """Five agents writing their sections every day of a month (and a note they create): the
    properties stay small, the person's keep their exact form, no note lists itself as a source."""
    note = vault / DAY
    front = "---\ntitle: Sunday   # I like this title\ntags: [daily]\naliases: [Sun, Sunday 22]\nmood: calm\n---\n"
    note.write_text(front + PERSON_BEFORE)
    agents = ("strategist", "planner", "guardian", "librarian", "pm")
    for day in range(30):
        for agent in agents:
            write_output(vault, WriteTarget(note=DAY, section=agent.title()), f"{agent} on day {day}",
                         Provenance(agent=agent, model=f"ollama_chat/{agent}:7b", run=f"{agent}-{day}",
                                    generated=WHEN + timedelta(days=day), sources=[DAY, "Plans/OKRs.md"]),
                         ["Daily/**"])
    lines = _property_lines(note)
    print(f"properties after {30 * len(agents)} writes: {len(lines)} lines")
    assert len(lines) <= 8, lines
    assert lines[:4] == front.split("---\n")[1].splitlines()  # byte for byte, comment and flow lists kept
    data, _ = front_and_body(note)
    assert data["routine"]["run"] == "pm-29"

    made = write_output(vault, WriteTarget(note="Plans/Summary.md"), "A summary.",
                        Provenance("librarian", "m", "r1", WHEN, sources=["Plans/Summary.md", "Plans/OKRs.md"]),
                        ["Plans/**"])
    assert made.outcome == "created"
    data, _ = front_and_body(vault / "Plans/Summary.md")
    assert data["sources"] == ["[[Plans/OKRs]]"]  # never the note itself
    assert len(_property_lines(vault / "Plans/Summary.md")) <= 3


def test_an_older_versions_bulky_keys_go_on_the_next_write_and_the_persons_stay(vault):
    note = vault / DAY
    old = ("---\ntitle: Sunday   # mine\ntags:\n- daily\n- routine/strategist\n- routine/planner\n"
           "agent:\n- strategist\n- planner\nmodel:\n- ollama_chat/qwen\n- ''\nrun:\n- r1\n- r2,r3\n"
           "generated: '2026-11-21T08:00:00+01:00'\nsources:\n- '[[Daily/2026-11-22]]'\n- '[[Plans/OKRs]]'\n---\n")
    note.write_text(old + PERSON_BEFORE)
    section_write(vault, "fresh", run="r9")
    data, body = front_and_body(note)
    assert data == {"title": "Sunday", "tags": ["daily"],
                    "routine": {"agent": "strategist", "run": "r9", "at": "2026-11-22T07:30:00+01:00"}}
    assert note.read_text().startswith("---\ntitle: Sunday   # mine\ntags: [daily]\n")
    assert body.startswith(PERSON_BEFORE)

    # A person's own `model:` (a note about a car) is theirs: not routine's bookkeeping.
    car = vault / "Daily" / "2026-11-23.md"
    car.write_text("---\nmodel: Zoe\nagent: Bob\ngenerated: yes\ntags: [car]\n---\nNotes.\n")
    write_output(vault, WriteTarget(note="Daily/2026-11-23.md", section=SECTION), "x", prov(), ["Daily/**"])
    assert car.read_text().startswith("---\nmodel: Zoe\nagent: Bob\ngenerated: yes\ntags: [car]\nroutine: {")
