"""Reading notes: frontmatter (also broken), wikilinks and their resolution."""

from __future__ import annotations

from routine.vault import (
    join_frontmatter,
    parse_frontmatter,
    read_note,
    resolve_wikilink,
    split_frontmatter,
    update_frontmatter,
    wikilink_for,
    wikilinks,
)

BROKEN = "---\ntitle: [unclosed\ntags: x\n---\nBody words.\n"


def test_split_and_join_frontmatter():
    data, body = split_frontmatter("---\ntitle: Day\ntags: [a, b]\n---\nHello\n")
    assert data == {"title": "Day", "tags": ["a", "b"]}
    assert body == "Hello\n"
    assert join_frontmatter({"b": 1, "a": "ü"}, "x\n") == "---\nb: 1\na: ü\n---\nx\n"  # order kept, unicode
    assert join_frontmatter({}, "x\n") == "x\n"
    assert join_frontmatter({"approved": None}, "") == "---\napproved:\n---\n"


def test_broken_frontmatter_loses_nothing():
    data, body = split_frontmatter(BROKEN)
    assert data == {}
    assert body == BROKEN
    assert join_frontmatter(data, body) == BROKEN
    split = parse_frontmatter(BROKEN)
    assert not split.readable and split.block + split.body == BROKEN
    assert update_frontmatter(split, {"agent": "x"}) == split.block


def test_a_leading_rule_without_closing_line_is_body():
    text = "---\njust a rule\n"
    assert split_frontmatter(text) == ({}, text)


def test_update_frontmatter_keeps_comments_and_order():
    text = "---\n# my comment\ntitle: Day   # inline\nagent: old\nmood: good\n---\nbody\n"
    split = parse_frontmatter(text)
    block = update_frontmatter(split, {"agent": "strategist", "run": "r1"})
    assert block == "---\n# my comment\ntitle: Day   # inline\nagent: strategist\nmood: good\nrun: r1\n---\n"


def test_read_note_tolerates_bom_and_crlf(tmp_path):
    (tmp_path / "Daily").mkdir()
    (tmp_path / "Daily" / "My Day.md").write_bytes("\ufeff---\r\ntitle: Day\r\n---\r\nSee [[OKRs]]\r\n".encode())
    note = read_note(tmp_path, "Daily/My Day.md")
    assert note.frontmatter == {"title": "Day"}
    assert note.body == "See [[OKRs]]\n"
    assert note.name == "My Day"
    assert note.links == ["OKRs"]
    assert note.mtime > 0


def test_read_note_with_broken_frontmatter_keeps_it_in_the_body(tmp_path):
    (tmp_path / "x.md").write_text(BROKEN)
    note = read_note(tmp_path, "x.md")
    assert note.frontmatter == {} and note.body == BROKEN and note.frontmatter_error


def test_wikilinks_forms_and_code():
    text = ("[[Plain]] and [[Aliased|shown]], [[Headed#Part]], ![[embed.png]], [[Plain]] again.\n"
            "| [[Table\\|alias]] |\n"
            "`[[InlineCode]]` and ``[[Double `tick` code]]``\n"
            "```\n[[Fenced]]\n```\n"
            "~~~~\n[[Tilde fenced]]\n~~~~\n"
            "[[#Same note heading]] [[Folder/Deep note]]\n")
    assert wikilinks(text) == ["Plain", "Aliased", "Headed", "embed.png", "Table", "Folder/Deep note"]


def test_resolve_wikilink(tmp_path):
    for rel in ["OKRs.md", "Plans/okrs.md", "Archive/2024/OKRs.md", ".trash/Ghost.md", ".obsidian/Ghost.md",
                "Projects/Big Idea/Notes.md", "Research/Notes.md", "img/photo.png"]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x")
    assert resolve_wikilink(tmp_path, "OKRs") == "OKRs.md"                  # shortest path wins
    assert resolve_wikilink(tmp_path, "okrs") == "OKRs.md"                  # case-insensitive
    assert resolve_wikilink(tmp_path, "Plans/okrs") == "Plans/okrs.md"      # a path is a path
    assert resolve_wikilink(tmp_path, "Big Idea/Notes") == "Projects/Big Idea/Notes.md"  # path suffix
    assert resolve_wikilink(tmp_path, "Notes") == "Research/Notes.md"
    assert resolve_wikilink(tmp_path, "[[Notes|alias]]") == "Research/Notes.md"
    assert resolve_wikilink(tmp_path, "photo.png") == "img/photo.png"
    assert resolve_wikilink(tmp_path, "Ghost") is None                      # hidden folders skipped
    assert resolve_wikilink(tmp_path, "../etc/passwd") is None
    assert resolve_wikilink(tmp_path, "Missing") is None


def test_wikilink_for():
    assert wikilink_for("Daily/2026-11-22.md") == "[[Daily/2026-11-22]]"
    assert wikilink_for("Plans/Project Map.md") == "[[Plans/Project Map]]"


def test_bookkeeping_keeps_the_persons_anchors_and_multi_line_flow_maps_exactly():
    """Only the `routine:` line changes: a flow map the person wrapped over lines (unindented, with
    a key that looks like routine's), an anchor and its alias, their comments: all as they were."""
    from datetime import datetime, timezone

    from routine.vault.bookkeeping import Provenance, stamped_block

    prov = Provenance("planner", "qwen", "20261127-0900-ab12", datetime(2026, 11, 27, 9, tzinfo=timezone.utc))
    wrapped = "---\n# my meta\nmeta: {a: 1,\nroutine: 2}  # wrapped\nbase: &b [x, y]  # anchor\nalso: *b\n---\n"
    out = stamped_block(parse_frontmatter(wrapped + "body\n"), prov)
    assert out.startswith(wrapped[:-4]) and out.count("\n") == wrapped.count("\n") + 1, out
    assert parse_frontmatter(out + "body\n").data["routine"]["agent"] == "planner"

    anchored = "---\nroutine: &r {agent: critic, run: r1, at: '2026-11-26T09:00:00Z'}\n# mine\ncopy: *r\n---\n"
    out = stamped_block(parse_frontmatter(anchored + "body\n"), prov)
    assert out.split("\n")[2:] == anchored.split("\n")[2:] and out.startswith("---\nroutine: &r {agent: planner,"), out
    assert parse_frontmatter(out + "body\n").data["copy"]["agent"] == "planner"
