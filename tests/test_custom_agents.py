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
    put(home, "Inbox/Todo.md", "# Todo\n- [ ] Draft the Acme renewal offer\n- [ ] Book the dentist\n")
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
    # Assigned to one task by the CLI: the note holding it joins its sandbox.
    cli(home, "agent", "assign", "Pricer", "--task", "Inbox/Todo.md", "--item", "Acme renewal")
    assert "- [ ] Draft the Acme renewal offer [assignee:: [[Pricer]]]" in home.note("Inbox/Todo.md")
    assert "Book the dentist\n" in home.note("Inbox/Todo.md")
    shown = json.loads(cli(home, "agent", "show", "pricer", "--json").stdout)
    assert shown["assignments"]["tasks"] == ["Inbox/Todo.md"] and "Inbox/Todo.md" in shown["writes"]
    assert shown["grounding"][0]["preview"].startswith("# Pricing")

    okrs = home.note("Plans/OKRs.md")
    ollama.script(MISTRAL, [call("read_note", path="Plans/OKRs.md"),                      # outside: refused
                            call("write_note", path="Plans/OKRs.md", content="hijack", section="Objectives"),
                            call("write_note", path="Daily/2026-01-01.md", content="x"),  # outside: refused
                            call("search_notes", query="pricing"),                        # not its tool
                            call("read_note", path="Artifacts/Customers.md"),             # its grounding
                            call("write_note", path="Inbox/Todo.md", content="Offer: 12 seats at 40 EUR.",
                                 section="Offer"),                                        # its task note
                            "## Offer\nAcme: 12 seats at 40 EUR ([[Artifacts/Pricing]])."])
    cli(home, "fire", "pricer", "--task", "Draft the Acme renewal offer.")
    calls = transcript(home)
    assert [bool(c.get("refused")) for c in calls] == [True, True, True, True, False, False]
    assert "outside its reads scope" in calls[0]["error"] and "outside its writes scope" in calls[1]["error"]
    assert "outside its writes scope" in calls[2]["error"] and "search_notes" in calls[3]["error"]
    assert "12 seats" in calls[4]["result"]
    assert home.note("Plans/OKRs.md") == okrs and not (home.vault / "Daily" / "2026-01-01.md").exists()
    assert "Offer: 12 seats at 40 EUR." in home.note("Inbox/Todo.md")
    assert "Acme: 12 seats" in home.note("Agents/Pricer/Log.md")
    # Its prompt carried both grounding notes.
    first = next(r for r in ollama.requests if r["_path"] == "/api/chat")
    prompt = "\n".join(m["content"] for m in first["messages"])
    assert "40 EUR per seat per month" in prompt and "Acme runs 12 seats" in prompt
    # Unassigned: the task note is outside its sandbox again.
    cli(home, "agent", "unassign", "Pricer", "--task", "Inbox/Todo.md")
    assert "[assignee::" not in home.note("Inbox/Todo.md")
    assert "Inbox/Todo.md" not in json.loads(cli(home, "agent", "show", "pricer", "--json").stdout)["writes"]
