"""Search that finds what the person means: titles and exact words count, and agents do not feed
on routine's own archives, agent notes or empty notes.

The vectors come from the Ollama stand-in (a deterministic vector per text, unrelated to its
meaning), so whatever ranks a note first here is the keyword half of the ranking.
"""

from __future__ import annotations

import pytest

from routine.memory import VaultIndex
from routine.memory.chunks import chunk_note
from test_memory_index import setup, write  # noqa: F401  (the fixture)


@pytest.fixture
def crowded(setup):  # noqa: F811
    config, state, vault, ollama = setup
    for i in range(40):
        write(vault, f"Projects/Filler {i}.md", f"# Filler {i}\n\nSupplier notes, calls and dates, item {i}.\n")
    return config, state, vault


def top(index, query, **kw):
    return [h.path for h in index.search(query, k=kw.pop("k", 3), refresh=False, **kw)]


def test_a_note_is_found_by_its_title(crowded):
    config, state, vault = crowded
    write(vault, "Inbox/Supplier call notes.md", "# Monday\n\nAna says the crates arrive late.\n")
    with VaultIndex(config, state) as index:
        index.reconcile()
        assert top(index, "Supplier call notes")[0] == "Inbox/Supplier call notes.md"


def test_exact_dates_and_numbers_match(crowded):
    config, state, vault = crowded
    write(vault, "Projects/Order.md", "# Order\n\nDelivery on 2026-12-01: 340 units from Kestrel.\n")
    with VaultIndex(config, state) as index:
        index.reconcile()
        assert top(index, "2026-12-01")[0] == "Projects/Order.md"
        assert top(index, "340 units")[0] == "Projects/Order.md"


def test_agents_do_not_retrieve_routines_archives_agent_notes_or_empty_notes(crowded):
    config, state, vault = crowded
    query = "battery supplier deadline"
    write(vault, "Archive/Proposals/battery supplier deadline.md", "# Proposal\n\nbattery supplier deadline\n")
    write(vault, "Agents/battery supplier deadline.md", "---\nagent: research\n---\nbattery supplier deadline\n")
    write(vault, "Inbox/battery supplier deadline.md", "")
    write(vault, "Projects/Battery.md", "# Battery\n\nThe supplier's deadline is Friday.\n")
    with VaultIndex(config, state) as index:
        index.reconcile()
        agent = top(index, query, k=5, reads=["**"])
        assert agent[0] == "Projects/Battery.md"
        assert not [p for p in agent if p.startswith(("Archive/", "Agents/", "Inbox/"))], agent
        asked = top(index, query, k=5, reads=["Archive/**", "Projects/**"])  # a scope that names the archive
        assert "Archive/Proposals/battery supplier deadline.md" not in asked, asked  # routine's copy, never
        person = top(index, query, k=5)  # the person's own search shows everything
        assert {"Archive/Proposals/battery supplier deadline.md", "Inbox/battery supplier deadline.md"} <= set(person)


def test_routines_proposals_come_after_the_persons_notes_and_never_reach_an_agent(crowded):
    """`routine search` ranked routine's own `Archive/Proposals/` copies second and third of four:
    now every proposal (open in Drafts/, or archived) and alert comes after the person's notes, and
    an agent never gets one, even with Drafts/ or Archive/ in its reads."""
    config, state, vault = crowded
    query = "kestrel crate pricing"
    proposal = "---\nstatus: proposed\ntarget: '[[Projects/Crates]]'\ntags: [routine/proposal]\n---\n"
    write(vault, "Drafts/2026-11-20 0900 pm proposal for Crates.md", proposal + "kestrel crate pricing, twice\n")
    write(vault, "Archive/Proposals/2026-11-19 0900 pm proposal for Crates.md", proposal + "kestrel crate pricing\n")
    write(vault, "Alerts/kestrel crate pricing.md", "---\ntags: [routine/alert]\n---\nkestrel crate pricing failed\n")
    write(vault, "Archive/Kestrel crates 2025.md", "# Kestrel crates\n\nLast year's crate pricing from Kestrel.\n")
    write(vault, "Projects/Crates.md", "# Crates\n\nKestrel's pricing per crate: 4.20.\n")
    with VaultIndex(config, state) as index:
        index.reconcile()
        person = top(index, query, k=6)
        routines = [i for i, p in enumerate(person) if p.startswith(("Drafts/", "Archive/Proposals/", "Alerts/"))]
        theirs = [i for i, p in enumerate(person) if p in ("Projects/Crates.md", "Archive/Kestrel crates 2025.md")]
        assert len(routines) == 3 and len(theirs) == 2 and max(theirs) < min(routines), person
        agent = top(index, query, k=6, reads=["Drafts/**", "Archive/**", "Projects/**", "Alerts/**"])
        assert set(agent) >= {"Projects/Crates.md", "Archive/Kestrel crates 2025.md"}, agent
        assert not [p for p in agent if p.startswith(("Drafts/", "Archive/Proposals/", "Alerts/"))], agent


def test_a_notes_properties_are_indexed_with_its_first_chunk():
    chunks = chunk_note("Projects/Hooli.md", "---\nclient: Hooli\nstatus: active\n---\n# Kickoff\n\nWe met.\n", 1000)
    assert "client: Hooli; status: active" in chunks[0].text
    assert "Hooli; status" not in chunks[0].body  # what a model or a person reads is the note's own text


def test_search_without_the_daemon_says_the_model_is_loading(initialised):
    home = initialised
    home.config.write_text(home.config.read_text() + "memory: {embedding_model: 'ollama:nomic-embed-text'}\n")
    (home.vault / "Inbox" / "Supplier call notes.md").write_text("Ana says the crates arrive late.\n")
    proc = home.run("search", "Supplier call notes", check=True)
    assert "no daemon is running, so the search model (ollama:nomic-embed-text) loads here first" in proc.stderr
    assert proc.stdout.startswith("1. [[Inbox/Supplier call notes]]")


def test_sync_conflict_copies_and_editor_backups_are_not_indexed(setup):  # noqa: F811
    """One rule for what is a note: what the watcher ignores, the index leaves out too."""
    config, state, vault, ollama = setup
    copy = write(vault, "Projects/Alpha.sync-conflict-20261122-101010-ABCDEFG.md", "# Alpha\n\nThe old budget.\n")
    write(vault, "Projects/Alpha (conflicted copy 2026-11-22).md", "# Alpha\n\nAnother old budget.\n")
    with VaultIndex(config, state) as index:
        index.reconcile()
        found = top(index, "Alpha old budget", k=10)
        assert not [p for p in found if "conflict" in p], found
        index.update_paths([copy.relative_to(vault).as_posix()])  # a watch event for it changes nothing
        assert not [p for p in top(index, "Alpha old budget", k=10) if "conflict" in p]
