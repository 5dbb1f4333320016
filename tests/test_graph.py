"""The knowledge graph on a small case file: typed edges, one-note updates, a rebuilt cache,
canvases in Obsidian's format, and an agent's view limited to its read scope."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graph_vault import write_case_file
from routine.graph import canvas, views
from routine.graph.cache import GraphCache
from routine.graph.publish import CanvasWriter
from routine.journal import Journal

ALPHA = "Routine/Graphs/Project Alpha.canvas"


@pytest.fixture
def vault(tmp_path) -> Path:
    write_case_file(tmp_path / "Vault")
    return tmp_path / "Vault"


def open_graph(vault: Path, state: Path) -> GraphCache:
    cache = GraphCache(vault, state / "graph.sqlite3")
    cache.reconcile()
    return cache


def edges_of(cache, kind):
    return {(u, v) for u, v, t in cache.graph.g.edges(data="type") if t == kind}


def file_node(doc, rel):
    return next(n for n in doc["nodes"] if n.get("file") == rel)


def test_edges_are_typed_by_where_the_link_stands(vault, tmp_path):
    cache = open_graph(vault, tmp_path / "state")
    assert ("Projects/Alpha/Alpha.md", "Agents/Planner.md") in edges_of(cache, "manager")
    assert ("Projects/Alpha/Alpha.md", "People/Ada.md") in edges_of(cache, "members")
    assert ("Projects/Alpha/Tasks.md#task-1", "Agents/Builder.md") in edges_of(cache, "assigned_to")
    assert ("Projects/Alpha/Tasks.md#task-2", "Projects/Alpha/Market research.md") in edges_of(cache, "result")
    assert ("Projects/Alpha/Pricing page.md", "Projects/Alpha/Market research.md") in edges_of(cache, "derived_from")
    assert ("Projects/Alpha/Alpha.md", "Plans/OKRs.md#KR 1.1") in edges_of(cache, "key_results")
    assert ("Agents/Builder.md", "Projects/Alpha/Pricing page.md") in edges_of(cache, "grounding")
    assert ("Daily/2026-11-20.md", "Projects/Alpha/Alpha.md") in edges_of(cache, "links_to")
    nodes = cache.graph.g.nodes
    assert nodes["Projects/Alpha/Pricing page.md"]["artifact_type"] == "information-product"
    assert nodes["Projects/Alpha/Tasks.md#task-2"]["done"] == "true"
    assert nodes["Plans/OKRs.md#KR 1.1"]["type"] == "key_result"


def test_the_project_canvas_follows_the_json_canvas_rules_and_shows_the_case_file(vault, tmp_path):
    cache = open_graph(vault, tmp_path / "state")
    written = CanvasWriter(vault, tmp_path / "state" / "canvases.json").refresh(cache.graph)
    assert ALPHA in written and "Routine/Graphs/Workspace.canvas" in written
    doc = json.loads((vault / ALPHA).read_text())
    assert canvas.problems(doc) == []
    for node in doc["nodes"]:
        if node["type"] == "file":
            assert (vault / node["file"]).is_file(), node["file"]
    by_id = {n["id"]: n for n in doc["nodes"]}
    def shown(node_id):  # a file node's note, or a text node's first line
        return by_id[node_id].get("file") or by_id[node_id]["text"].split("\n")[0]

    drawn = {(shown(e["fromNode"]), e.get("label"), shown(e["toNode"])) for e in doc["edges"]}
    # members, tasks with their assignees, artifacts with their derivations; a label only where the
    # colour and direction do not say it already (a task's arrow to a person is its assignee)
    assert ("Projects/Alpha/Alpha.md", None, "People/Ada.md") in drawn
    assert ("Projects/Alpha/Alpha.md", "manager", "Agents/Planner.md") in drawn
    assert ("Projects/Alpha/Alpha.md", None, "Agents/Builder.md") in drawn
    assert ("- [ ] Draft the pricing page 📅 2026-12-01", None, "Agents/Builder.md") in drawn
    assert ("Projects/Alpha/Pricing page.md", "derived_from", "Projects/Alpha/Market research.md") in drawn
    assert ("Projects/Alpha/Market research.md", "derived_from", "Research/Datasheet.md") in drawn
    # every card's colour is in the legend, named for its kind
    legend = {n["color"]: n["text"] for n in doc["nodes"]
              if n["type"] == "text" and n.get("color") and "\n" not in n["text"]}
    assert {legend[n["color"]] for n in doc["nodes"] if n.get("color") and n["type"] == "file"} == {
        "project", "person", "agent", "artifact"}
    # Beta's case file is not in Alpha's view
    assert not any(n.get("file", "").startswith("Projects/Beta/") for n in doc["nodes"])


def test_the_validator_catches_what_obsidian_would_refuse():
    good = {"nodes": [{"id": "a", "type": "text", "text": "x", "x": 0, "y": 0, "width": 10, "height": 10}],
            "edges": []}
    assert canvas.problems(good) == []
    bad = {"nodes": [good["nodes"][0], {**good["nodes"][0]}, {"id": "f", "type": "file", "x": 0.5, "y": 0,
                                                               "width": 1, "height": 1}],
           "edges": [{"id": "e", "fromNode": "a", "toNode": "zz", "toEnd": "dot"}]}
    found = "\n".join(canvas.problems(bad))
    assert "not unique" in found and "x must be an integer" in found and "needs the string 'file'" in found
    assert "'zz' is not a node" in found and "toEnd" in found


def test_one_changed_note_reads_only_that_note(vault, tmp_path):
    cache = open_graph(vault, tmp_path / "state")
    before = cache.parsed
    tasks = vault / "Projects/Alpha/Tasks.md"
    tasks.write_text(tasks.read_text().replace("[assignee:: [[Builder]]]", "[assignee:: [[Research]]]"))
    stats = cache.update_paths(["Projects/Alpha/Tasks.md"])
    assert stats.parsed == 1 and cache.parsed == before + 1
    assert ("Projects/Alpha/Tasks.md#task-1", "Agents/Research.md") in edges_of(cache, "assigned_to")
    assert ("Projects/Alpha/Tasks.md#task-1", "Agents/Builder.md") not in edges_of(cache, "assigned_to")
    # A new note that others already link to: read once, and the links into it appear without re-reading them.
    (vault / "Research/Datasheet.md").unlink()
    cache.update_paths(["Research/Datasheet.md"])
    assert "Research/Datasheet.md" not in cache.graph.g
    (vault / "Research/Datasheet.md").write_text("back\n")
    parsed = cache.parsed
    cache.update_paths(["Research/Datasheet.md"])
    assert cache.parsed == parsed + 1
    assert ("Projects/Beta/Battery spec.md", "Research/Datasheet.md") in edges_of(cache, "derived_from")
    # A reconcile reads only what changed since.
    assert cache.reconcile().parsed == 0


def test_deleting_the_cache_rebuilds_the_same_graph(vault, tmp_path):
    state = tmp_path / "state"
    journal = Journal(tmp_path / "journal.sqlite3")
    run = journal.start(agent="research", trigger="manual")
    journal.finish(run, "ok", sources=["Research/Datasheet.md", "Projects/Beta/Beta.md"],
                   wrote={"path": "Research/Brief.md", "outcome": "created"},
                   log=[{"type": "tool", "name": "read_note", "result": "# Projects/Beta/Battery spec.md\nSpec."},
                        {"type": "tool", "name": "read_note", "refused": True, "error": "Refused: outside"}])
    (vault / "Research/Brief.md").write_text("---\nsources: [\"[[Datasheet]]\"]\n---\nBrief.\n")
    cache = open_graph(vault, state)
    cache.follow_journal(journal)
    # then the person works: edits, a new note, a deleted one, followed one at a time
    tasks = vault / "Projects/Alpha/Tasks.md"
    tasks.write_text(tasks.read_text() + "- [ ] Review [[Battery spec]] [assignee:: [[Bo]]]\n")
    (vault / "People/Cy.md").write_text("---\ntype: person\n---\n")
    (vault / "Daily/2026-11-20.md").unlink()
    cache.update_paths(["Projects/Alpha/Tasks.md", "People/Cy.md", "Daily/2026-11-20.md"])
    followed = cache.graph.snapshot()
    assert ("Agents/Research.md", "Research/Brief.md", "wrote:wrote", "wrote", "wrote") in followed["edges"]
    assert ("Agents/Research.md", "Projects/Beta/Beta.md", "read:read", "read", "read") in followed["edges"]
    assert ("Agents/Research.md", "Projects/Beta/Battery spec.md", "read:read", "read", "read") in followed["edges"]
    cache.close()
    for leftover in state.iterdir():
        leftover.unlink()
    rebuilt = open_graph(vault, state)
    rebuilt.follow_journal(journal)
    assert rebuilt.graph.snapshot() == followed
    journal.close()


def test_neighbours_for_an_agent_never_leave_its_read_scope(vault, tmp_path):
    from routine.vault.scope import in_scope

    cache = open_graph(vault, tmp_path / "state")
    reads = ["Research/**", "Projects/Beta/**"]  # Research's scope in the case file
    visible = views.scope_test(reads, cache.graph)
    g = cache.graph.g
    for start in [n for n in g if visible(n)]:
        for depth in (1, 2, 3):
            shown = views.neighbors(cache.graph, start, depth, visible=visible)
            outside = [n for n in shown.nodes if not in_scope(reads, g.nodes[n]["note"])]
            assert outside == [], (start, depth, outside)
    # The datasheet reaches Alpha only through Alpha's notes: invisible, and not walked through.
    everything = views.neighbors(cache.graph, "Research/Datasheet.md", 5)
    assert "Projects/Alpha/Alpha.md" in everything.nodes
    scoped = views.neighbors(cache.graph, "Research/Datasheet.md", 5, visible=visible)
    assert "Projects/Alpha/Alpha.md" not in scoped.nodes and "Projects/Beta/Battery spec.md" in scoped.nodes
    assert views.path(cache.graph, "Research/Datasheet.md", "People/Ada.md", visible) == []
    assert views.path(cache.graph, "Research/Datasheet.md", "People/Ada.md") != []


def test_a_moved_node_keeps_its_place_and_a_canvas_unchanged_is_not_rewritten(vault, tmp_path):
    state = tmp_path / "state"
    cache = open_graph(vault, state)
    writer = CanvasWriter(vault, state / "canvases.json")
    writer.refresh(cache.graph)
    path = vault / ALPHA
    assert writer.refresh(cache.graph) == []  # nothing changed: nothing written
    doc = json.loads(path.read_text())
    ada = file_node(doc, "People/Ada.md")
    ada.update(x=5000, y=-3000)
    doc["nodes"].append({"id": "0123456789abcdef", "type": "text", "text": "my own note", "x": 0, "y": 900,
                         "width": 200, "height": 60})  # the person's own card
    path.write_text(json.dumps(doc))
    # the view changes (a new member) and the canvas is refreshed: Ada stays where she was put
    home_note = vault / "Projects/Alpha/Alpha.md"
    home_note.write_text(home_note.read_text().replace('"[[Builder]]"]', '"[[Builder]]", "[[Bo]]"]'))
    cache.update_paths(["Projects/Alpha/Alpha.md"])
    assert writer.refresh(cache.graph) != []
    after = json.loads(path.read_text())
    assert canvas.problems(after) == []
    assert (file_node(after, "People/Ada.md")["x"], file_node(after, "People/Ada.md")["y"]) == (5000, -3000)
    assert file_node(after, "People/Bo.md")
    assert any(n["id"] == "0123456789abcdef" for n in after["nodes"])
    # ... and still at the next refresh, after an unrelated change
    tasks = vault / "Projects/Alpha/Tasks.md"
    tasks.write_text(tasks.read_text() + "- [ ] One more\n")
    cache.update_paths(["Projects/Alpha/Tasks.md"])
    writer.refresh(cache.graph)
    again = json.loads(path.read_text())
    assert (file_node(again, "People/Ada.md")["x"], file_node(again, "People/Ada.md")["y"]) == (5000, -3000)


def test_a_canvas_the_person_made_is_never_written_over(vault, tmp_path):
    cache = open_graph(vault, tmp_path / "state")
    mine = vault / ALPHA
    mine.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"nodes": [{"id": "a1", "type": "text", "text": "my plan", "x": 0, "y": 0, "width": 100,
                                  "height": 50}], "edges": []})
    mine.write_text(text)
    written = CanvasWriter(vault, tmp_path / "state" / "canvases.json").refresh(cache.graph)
    assert ALPHA not in written and mine.read_text() == text
    assert "Routine/Graphs/Project Beta.canvas" in written
