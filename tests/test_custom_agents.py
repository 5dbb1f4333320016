"""Custom agents made from artifacts: grounded prompts, a sandbox the runtime enforces,
assignment to tasks and projects, and locking. Run through the real `routine` entry point in
process, against the stand-in Ollama with scripted tool calls."""

from __future__ import annotations

import json
import textwrap

import pytest

from agent_cli import cli

MISTRAL = "mistral:7b-instruct-q4_K_M"


def call(name, **arguments):
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def put(home, rel, text):
    path = home.vault / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")


@pytest.fixture
def artifacts(initialised):
    home = initialised
    put(home, "Artifacts/Pricing.md", """\
        ---
        type: artifact
        artifact_type: cognitive
        ---
        # Pricing
        Our list price is 40 EUR per seat per month.
        """)
    put(home, "Artifacts/Customers.md", "# Customers\nAcme runs 12 seats since March.\n")
    # Tasks in a project's case file (the projects' conventions; any note with a task line works too).
    put(home, "Projects/Acme/Acme.md", "---\ntype: project\ngoal: Renew Acme\nstatus: active\n---\n# Acme\n")
    put(home, "Projects/Acme/Tasks.md", "# Todo\n- [ ] Draft the Acme renewal offer\n- [ ] Book the dentist\n")
    return home


def transcript(home):
    run_id = json.loads(cli(home, "runs", "list", "--json").stdout)[0]["id"]
    row = json.loads(cli(home, "runs", "show", run_id, "--json").stdout)
    return [e for e in row["log"] if e["type"] == "tool"]


def test_a_custom_agent_is_grounded_and_sandboxed(artifacts, ollama):
    home = artifacts
    out = cli(home, "agent", "new", "Pricer", "--from", "Artifacts/Pricing.md", "Customers",
              "--tools", "read_note", "write_note", "--behaviour", "reactive").stdout
    assert "Made Agents/Pricer.md" in out
    note = home.note("Agents/Pricer.md")
    assert "custom: true" in note and "[[Artifacts/Pricing]]" in note and "[[Artifacts/Customers]]" in note
    # A folder grounds an agent in each of its notes (the README's `--from … People` form).
    cli(home, "agent", "new", "Reader", "--from", "Artifacts")
    assert "[[Artifacts/Pricing]]" in home.note("Agents/Reader.md") and "[[Artifacts/Customers]]" in home.note(
        "Agents/Reader.md")
    # Assigned to one task by the CLI: the note holding it joins its sandbox.
    cli(home, "agent", "assign", "Pricer", "--task", "Projects/Acme/Tasks.md", "--item", "Acme renewal")
    assert "- [ ] Draft the Acme renewal offer [assignee:: [[Pricer]]]" in home.note("Projects/Acme/Tasks.md")
    assert "Book the dentist\n" in home.note("Projects/Acme/Tasks.md")
    shown = json.loads(cli(home, "agent", "show", "pricer", "--json").stdout)
    assert shown["assignments"]["tasks"] == ["Projects/Acme/Tasks.md"] and "Projects/Acme/Tasks.md" in shown["writes"]
    assert shown["grounding"][0]["preview"].startswith("# Pricing")

    okrs = home.note("Plans/OKRs.md")
    ollama.script(MISTRAL, [call("read_note", path="Plans/OKRs.md"),                      # outside: refused
                            call("write_note", path="Plans/OKRs.md", content="hijack", section="Objectives"),
                            call("write_note", path="Daily/2026-01-01.md", content="x"),  # outside: refused
                            call("search_notes", query="pricing"),                        # not its tool
                            call("read_note", path="Artifacts/Customers.md"),             # its grounding
                            call("write_note", path="Projects/Acme/Tasks.md", content="Offer: 12 seats at 40 EUR.",
                                 section="Offer"),                                        # its task note
                            "## Offer\nAcme: 12 seats at 40 EUR ([[Artifacts/Pricing]])."])
    cli(home, "fire", "pricer", "--task", "Draft the Acme renewal offer.")
    calls = transcript(home)
    assert [bool(c.get("refused")) for c in calls] == [True, True, True, True, False, False]
    assert "outside its reads scope" in calls[0]["error"] and "outside its writes scope" in calls[1]["error"]
    assert "outside its writes scope" in calls[2]["error"] and "search_notes" in calls[3]["error"]
    assert "12 seats" in calls[4]["result"]
    assert home.note("Plans/OKRs.md") == okrs and not (home.vault / "Daily" / "2026-01-01.md").exists()
    assert "Offer: 12 seats at 40 EUR." in home.note("Projects/Acme/Tasks.md")
    assert "Acme: 12 seats" in home.note("Agents/Pricer/Log.md")
    # Its prompt carried both grounding notes.
    first = next(r for r in ollama.requests if r["_path"] == "/api/chat")
    prompt = "\n".join(m["content"] for m in first["messages"])
    assert "40 EUR per seat per month" in prompt and "Acme runs 12 seats" in prompt
    runs = json.loads(cli(home, "agent", "show", "pricer", "--json").stdout)["last_runs"]
    assert runs[0]["status"] == "ok" and runs[0]["wrote"] == "Agents/Pricer/Log.md"
    # Unassigned: the task note is outside its sandbox again.
    cli(home, "agent", "unassign", "Pricer", "--task", "Projects/Acme/Tasks.md")
    assert "[assignee::" not in home.note("Projects/Acme/Tasks.md")
    assert "Projects/Acme/Tasks.md" not in json.loads(cli(home, "agent", "show", "pricer", "--json").stdout)["writes"]


SNOOP = """\
---
agent: snoop
role: Another agent, reading everything it may
model: general
reads: ["Artifacts/**", "Inbox/**"]
writes: ["Inbox/**"]
tools: [search_notes, read_note, list_notes]
write: {note: "Inbox/Snoop.md", section: "Found"}
task: Find the secret recipe.
---
You look around.
"""


def test_a_locked_agents_grounding_is_hidden_from_listings_and_other_agents(artifacts, ollama):
    home = artifacts
    home.config.write_text(home.config.read_text() + "memory: {embedding_model: 'ollama:nomic-embed-text'}\n"
                           f"libraries: {{shared: {home.root / 'Shared library'}}}\n")
    secret = "The secret sauce is smoked paprika, four grams per litre."
    put(home, "Artifacts/Recipe.md", f"# Recipe\n{secret}\n")
    put(home, "Agents/Snoop.md", SNOOP)
    cli(home, "agent", "new", "Chef", "--from", "Artifacts/Recipe.md", "--locked")

    shown = cli(home, "agent", "show", "chef").stdout
    assert "[[Artifacts/Recipe]]" in shown and "locked" in shown and "paprika" not in shown
    assert "paprika" not in cli(home, "agent", "show", "chef", "--json").stdout
    cli(home, "agent", "publish", "chef", "--to", "shared", "--with-grounding")
    listing = cli(home, "library", "show", "shared").stdout + cli(home, "library", "show", "shared", "chef").stdout
    listing += cli(home, "library", "show", "shared", "chef", "--json").stdout
    assert "Recipe.md" in listing and "paprika" not in listing

    from routine.memory.chunks import chunk_note

    query = chunk_note("Artifacts/Recipe.md", f"# Recipe\n{secret}\n", 1000)[0].text
    ollama.script(MISTRAL, [call("read_note", path="Artifacts/Recipe.md"),
                            call("list_notes", folder="Artifacts"),
                            call("search_notes", query=query),
                            "Nothing found."])
    cli(home, "fire", "snoop")
    calls = transcript(home)
    assert "it grounds a locked agent" in calls[0]["error"]
    assert "Artifacts/Pricing.md" in calls[1]["result"] and "Recipe" not in calls[1]["result"]
    assert "Recipe" not in calls[2].get("result", "") + calls[2].get("error", "")
    assert "paprika" not in json.dumps([c.get("result", "") + c.get("error", "") for c in calls])
    hits = json.loads(cli(home, "search", query, "--agent", "snoop", "--json").stdout)
    assert hits and all("Recipe" not in h["path"] for h in hits)

    # The locked agent itself still runs with it.
    ollama.script(MISTRAL, ["## Sauce\nSmoked paprika, 4 g/l ([[Artifacts/Recipe]])."])
    cli(home, "fire", "chef", "--task", "What goes in the sauce?")
    chat = ollama.last_request("/api/chat")
    assert secret in "\n".join(m["content"] for m in chat["messages"])
    assert "Smoked paprika" in home.note("Agents/Chef/Log.md")


def test_assign_unassign_and_reassign_on_projects_and_tasks(artifacts, ollama):
    home = artifacts
    home_note = textwrap.dedent("""\
        ---
        type: project
        goal: Renew Acme  # the person's comment stays
        status: active
        members:
        - "[[People/Ada]]"
        behaviours:
        - "Ada: client lead"
        ---
        # Launch
        - [ ] Call Acme [assignee:: [[Ada]]]
        """)
    put(home, "Projects/Launch/Launch.md", home_note)
    cli(home, "agent", "new", "Pricer", "--from", "Artifacts/Pricing.md", "--tools", "write_note")
    cli(home, "agent", "new", "Closer", "--from", "Artifacts/Customers.md")

    cli(home, "agent", "assign", "Pricer", "--project", "Launch", "--behaviour", "reactive")
    note = home.note("Projects/Launch/Launch.md")
    assert "- '[[Agents/Pricer]]'" in note and "- 'Pricer: reactive'" in note
    assert "goal: Renew Acme  # the person's comment stays" in note and note.endswith("[assignee:: [[Ada]]]\n")
    shown = json.loads(cli(home, "agent", "show", "pricer", "--json").stdout)
    assert shown["assignments"]["projects"] == ["Launch"] and "Projects/Launch/**" in shown["writes"]
    ollama.script(MISTRAL, [call("write_note", path="Projects/Launch/Offer.md", content="12 seats at 40 EUR."),
                            "Offer drafted in [[Projects/Launch/Offer]]."])
    cli(home, "fire", "pricer", "--task", "Draft the offer.")
    assert "12 seats at 40 EUR." in home.note("Projects/Launch/Offer.md")

    cli(home, "agent", "reassign", "Pricer", "--to", "Closer", "--project", "Launch")
    note = home.note("Projects/Launch/Launch.md")
    assert "Agents/Pricer" not in note and "- '[[Agents/Closer]]'" in note and "Closer: reactive" in note
    assert "[[People/Ada]]" in note and "Ada: client lead" in note
    assert "Projects/Launch/**" not in json.loads(cli(home, "agent", "show", "pricer", "--json").stdout)["writes"]
    ollama.script(MISTRAL, [call("write_note", path="Projects/Launch/Offer.md", content="again", append=True),
                            "Could not."])
    cli(home, "fire", "pricer", "--task", "Draft the offer.")
    assert "outside its writes scope" in transcript(home)[0]["error"]

    cli(home, "agent", "assign", "Closer", "--task", "Projects/Acme/Tasks.md", "--item", "Acme renewal")
    cli(home, "agent", "reassign", "Closer", "--to", "Pricer", "--task", "Projects/Acme/Tasks.md")
    assert "Draft the Acme renewal offer [assignee:: [[Pricer]]]" in home.note("Projects/Acme/Tasks.md")
    cli(home, "agent", "unassign", "Closer", "--project", "Launch")
    assert "Closer" not in home.note("Projects/Launch/Launch.md")
    proc = cli(home, "agent", "unassign", "Closer", "--project", "Launch", check=False)
    assert proc.returncode == 2 and "is not a member of Launch" in proc.stderr


def test_an_assignment_made_in_obsidian_counts_at_the_next_run_of_an_agent_loaded_before(artifacts, ollama,
                                                                                          monkeypatch):
    """The daemon loads agents once; the person then types `[assignee:: [[Pricer]]]` in a note.
    The runner takes the scopes of now, so the next run may write there (and not after removal)."""
    home = artifacts
    cli(home, "agent", "new", "Pricer", "--from", "Artifacts/Pricing.md", "--tools", "write_note")
    for key, value in home.env.items():
        monkeypatch.setenv(key, value)
    from routine.config.loader import load_agents, load_config
    from routine.flows.step_setup import STEP_SETUP
    from routine.journal import Journal
    from routine.runner.step import Runner, StepRequest

    config = load_config()
    loaded = load_agents(config)[0]["pricer"]  # before the assignment
    (home.vault / "Projects" / "Acme" / "Tasks.md").write_text(
        "# Todo\n- [ ] Draft the Acme offer [assignee:: [[Pricer]]]\n"
    )
    journal = Journal()
    runner = Runner(config, journal, setup=STEP_SETUP)
    try:
        ollama.script(
            MISTRAL, [call("write_note", path="Projects/Acme/Tasks.md", content="Offer sent.", section="Done"), "Done."]
        )
        assert runner.run_step(StepRequest.for_agent(config, loaded, "Draft it.")).error is None
        assert "Offer sent." in home.note("Projects/Acme/Tasks.md")
        (home.vault / "Projects" / "Acme" / "Tasks.md").write_text("# Todo\n- [x] Draft the Acme offer\n")
        ollama.script(
            MISTRAL, [call("write_note", path="Projects/Acme/Tasks.md", content="More.", append=True), "Done."]
        )
        runner.run_step(StepRequest.for_agent(config, loaded, "Again."))
    finally:
        runner.close()
        journal.close()
    assert "More." not in home.note("Projects/Acme/Tasks.md")
    assert "outside its writes scope" in transcript(home)[0]["error"]


def test_an_exclusion_glob_wins_over_every_scope_that_would_include_the_path():
    from routine.errors import ScopeError
    from routine.vault.scope import check_read, in_scope

    globs = ["Artifacts/**", "!Artifacts/Recipe.md"]
    assert in_scope(globs, "Artifacts/Pricing.md") and not in_scope(globs, "Artifacts/Recipe.md")
    assert not in_scope(["!Artifacts/Recipe.md"], "Artifacts/Pricing.md")  # an exclusion grants nothing
    with pytest.raises(ScopeError, match="grounds a locked agent"):
        check_read(__import__("pathlib").Path("/tmp"), globs, "Artifacts/Recipe.md", "snoop")


@pytest.mark.parametrize("args, message", [
    (["agent", "new", "Pricer", "--from", "Nowhere.md"], "There is no note or folder 'Nowhere.md' in the vault"),
    (["agent", "new", "Pricer", "--from", "Projects"], "The folder 'Projects' holds no notes"),
    (["agent", "new", "9lives", "--from", "Artifacts/Pricing.md"], "'9lives' cannot name an agent"),
    (["agent", "new", "Pricer", "--from", "Artifacts/Pricing.md", "--model", "huge"], "no model alias 'huge'"),
    (["agent", "show", "nobody"], "There is no agent named 'nobody'"),
    (["agent", "install", "pricer", "--from", "nowhere"], "There is no library named 'nowhere'"),
    (["agent", "install", "nobody", "--from", "general"], "The general library"),
    (["agent", "install", "decider@x", "--from", "general"], "a version is a whole number"),
    (["agent", "assign", "planner", "--project", "Nope"], "There is no project 'Nope'"),
    (["agent", "assign", "planner", "--task", "Projects/Acme/Tasks.md"], "has 2 open tasks"),
])
def test_bad_input_gets_one_sentence_and_the_fix(artifacts, args, message):
    proc = cli(artifacts, *args, check=False)
    assert proc.returncode == 2 and message in proc.stderr and "Fix:" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
