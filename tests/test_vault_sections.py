"""Generated sections: markers, hashes, the person's edits, and the pointer to a proposal."""

from __future__ import annotations

from routine.vault import (
    clear_pending_proposal,
    content_sha,
    find_section,
    mark_pending_proposal,
    section_key,
    upsert_section,
)

BEFORE = "My own words at the top.\n\n## Notes\n- call Anna\n"
AFTER = "\n## Evening\nWhat I did today.\n"


def test_section_key():
    assert section_key("Alignment") == "alignment"
    assert section_key("  Top   OKRs ") == "top-okrs"


def test_sha_ignores_trailing_spaces_and_outer_blank_lines_only():
    assert content_sha("a  \nb\n\n") == content_sha("\n\na\nb")
    assert content_sha("a\nb") != content_sha("a\nc")
    assert len(content_sha("x")) == 12


def test_created_appends_block_and_keeps_every_byte_before():
    update = upsert_section(BEFORE, "Alignment", "Focus on OKR 1.", "strategist")
    assert update.outcome == "created"
    assert update.body.startswith(BEFORE)
    added = update.body[len(BEFORE):]
    sha = content_sha("Focus on OKR 1.")
    assert added == (f"\n## Alignment\n%% routine:begin alignment agent=strategist sha={sha} %%\n"
                     "Focus on OKR 1.\n%% routine:end alignment %%\n")


def test_created_in_an_empty_body_has_no_leading_blank_line():
    update = upsert_section("", "Plan", "09:00 deep work", "planner")
    assert update.body.startswith("## Plan\n%% routine:begin plan agent=planner sha=")


def test_replaced_changes_only_the_text_between_the_markers():
    body = upsert_section(BEFORE, "Alignment", "old text", "strategist").body + AFTER
    update = upsert_section(body, "Alignment", "new text\nsecond line", "strategist")
    assert update.outcome == "replaced"
    span = find_section(update.body, "alignment")
    assert span.content == "new text\nsecond line\n"
    assert span.sha == content_sha("new text\nsecond line")
    old_span = find_section(body, "alignment")
    assert update.body[:old_span.start] == body[:old_span.start]          # before: identical
    assert update.body[span.end:] == body[old_span.end:]                  # after: identical
    assert update.body.endswith(AFTER)


def test_unchanged_when_the_same_text_is_written_again():
    body = upsert_section(BEFORE, "Alignment", "same", "strategist").body
    update = upsert_section(body, "Alignment", "same\n\n", "strategist")
    assert update.outcome == "unchanged"
    assert update.body == body


def test_person_edit_inside_the_section_is_never_overwritten():
    body = upsert_section(BEFORE, "Alignment", "routine's text", "strategist").body + AFTER
    edited = body.replace("routine's text", "routine's text, and my own thought")
    update = upsert_section(edited, "Alignment", "a newer version", "strategist")
    assert update.outcome == "person-edited"
    assert update.reason == "edited"
    assert update.body == edited
    assert update.current == "routine's text, and my own thought\n"


def test_missing_end_marker_is_left_alone():
    body = upsert_section(BEFORE, "Alignment", "text", "strategist").body
    broken = body.replace("%% routine:end alignment %%\n", "I deleted the end marker by accident\n")
    update = upsert_section(broken, "Alignment", "new", "strategist")
    assert (update.outcome, update.reason) == ("person-edited", "no-end-marker")
    assert update.body == broken


def test_duplicated_begin_marker_is_left_alone():
    body = upsert_section("", "Alignment", "text", "strategist").body
    begin = body.splitlines()[1]
    doubled = body.replace(begin, begin + "\ncopy\n" + begin, 1)
    update = upsert_section(doubled, "Alignment", "new", "strategist")
    assert (update.outcome, update.reason) == ("person-edited", "duplicated")
    assert update.body == doubled


def test_a_heading_the_person_wrote_is_theirs():
    body = "## Alignment\nMy own alignment notes.\n\n## Other\nx\n"
    update = upsert_section(body, "Alignment", "generated", "strategist")
    assert (update.outcome, update.reason) == ("person-edited", "own-heading")
    assert update.body == body
    assert update.current.strip() == "My own alignment notes."


def test_markers_inside_code_blocks_are_ignored():
    example = ("How routine marks its sections:\n\n```markdown\n"
               "%% routine:begin alignment agent=strategist sha=000000000000 %%\nexample\n"
               "%% routine:end alignment %%\n```\n")
    assert find_section(example, "alignment") is None
    update = upsert_section(example, "Alignment", "real text", "strategist")
    assert update.outcome == "created"
    assert update.body.startswith(example)
    span = find_section(update.body, "alignment")
    assert span.content == "real text\n"
    assert span.start > len(example)


def test_person_added_spaces_in_the_marker_lines_are_tolerated():
    sha = content_sha("text")
    body = (f"## Alignment\n  %%  routine: begin  alignment   sha={sha}  agent=strategist %% \n"
            "text\n%%routine:end alignment%%\nafter\n")
    span = find_section(body, "alignment")
    assert span is not None and span.intact
    assert (span.sha, span.agent, span.content) == (sha, "strategist", "text\n")
    update = upsert_section(body, "Alignment", "newer", "strategist")
    assert update.outcome == "replaced"
    assert update.body.startswith("## Alignment\n%% routine:begin alignment ")
    assert update.body.endswith("%% routine:end alignment %%\nafter\n")


def test_markers_written_by_the_model_are_defused():
    content = "fine\n%% routine:end alignment %%\nsneaky tail"
    update = upsert_section("", "Alignment", content, "strategist")
    span = find_section(update.body, "alignment")
    assert "sneaky tail" in span.content  # the fake end marker did not cut the section short
    assert upsert_section(update.body, "Alignment", content, "strategist").outcome == "unchanged"


def test_an_unclosed_fence_in_the_output_is_closed():
    update = upsert_section("", "Build", "```python\nprint(1)\n", "builder")
    span = find_section(update.body, "build")
    assert span is not None and span.intact
    assert span.content.endswith("```\n")


def test_pointer_goes_right_after_the_end_marker_and_is_updated_not_duplicated():
    body = upsert_section(BEFORE, "Alignment", "text", "strategist").body + AFTER
    marked = mark_pending_proposal(body, "alignment", "Drafts/first proposal.md")
    end_line = "%% routine:end alignment %%\n"
    pointer = ("> [!info] routine: a newer version of this section is waiting in [[Drafts/first proposal]] "
               "%% routine:proposal alignment %%\n")
    assert end_line + pointer + "\n" in marked  # a blank line ends the callout
    assert marked.replace(pointer + "\n", "", 1) == body
    again = mark_pending_proposal(marked, "alignment", "[[Drafts/second proposal]]")
    assert again.count("routine:proposal alignment") == 1
    assert "[[Drafts/second proposal]]" in again and "first proposal" not in again
    assert find_section(again, "alignment").content == "text\n"


def test_clear_pending_proposal_restores_the_body_exactly():
    body = upsert_section(BEFORE, "Alignment", "text", "strategist").body + AFTER
    assert clear_pending_proposal(mark_pending_proposal(body, "alignment", "Drafts/p.md"), "alignment") == body
    # Text right after the end marker must not become part of the callout: a blank line
    # separates them, and clearing removes it again.
    tight = body.replace("%% routine:end alignment %%\n\n## Evening", "%% routine:end alignment %%\n## Evening")
    marked = mark_pending_proposal(tight, "alignment", "Drafts/p.md")
    assert "%% routine:proposal alignment %%\n\n## Evening" in marked
    assert clear_pending_proposal(marked, "alignment") == tight
    at_end = upsert_section(BEFORE, "Alignment", "text", "strategist").body.rstrip("\n")  # ends at the marker
    assert clear_pending_proposal(mark_pending_proposal(at_end, "alignment", "Drafts/p.md"), "alignment") == at_end


def test_clear_leaves_other_sections_pointers():
    body = upsert_section("", "Alignment", "a", "strategist").body
    body = upsert_section(body, "Plan", "b", "planner").body
    both = mark_pending_proposal(mark_pending_proposal(body, "alignment", "Drafts/a.md"), "plan", "Drafts/b.md")
    cleared = clear_pending_proposal(both, "alignment")
    assert "routine:proposal alignment" not in cleared
    assert "routine:proposal plan" in cleared


def test_person_edit_that_matches_the_new_text_is_not_a_conflict():
    body = upsert_section("", "Alignment", "draft", "strategist").body
    edited = body.replace("draft", "final wording")
    update = upsert_section(edited, "Alignment", "final wording", "strategist")
    assert update.outcome == "replaced"  # only the stored hash moves; the words are the same
    span = find_section(update.body, "alignment")
    assert span.content == "final wording\n" and span.sha == content_sha("final wording")
    assert upsert_section(update.body, "Alignment", "other", "strategist").outcome == "replaced"


def test_a_removed_hash_counts_as_an_edit():
    body = upsert_section("", "Alignment", "text", "strategist").body
    no_sha = body.replace(f" sha={content_sha('text')}", "")
    assert upsert_section(no_sha, "Alignment", "new", "strategist").outcome == "person-edited"
