"""The knowledge graph in the running daemon: a saved note reaches the graph and its canvas
within seconds, and a finished run's writes show on the agent's canvas."""

from __future__ import annotations

import json
import time

from graph_vault import write_case_file
from test_daemon import daemon, only_schedule, wait_for

ALPHA = "Routine/Graphs/Project Alpha.canvas"
WORKSPACE = "Routine/Graphs/Workspace.canvas"


def assignees(home, task_text: str, rel: str = ALPHA) -> set[str]:
    """The people and agents a task's line points at on a canvas (its assignees: unlabelled, the colour and
    direction say it; the project's canvas; empty if unreadable)."""
    try:
        doc = json.loads((home.vault / rel).read_text())
    except (OSError, ValueError):
        return set()
    by_id = {n["id"]: n for n in doc["nodes"]}
    return {by_id[e["toNode"]].get("file") for e in doc["edges"] if task_text in by_id[e["fromNode"]].get("text", "")
            and str(by_id[e["toNode"]].get("file")).startswith(("Agents/", "People/"))}


def test_editing_a_task_assignee_updates_graph_and_canvas_through_the_daemon(initialised, ollama):
    home = initialised
    only_schedule(home, "blocks: {}\n")
    write_case_file(home.vault, agents=False)  # the shipped agents: Builder, Research, Planner…
    with daemon(home):
        wait_for(lambda: assignees(home, "Draft the pricing page") == {"Agents/Builder.md"}, 30, "the first canvas")
        tasks = home.vault / "Projects/Alpha/Tasks.md"
        started = time.monotonic()
        tasks.write_text(tasks.read_text().replace("[assignee:: [[Builder]]]", "[assignee:: [[Research]]]"))
        wait_for(lambda: assignees(home, "Draft the pricing page") == {"Agents/Research.md"}, 20,
                 "the canvas to show the new assignee")
        took = time.monotonic() - started
        # the graph the CLI reads agrees (and it is the cache the daemon keeps)
        near = json.loads(home.run("graph", "neighbors", "Projects/Alpha/Tasks.md#task-1", "--json", check=True).stdout)
        assert {(e["type"], e["target"]) for e in near["edges"]} >= {("assigned_to", "Agents/Research.md")}
        assert not any(e["target"] == "Agents/Builder.md" for e in near["edges"])
        # A synced collaborator leaves a folder where the project's canvas goes: said once, alerted once.
        (home.vault / ALPHA).unlink()
        (home.vault / ALPHA).mkdir()
        for who in ("Planner", "Builder"):
            tasks.write_text(tasks.read_text().replace("[assignee:: [[Research]]]", f"[assignee:: [[{who}]]]")
                             .replace("[assignee:: [[Planner]]]", f"[assignee:: [[{who}]]]"))
            wait_for(lambda who=who: assignees(home, "Draft the pricing page", WORKSPACE) == {f"Agents/{who}.md"}, 20,
                     f"the workspace canvas to show {who}")
        alerts = list((home.vault / "Alerts").glob("*canvas Project Alpha.canvas blocked*.md"))
        assert len(alerts) == 1 and "is a folder" in alerts[0].read_text()
    assert took < 10, took
    log = (home.root / "daemon.log").read_text()
    assert "knowledge graph ready" in log and "Traceback" not in log
    assert log.count(f"{ALPHA} is a folder, so the knowledge graph's canvas is not written there") == 1


def test_a_finished_run_shows_what_the_agent_read_and_wrote(initialised, ollama):
    home = initialised
    only_schedule(home, "blocks: {}\n")
    write_case_file(home.vault, agents=False)
    canvas = home.vault / "Routine/Graphs/Agent Research.canvas"
    with daemon(home):
        wait_for(canvas.exists, 30, "the agent canvas")
        home.run("fire", "research", "--task", "Brief me on [[Datasheet]].", check=True)

        def wrote():  # the brief this fire wrote (a task the agent picked up in its project may show too)
            doc = json.loads(canvas.read_text())
            by_id = {n["id"]: n for n in doc["nodes"]}
            return [f for e in doc["edges"] if e.get("label") == "wrote"
                    for f in [by_id[e["toNode"]].get("file") or ""] if f.startswith("Research/")]

        written = wait_for(wrote, 20, "a wrote edge to the brief on the Research canvas")
    assert (home.vault / written[0]).is_file()


def test_canvas_redraws_take_at_most_a_tenth_of_a_core():
    """A burst of runs is one redraw (3 s apart at least); a redraw that took 2 s of CPU
    time waits 20 s for the next, so a big vault's canvases never keep the box busy."""
    from routine.daemon.graph_feed import CANVAS_SECONDS, next_canvases

    assert next_canvases(100.0, 0.05) == 100.0 + CANVAS_SECONDS
    assert next_canvases(100.0, 2.0) == 120.0
    for took in (0.01, 0.3, 1.0, 5.0):
        gap = next_canvases(0.0, took)
        assert took / gap <= 0.1 and gap >= CANVAS_SECONDS
