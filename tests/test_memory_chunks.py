"""Cutting notes along their headings: what an agent can cite, and what is embedded again."""

from __future__ import annotations

import textwrap

from routine.memory.chunks import chunk_note

NOTE = textwrap.dedent("""\
    ---
    tags: [project, "#alpha"]
    ---
    Opening words before any heading.

    # Alpha

    ## Risks
    The supplier may slip. See [[Beta]] and [[Plans/OKRs#KR 1|the KR]]. #risk

    ```bash
    # not a heading, and [[Not a link]] #nottag
    ```

    ## Budget
    %% routine:begin planner %%
    Ten thousand euros left.
    %% routine:end planner %%
    %% a hidden comment
    over two lines %%
    """)


def test_sections_are_cut_at_headings_with_their_trail_and_metadata():
    chunks = chunk_note("Projects/Alpha.md", NOTE, 1000)
    assert [c.heading for c in chunks] == [None, "Risks", "Budget"]
    opening, risks, budget = chunks
    assert opening.body == "Opening words before any heading."
    assert risks.text.startswith("Alpha\nAlpha > Risks\n\n")  # the title and heading trail are embedded too
    assert "# not a heading" in risks.body  # a '#' line in a code fence stays text
    assert risks.links == ("Beta", "Plans/OKRs")
    assert risks.tags == ("project", "alpha", "risk")
    assert budget.body == "Ten thousand euros left."  # routine's markers and hidden comments are not content
    assert budget.tags == ("project", "alpha")


def test_an_edit_in_one_section_changes_only_that_chunk():
    before = chunk_note("Projects/Alpha.md", NOTE, 1000)
    after = chunk_note("Projects/Alpha.md", NOTE.replace("Ten thousand", "Nine thousand"), 1000)
    assert [c.id for c in before][:2] == [c.id for c in after][:2]
    assert before[2].id != after[2].id


def test_the_same_text_in_another_note_has_another_id_but_the_same_hash():
    a = chunk_note("Projects/Alpha.md", NOTE, 1000)
    b = chunk_note("Archive/Alpha.md", NOTE, 1000)  # moved: the vector can be reused
    assert [c.sha for c in a] == [c.sha for c in b]
    assert not {c.id for c in a} & {c.id for c in b}


def test_a_long_section_is_cut_at_paragraphs_within_the_limit():
    paragraphs = [f"Paragraph {i}: " + "word " * 60 for i in range(12)]
    text = "# Log\n\n" + "\n\n".join(paragraphs) + "\n\n" + "x" * 900
    chunks = chunk_note("Daily/Log.md", text, 400)
    assert len(chunks) > 5
    assert all(len(c.body) <= 400 for c in chunks)
    assert all(c.heading == "Log" for c in chunks)
    assert chunks[0].body.startswith("Paragraph 0:")
    assert "".join(c.body for c in chunks).count("x") == 900  # nothing lost


def test_an_empty_note_still_has_one_chunk_found_by_its_title():
    (only,) = chunk_note("Inbox/Call Ana.md", "---\ntags: todo\n---\n", 1000)
    assert only.body == "" and only.heading is None and only.text.startswith("Call Ana")
    assert only.tags == ("todo",)


def test_unreadable_frontmatter_is_indexed_as_text():
    chunks = chunk_note("Inbox/x.md", "---\n: [broken\n---\nBody words.\n", 1000)
    assert "Body words." in chunks[0].body
