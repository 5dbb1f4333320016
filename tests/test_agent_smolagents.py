"""`routine agent export --format smolagents` writes a folder the real smolagents loads (and
runs, against the stand-in Ollama); `routine agent import` brings it back as an equivalent note."""

from __future__ import annotations

import json

import pytest

from agent_cli import cli
from routine.vault.frontmatter import split_frontmatter

smolagents = pytest.importorskip("smolagents")
MISTRAL = "mistral:7b-instruct-q4_K_M"


@pytest.fixture
def pricer(initialised):
    home = initialised
    (home.vault / "Artifacts").mkdir()
    (home.vault / "Artifacts" / "Pricing.md").write_text("# Pricing\nOur list price is 40 EUR per seat per month.\n")
    (home.vault / "Artifacts" / "Customers.md").write_text("# Customers\nAcme runs 12 seats since March.\n")
    cli(home, "agent", "new", "Pricer", "--from", "Artifacts/Pricing.md", "Artifacts/Customers.md",
        "--tools", "read_note", "list_notes", "run_command", "--behaviour", "semi-autonomous", "--role",
        "Prices offers from our price list")
    return home


def test_export_loads_and_runs_in_smolagents_and_imports_back_equivalent(pricer, ollama, tmp_path, monkeypatch):
    home = pricer
    folder = tmp_path / "pricer-smol"
    out = cli(home, "agent", "export", "pricer", "--format", "smolagents", str(folder)).stdout
    assert "Not exported (routine-only tools): run_command" in out
    assert {p.name for p in folder.iterdir()} >= {"agent.json", "prompts.yaml", "tools", "app.py", "requirements.txt"}

    from smolagents import ToolCallingAgent

    agent = ToolCallingAgent.from_folder(folder)
    assert set(agent.tools) == {"read_note", "list_notes", "final_answer"}
    assert agent.name == "pricer" and agent.description == "Prices offers from our price list"
    assert agent.model.model_id == f"ollama_chat/{MISTRAL}" and agent.max_steps == 8
    system = agent.initialize_system_prompt()
    assert "40 EUR per seat per month" in system and "Acme runs 12 seats" in system and "- read_note:" in system

    # It runs, in smolagents, on the stand-in Ollama: its exported tool reads the vault.
    monkeypatch.setenv("VAULT", str(home.vault))
    monkeypatch.setenv("OLLAMA_API_BASE", ollama.url)
    agent.model.api_base = ollama.url
    ollama.script(MISTRAL, [{"tool_calls": [{"name": "read_note", "arguments": {"path": "Artifacts/Customers.md"}}]},
                            {"tool_calls": [{"name": "final_answer", "arguments": {"answer": "12 seats"}}]}])
    assert agent.run("How many seats does Acme run?") == "12 seats"
    seen = json.dumps([m for r in ollama.requests if r["_path"] == "/api/chat" for m in r["messages"]])
    assert "Acme runs 12 seats since March" in seen

    # Back into a vault as a note: the same prompt, tools routine has, grounding, model, behaviour.
    out = cli(home, "agent", "import", str(folder), "--name", "Pricer2").stdout
    assert "Imported Agents/Pricer2.md" in out
    original, _ = split_frontmatter(home.note("Agents/Pricer.md"))
    imported, body = split_frontmatter(home.note("Agents/Pricer2.md"))
    for key in ("role", "model", "behaviour", "custom", "author", "task", "write"):
        expect = original[key] if key != "write" else {"append": "Agents/Pricer2/Log.md"}
        assert imported[key] == expect, key
    assert imported["tools"] == ["read_note", "list_notes"]  # run_command: not a library agent's tool
    assert "left out: run_command" in out
    assert body.strip() == split_frontmatter(home.note("Agents/Pricer.md"))[1].strip()
    assert imported["grounding"] == ["[[Agents/Pricer2/Pricing]]", "[[Agents/Pricer2/Customers]]"]
    assert home.note("Agents/Pricer2/Pricing.md") == home.note("Artifacts/Pricing.md")
    shown = json.loads(cli(home, "agent", "show", "pricer2", "--json").stdout)
    assert shown["custom"] and [g["exists"] for g in shown["grounding"]] == [True, True]


def test_an_agent_saved_by_smolagents_itself_imports_with_the_tools_routine_has(initialised, ollama, tmp_path):
    from smolagents import LiteLLMModel, ToolCallingAgent, tool

    @tool
    def read_note(path: str) -> str:
        """Reads a note.

        Args:
            path: the note's path
        """
        return path

    @tool
    def web_search(query: str) -> str:
        """Searches the web.

        Args:
            query: what to look for
        """
        return query

    agent = ToolCallingAgent(tools=[read_note, web_search], model=LiteLLMModel(model_id="ollama_chat/llama3.2:3b"),
                             name="scout", description="Finds things", max_steps=5)
    agent.save(tmp_path / "scout")
    home = initialised
    out = cli(home, "agent", "import", str(tmp_path / "scout")).stdout
    assert "Imported Agents/Scout.md" in out and "left out: web_search" in out
    props, body = split_frontmatter(home.note("Agents/Scout.md"))
    assert props["tools"] == ["read_note"] and props["role"] == "Finds things" and props["custom"] is True
    assert body.strip().startswith("{% raw %}") and "tool" in body  # smolagents' own prompt, kept verbatim
    # It is a working agent note: routine renders its prompt and runs it; its write waits for approval.
    ollama.script(MISTRAL, ["## Found\nNothing yet."])
    cli(home, "fire", "scout", "--task", "Look around.")
    assert not (home.vault / "Agents" / "Scout" / "Log.md").exists()
    assert any("Nothing yet." in p.read_text() for p in home.vault.rglob("*.md") if "Agents/Scout" not in str(p))


def test_an_imported_folder_gets_the_policy_of_an_installed_agent(pricer, tmp_path):
    home = pricer
    folder = tmp_path / "pricer-smol"
    cli(home, "agent", "export", "pricer", "--format", "smolagents", str(folder))
    data = json.loads((folder / "agent.json").read_text())
    data["routine"].update({"tools": ["read_note", "run_command"], "approval": "none", "behaviour": "autonomous",
                            "max_iterations": 50})
    (folder / "agent.json").write_text(json.dumps(data))
    out = cli(home, "agent", "import", str(folder), "--name", "Taker").stdout
    imported, _ = split_frontmatter(home.note("Agents/Taker.md"))
    assert imported["tools"] == ["read_note"] and "left out: run_command" in out
    assert imported["approval"] == "required" and imported["behaviour"] == "reactive"
    assert imported["max_iterations"] == 8
