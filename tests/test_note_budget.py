"""Work per change is bounded by the change, not by the note (issue 46): a note pasted with
thousands of links, or tens of thousands of lines, gives the knowledge graph and the search
index's link metadata at most `vault.budget`'s share of it, and the cut is said once in the log
(per note and size), not once per reader call. Real extraction and chunking, no model."""

from __future__ import annotations

import logging

from routine.graph.extract import extract
from routine.graph.model import EdgeType
from routine.memory.chunks import chunk_note
from routine.vault import budget


def links_note(count: int) -> str:
    return "# Links\n\n" + " ".join(f"[[Target {i}]]" for i in range(count)) + "\n"


def cut_lines(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if "larger than routine reads at once" in r.getMessage()]


def test_a_note_of_many_links_gives_the_graph_the_first_ones_and_says_so_once(caplog):
    caplog.set_level(logging.WARNING, logger="routine.vault.budget")
    text = links_note(budget.MAX_LINKS + 1000)
    for _ in range(2):  # the same note read again (a graph reconcile) says nothing more
        facts = extract("Inbox/Links.md", text)
        links = [e.target for e in facts.edges if e.type is EdgeType.LINKS_TO]
        assert links == [f"Target {i}" for i in range(budget.MAX_LINKS)]
    said = cut_lines(caplog)
    assert len(said) == 1, said
    assert "Inbox/Links.md" in said[0] and f"{budget.MAX_LINKS + 1000} links" in said[0] and "split the note" in said[0]


def test_the_index_keeps_the_first_links_of_a_note_in_its_chunks_and_says_so_once(caplog):
    caplog.set_level(logging.WARNING, logger="routine.vault.budget")
    chunks = chunk_note("Inbox/Many.md", links_note(budget.MAX_LINKS * 2), 1500)
    kept = [link for chunk in chunks for link in chunk.links]
    assert len(kept) == budget.MAX_LINKS and kept[:100] == [f"Target {i}" for i in range(100)]  # the first ones
    assert int(kept[-1].split()[1]) < budget.MAX_LINKS + 50  # (a link the chunker cut in two is in neither)
    assert len(chunks) > 1 and chunks[-1].links == ()  # every chunk still there, to be found by its words
    said = cut_lines(caplog)
    assert len(said) == 1 and "search index" in said[0], said


def test_a_note_of_many_lines_is_read_by_the_graph_up_to_its_budget(caplog):
    caplog.set_level(logging.WARNING, logger="routine.vault.budget")
    lines = ["a line of the export"] * (budget.MAX_LINES + 50) + ["[[Past the budget]]"]
    facts = extract("Inbox/Export.md", "[[Early]]\n" + "\n".join(lines) + "\n")
    targets = {e.target for e in facts.edges}
    assert "Early" in targets and "Past the budget" not in targets
    said = cut_lines(caplog)
    assert len(said) == 1 and f"{budget.MAX_LINES} lines" in said[0], said


def test_a_small_note_is_read_whole_and_nothing_is_said(caplog):
    caplog.set_level(logging.WARNING, logger="routine.vault.budget")
    facts = extract("Inbox/Small.md", links_note(50))
    assert len([e for e in facts.edges if e.type is EdgeType.LINKS_TO]) == 50
    assert cut_lines(caplog) == []


def test_a_note_of_one_huge_paragraph_is_read_up_to_its_bytes(caplog):
    caplog.set_level(logging.WARNING, logger="routine.vault.budget")
    text = links_note(100_000)  # 1.7 MB, its links on one line
    facts = extract("Inbox/Links.md", text)
    assert len([e for e in facts.edges if e.type is EdgeType.LINKS_TO]) == budget.MAX_LINKS
    said = cut_lines(caplog)
    assert said and f"reads the first {budget.MAX_BYTES} characters" in said[0], said
