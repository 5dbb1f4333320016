"""A project with a hub, drawn by the running daemon as a person's vault has it: a 27-card café
project whose hub note links to every artifact and everyone in it. Its canvas crosses little
(measured between the side anchors Obsidian draws lines from), no card overlaps another, no line
runs through a card, no text spills out, the hub stands amid its neighbours; the same vault gives
the same bytes, and a deleted canvas is laid out afresh (the README's way to re-lay one)."""

from __future__ import annotations

import itertools
import json

from graph_vault import write_hub_project
from routine.graph.cache import GraphCache
from routine.graph.legibility import measure
from routine.graph.publish import CanvasWriter
from test_daemon import daemon, only_schedule, wait_for

HARBOR = "Routine/Graphs/Project Harbor.canvas"


def drawn(home) -> dict | None:
    """The canvas once it shows the whole project (None before)."""
    try:
        doc = json.loads((home.vault / HARBOR).read_text())
    except (OSError, ValueError):
        return None
    shown = {n.get("file") for n in doc["nodes"]}
    return doc if {"Projects/Harbor/Harbor hub.md", "Projects/Harbor/Supplier list.md"} <= shown else None


def card(doc: dict, rel: str) -> dict:
    return next(n for n in doc["nodes"] if n.get("file") == rel)


def test_a_project_with_a_hub_is_drawn_with_few_crossings_and_relaid_when_deleted(initialised, ollama):
    home = initialised
    only_schedule(home, "blocks: {}\n")
    write_hub_project(home.vault)
    with daemon(home):
        doc = wait_for(lambda: drawn(home), 60, "the Harbor project's canvas")
    first = (home.vault / HARBOR).read_bytes()
    figures = measure(doc, lambda rel: (home.vault / rel).is_file())
    assert figures.cards == 27, figures.line()
    assert figures.crossings <= 15, figures.line()  # 24 before the hub got a layer of its own
    assert figures.through_cards == 0 and figures.overflowing == 0 and figures.missing_files == 0, figures.line()
    cards = [n for n in doc["nodes"] if n["type"] != "group"]
    for a, b in itertools.combinations(cards, 2):
        assert not (a["x"] < b["x"] + b["width"] and b["x"] < a["x"] + a["width"]
                    and a["y"] < b["y"] + b["height"] and b["y"] < a["y"] + a["height"]), (a["id"], b["id"])
    # the hub amid its neighbours: below the project, above the artifacts it feeds, between them sideways
    hub, project = card(doc, "Projects/Harbor/Harbor hub.md"), card(doc, "Projects/Harbor/Harbor.md")
    linked = {e["toNode"] if e["fromNode"] == hub["id"] else e["fromNode"] for e in doc["edges"]
              if hub["id"] in (e["fromNode"], e["toNode"])}
    near = [n for n in cards if n["id"] in linked]
    assert len(near) == 10
    middle = hub["x"] + hub["width"] / 2
    assert min(n["x"] for n in near) < middle < max(n["x"] + n["width"] for n in near)
    assert project["y"] < hub["y"] < max(n["y"] for n in near)

    # The person drags the hub away (the daemon keeps it there), then deletes the canvas to have it
    # laid out afresh: the daemon draws it anew when it starts, byte for byte as before.
    moved = json.loads(first)
    card(moved, "Projects/Harbor/Harbor hub.md")["x"] += 900
    (home.vault / HARBOR).write_text(json.dumps(moved))
    with daemon(home):
        wait_for(lambda: placed_by_person(home, hub["id"]), 60, "the moved card kept as the person's")
    assert card(json.loads((home.vault / HARBOR).read_text()), "Projects/Harbor/Harbor hub.md")["x"] == hub["x"] + 900
    (home.vault / HARBOR).unlink()
    with daemon(home):
        wait_for(lambda: drawn(home), 60, "the canvas drawn afresh")
    assert (home.vault / HARBOR).read_bytes() == first


def placed_by_person(home, node: str) -> bool:
    """Has the daemon recorded that the person placed this card (its registry of placements)?"""
    try:
        return json.loads((home.state / "graph-canvases.json").read_text())[HARBOR][node]["moved"] is True
    except (OSError, ValueError, KeyError):
        return False


def test_a_deleted_canvas_is_laid_out_afresh_at_the_next_change(tmp_path):
    """While the daemon runs: a card the person moved stays moved; once the canvas is deleted, the
    next change to what it shows draws it afresh, the card back in its laid-out place."""
    vault = tmp_path / "Vault"
    write_hub_project(vault)
    cache = GraphCache(vault, tmp_path / "graph.sqlite3")
    cache.reconcile()
    writer = CanvasWriter(vault, tmp_path / "canvases.json")
    writer.refresh(cache.graph)
    path = vault / HARBOR
    laid = card(json.loads(path.read_text()), "Projects/Harbor/Harbor hub.md")
    moved = json.loads(path.read_text())
    card(moved, "Projects/Harbor/Harbor hub.md")["x"] += 900
    path.write_text(json.dumps(moved))
    lease = vault / "Projects/Harbor/Lease.md"
    lease.write_text(lease.read_text() + "Signed for five years.\n")
    cache.update_paths(["Projects/Harbor/Lease.md"])
    writer.refresh(cache.graph)
    assert card(json.loads(path.read_text()), "Projects/Harbor/Harbor hub.md")["x"] == laid["x"] + 900
    path.unlink()
    menu = vault / "Projects/Harbor/Menu.md"
    menu.write_text(menu.read_text().replace("derived_from:", "shared_with: [\"[[Lena]]\"]\nderived_from:"))
    cache.update_paths(["Projects/Harbor/Menu.md"])
    assert HARBOR in writer.refresh(cache.graph)
    doc = json.loads(path.read_text())
    hub = card(doc, "Projects/Harbor/Harbor hub.md")
    assert hub["x"] != laid["x"] + 900
    figures = measure(doc, lambda rel: (vault / rel).is_file())
    assert figures.through_cards == 0 and figures.overflowing == 0, figures.line()
