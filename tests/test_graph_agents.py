"""Agents and the knowledge graph: the graph_neighbors tool and a step's `graph:` key, both
within the agent's read scope; and `routine graph` from the command line."""

from __future__ import annotations

import json
import shutil
import textwrap

from graph_vault import write_case_file
from test_daemon import only_schedule

MISTRAL = "mistral:7b-instruct-q4_K_M"

SCOUT = textwrap.dedent("""\
    ---
    agent: scout
    role: Looks at how Beta hangs together
    model: general
    reads: ["Projects/Beta/**", "Research/**"]
    writes: ["Research/**"]
    tools: [graph_neighbors]
    write: {note: "Research/Scout.md", section: "Map"}
    task: Map Beta.
    ---
    You map projects.
    """)


def scout_home(home):
    write_case_file(home.vault, agents=False)
    (home.vault / "Agents" / "Scout.md").write_text(SCOUT)
    return home


def call(name, **arguments):
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def test_graph_neighbors_tool_shows_only_what_the_agent_may_read(initialised, ollama):
    home = scout_home(initialised)
    ollama.script(MISTRAL, [call("graph_neighbors", note="Datasheet", depth=3),
                            call("graph_neighbors", note="Alpha"),
                            call("graph_neighbors", note="Projects/Beta/Beta.md", link_type="has_task", depth=2),
                            "Beta depends on the datasheet."])
    home.run("fire", "scout", check=True)
    run_id = json.loads(home.run("runs", "list", "--json", check=True).stdout)[0]["id"]
    row = json.loads(home.run("runs", "show", run_id, "--json", check=True).stdout)
    calls = [e for e in row["log"] if e["type"] == "tool"]
    assert [c["name"] for c in calls] == ["graph_neighbors"] * 3
    around_datasheet = calls[0]["result"]
    assert "[[Projects/Beta/Battery spec]] (artifact) —derived_from→ [[Research/Datasheet]]" in around_datasheet
    for hidden in ("Alpha", "Market research", "Ada", "Agents/", "People/"):
        assert hidden not in around_datasheet
    assert calls[1].get("refused") and "outside its reads scope" in calls[1]["error"]
    tasks = calls[2]["result"]
    assert "—has_task→ task [ ] “Compare cell suppliers”" in tasks and "Order samples" in tasks
    assert "assigned_to" not in tasks and "People/Bo" not in tasks  # only has_task links, and Bo is not readable


def beta_map(home, graph: str) -> None:
    """A schedule with one block whose scout step has the given `graph:` key."""
    only_schedule(home, "blocks:\n  beta-map:\n    cron: \"0 9 * * 1\"\n    steps:\n"
                        f"      - agent: scout\n        task: Map Beta.\n        graph: {graph}\n")


def test_a_steps_graph_key_puts_the_typed_neighbourhood_in_its_context(initialised, ollama):
    home = scout_home(initialised)
    beta_map(home, '{around: "Projects/Beta/Beta.md", depth: 1}')
    proc = home.run("fire", "beta-map", "--dry-run", check=True)
    assert "Knowledge graph around [[Projects/Beta/Beta]] (typed links)" in proc.stdout
    assert "—has_task→ task [ ] “Compare cell suppliers”" in proc.stdout
    assert "Alpha" not in proc.stdout and "People/Bo" not in proc.stdout
    beta_map(home, "{depth: 2}")
    bad = home.run("schedule", "validate")
    assert bad.returncode == 2 and "graph" in bad.stderr and "missing required key 'around'" in bad.stderr
    beta_map(home, '{around: "Projects/Alpha/Alpha.md"}')
    outside = home.run("schedule", "validate")
    assert (
        outside.returncode == 2 and "graph.around" in outside.stderr and "outside agent scout's reads" in outside.stderr
    )


def test_graph_commands(initialised):
    home = initialised
    write_case_file(home.vault, agents=False)
    alpha = json.loads(home.run("graph", "show", "project", "Alpha", "--json", check=True).stdout)
    assert alpha["center"] == "Projects/Alpha/Alpha.md"
    assert {"People/Ada.md", "Agents/Builder.md", "Projects/Alpha/Pricing page.md"} <= {n["id"] for n in alpha["nodes"]}
    plain = home.run("graph", "show", "workspace", check=True).stdout
    assert "Compare cell suppliers" in plain and "—assigned_to→" in plain
    near = json.loads(home.run("graph", "neighbors", "[[Beta]]", "--type", "members", "--json", check=True).stdout)
    assert {e["target"] for e in near["edges"]} == {"People/Bo.md", "Agents/Research.md"}
    scoped = json.loads(home.run("graph", "neighbors", "Beta", "--depth", "3", "--agent", "builder", "--json",
                                 check=True).stdout)
    builder_reads = ("Plans/", "Projects/", "Daily/", "Research/", "Builds/", "Drafts/", "Agents/")
    assert scoped["nodes"] and all(n["note"].startswith(builder_reads) for n in scoped["nodes"])
    way = home.run("graph", "path", "Bo", "Datasheet", check=True).stdout
    assert way.startswith("People/Bo.md") and "Research/Datasheet.md" in way
    # The graph is a cache: with the state dir gone, the same graph comes back from the vault.
    workspace = home.run("graph", "show", "workspace", "--json", check=True).stdout
    shutil.rmtree(home.state)
    assert home.run("graph", "show", "workspace", "--json", check=True).stdout == workspace
    assert home.run("graph", "show", "project", "Alpha", "--json", check=True).stdout.strip() == json.dumps(
        alpha, indent=2, ensure_ascii=False
    )
    missing = home.run("graph", "show", "project", "Gamma")
    assert (
        missing.returncode == 2 and "no project named 'Gamma'" in missing.stderr and "Traceback" not in missing.stderr
    )
