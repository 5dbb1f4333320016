"""Canvases a person can read, measured as Obsidian draws them, on a pilot project of the size a
new user has (two people, two agents, five tasks, two artifacts, the notes around them) in a
workspace of six projects: few crossings, no line through a card, no text spilling out of its
card, no card for a note that is not there, and no agent made of an agent's own files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graph_vault import write_pilot
from routine.graph import canvas, views
from routine.graph.cache import GraphCache
from routine.graph.legibility import Legibility, measure
from routine.graph.publish import CanvasWriter

GRAPHS = "Routine/Graphs"
ORIN = f"{GRAPHS}/Project Orin Pilot.canvas"


@pytest.fixture
def pilot(tmp_path) -> tuple[Path, GraphCache]:
    vault = tmp_path / "Vault"
    write_pilot(vault)
    cache = GraphCache(vault, tmp_path / "graph.sqlite3")
    cache.reconcile()
    return vault, cache


def write_all(vault: Path, cache: GraphCache, state: Path) -> dict[str, Legibility]:
    """Every canvas written afresh, and each measured."""
    CanvasWriter(vault, state / "canvases.json").refresh(cache.graph)
    return {path.stem: measure(json.loads(path.read_text()), lambda rel: (vault / rel).is_file())
            for path in (vault / GRAPHS).glob("*.canvas")}


def doc_of(vault: Path, rel: str = ORIN) -> dict:
    return json.loads((vault / rel).read_text())


def test_the_pilot_canvases_are_legible(pilot, tmp_path):
    vault, cache = pilot
    # the sizes the acceptance speaks of: a project of about 36 nodes, a workspace of about 75
    assert len(views.project_view(cache.graph, "Orin Pilot").nodes) >= 32
    assert len(views.workspace_view(cache.graph).nodes) >= 70
    figures = write_all(vault, cache, tmp_path)
    orin, workspace = figures["Project Orin Pilot"], figures["Workspace"]
    assert orin.crossings <= 15 and orin.through_cards == 0, orin.line()
    assert workspace.crossings <= 60, workspace.line()
    for name, found in figures.items():
        assert found.overflowing == 0 and found.missing_files == 0, (name, found.line())
    # An agent's own folder holds its files, not agents: one declaration of what an agent note is.
    assert cache.graph.g.nodes["Agents/Pricer/Log.md"]["type"] == "note"
    assert not (vault / GRAPHS / "Agent Log.canvas").exists()
    assert {"Agent Pricer", "Agent Scout"} <= set(figures)


def test_cards_fit_their_text_and_the_legend_names_every_colour(pilot, tmp_path):
    vault, cache = pilot
    write_all(vault, cache, tmp_path)
    doc = doc_of(vault)
    tasks = [n for n in doc["nodes"] if n["type"] == "text" and n["text"].startswith("- [")]
    long_task = next(n for n in tasks if "season-long commitment" in n["text"])
    short_task = next(n for n in tasks if "Review the pilot plan" in n["text"])
    assert long_task["height"] > short_task["height"]  # long text wrapped into a taller card
    legend = {n["color"]: n["text"] for n in doc["nodes"] if n["type"] == "text" and n.get("color")
              and "\n" not in n["text"]}
    shown = {kind for n in doc["nodes"] if n.get("color") and n["type"] != "group"
             for kind in legend[n["color"]].split(", ")}
    assert {"project", "person", "agent", "task", "artifact", "decision", "key result"} <= shown
    # labels only where colour and direction do not say it: a task's assignee has none, an owner has one
    labels = {e.get("label") for e in doc["edges"]}
    assert "assigned_to" not in labels and "members" not in labels and "owner" in labels


def test_a_note_routine_moved_away_gets_no_card_and_its_new_place_is_followed(pilot, tmp_path):
    vault, cache = pilot
    # Routine archives a note itself (its own writes do not reach the vault watcher): the graph
    # still names the old place, and the canvas draws no card for it.
    (vault / "Archive").mkdir()
    (vault / "Research/Market scan.md").rename(vault / "Archive/Market scan.md")
    figures = write_all(vault, cache, tmp_path / "before")
    assert all(found.missing_files == 0 for found in figures.values())
    assert not any(n.get("file") == "Research/Market scan.md" for n in doc_of(vault)["nodes"])
    # once the graph hears of the move, the card follows it
    cache.update_paths(["Research/Market scan.md", "Archive/Market scan.md"])
    write_all(vault, cache, tmp_path / "after")
    assert any(n.get("file") == "Archive/Market scan.md" for n in doc_of(vault)["nodes"])


def test_a_moved_card_keeps_its_place_and_a_new_card_overlaps_none(pilot, tmp_path):
    vault, cache = pilot
    writer = CanvasWriter(vault, tmp_path / "canvases.json")
    writer.refresh(cache.graph)
    doc = doc_of(vault)
    mara = next(n for n in doc["nodes"] if n.get("file") == "People/Mara.md")
    mara.update(x=mara["x"] + 700, y=mara["y"] + 40)
    (vault / ORIN).write_text(json.dumps(doc))
    tasks = vault / "Projects/Orin Pilot/Tasks.md"
    tasks.write_text(tasks.read_text() + "- [ ] Ask the co-op about a group price [assignee:: [[Mara]]]\n")
    cache.update_paths(["Projects/Orin Pilot/Tasks.md"])
    writer.refresh(cache.graph)
    after = doc_of(vault)
    moved = next(n for n in after["nodes"] if n.get("file") == "People/Mara.md")
    assert (moved["x"], moved["y"]) == (mara["x"], mara["y"])
    new = next(n for n in after["nodes"] if "group price" in n.get("text", ""))
    cards = [n for n in after["nodes"] if n["type"] != "group" and n["id"] != new["id"]]
    assert not any(new["x"] < c["x"] + c["width"] and c["x"] < new["x"] + new["width"]
                   and new["y"] < c["y"] + c["height"] and c["y"] < new["y"] + new["height"] for c in cards)
    assert canvas.problems(after) == []


def test_the_workspace_is_a_group_per_project_and_past_a_size_links_the_project_canvases(pilot, tmp_path,
                                                                                          monkeypatch):
    vault, cache = pilot
    write_all(vault, cache, tmp_path / "full")
    doc = doc_of(vault, f"{GRAPHS}/Workspace.canvas")
    groups = {n["label"] for n in doc["nodes"] if n["type"] == "group"}
    assert {"Orin Pilot", "Battery", "Website", "Hiring", "Grants", "Field kit", "Sales"} <= groups
    assert any("Order sample cells" in n.get("text", "") for n in doc["nodes"])
    monkeypatch.setattr(canvas, "WORKSPACE_MAX", 40)  # a workspace past the size
    figures = write_all(vault, cache, tmp_path / "brief")
    doc = doc_of(vault, f"{GRAPHS}/Workspace.canvas")
    linked = {n["file"] for n in doc["nodes"] if n.get("file", "").endswith(".canvas")}
    assert f"{GRAPHS}/Project Orin Pilot.canvas" in linked and len(linked) == 7
    assert not any(n.get("text", "").startswith("- [") for n in doc["nodes"])  # no task drawn
    assert figures["Workspace"].missing_files == 0
