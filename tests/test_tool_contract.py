"""The same scope and approval cases over every tool routine offers (APScheduler runs one suite over
every data store; this runs one over every tool). A tool added to the registry without its cases
here fails `test_every_tool_has_its_cases`; a tool that writes around the approval path, or reads
past an agent's scopes, fails the contract.

The agent: `approval: required`, reads and writes only `Projects/**`. Each tool is called as a model
would call it, once inside its scopes and once reaching for a note outside them. After every call
nothing in the vault outside Drafts/ may differ (a change waits for the person as a proposal), and
the note outside the scopes is never shown."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path

import pytest

SECRET = "The safe's code is 4711."
AGENT = """\
---
agent: contractor
role: Checks that every tool keeps the locks
model: general
reads: ["Projects/**"]
writes: ["Projects/**"]
approval: required
tools: [{tools}]
task: Keep the project plan current.
---
You work carefully.
"""


@dataclass(frozen=True)
class Case:
    inside: dict[str, object]                 # arguments within the agent's scopes
    outside: dict[str, object] | None = None  # the same tool reaching for Inbox/Secret.md (None: it names no note)
    extra: dict[str, object] = field(default_factory=dict)


CASES: dict[str, Case] = {
    "search_notes": Case({"query": "plan"}, {"query": "safe code"}),
    "read_note": Case({"path": "Projects/Plan.md"}, {"path": "Inbox/Secret.md"}),
    "list_notes": Case({"folder": "Projects"}, {"folder": "Inbox"}),
    "write_note": Case({"path": "Projects/Plan.md", "content": "Order the hinges.", "section": "Next"},
                       {"path": "Inbox/Secret.md", "content": "Changed.", "section": "Code"}),
    "now": Case({}),
    "date_math": Case({"start": "2026-11-28", "add": "3 days"}),
    "run_command": Case({"command": "echo changed > Plan.md; cat Plan.md"},
                        {"command": "cat ../Inbox/Secret.md ../../Inbox/Secret.md"}),
    "graph_neighbors": Case({"note": "Projects/Plan.md"}, {"note": "Inbox/Secret.md"}),
    "recommend_artifact": Case({"template": "Pre-mortem", "reason": "The plan has risks."}),
    "propose_tasks": Case({"tasks": [{"text": "Order the hinges", "assignee": "Contractor"}]}),
    "ask_person": Case({"question": "Which supplier?"}),
    "remind_person": Case({"text": "Call the supplier", "at": "in 2 hours"}),
}


def _snapshot(vault: Path) -> dict[str, bytes]:
    """Every file of the vault outside Drafts/ (where a proposal waits) and routine's own state."""
    return {str(p.relative_to(vault)): p.read_bytes() for p in sorted(vault.rglob("*"))
            if p.is_file() and p.relative_to(vault).parts[0] not in ("Drafts", ".routine", ".obsidian")}


@pytest.fixture
def contract(initialised, monkeypatch):
    from routine.tools.registry import TOOLS

    home = initialised
    for key, value in home.env.items():
        monkeypatch.setenv(key, value)
    (home.vault / "Projects").mkdir(exist_ok=True)
    (home.vault / "Projects" / "Plan.md").write_text("# Plan\n\n## Next\nFind a supplier for the hinges.\n")
    home_note = home.vault / "Projects" / "Hinges" / "Hinges.md"  # the agent manages a project (its tools)
    home_note.parent.mkdir()
    home_note.write_text('---\ntype: project\nstatus: active\ngoal: Hinges by Friday\n'
                         'manager: "[[Agents/Contractor]]"\nmembers: ["[[Agents/Contractor]]"]\n---\n# Hinges\n')
    (home.vault / "Inbox").mkdir(exist_ok=True)
    (home.vault / "Inbox" / "Secret.md").write_text(f"# Secret\n\n## Code\n{SECRET}\n")
    (home.vault / "Agents" / "Contractor.md").write_text(AGENT.format(tools=", ".join(TOOLS)))
    return home


def _context(home):
    from routine.access import scoped
    from routine.config.loader import load_agents, load_config
    from routine.tools.base import ToolContext

    config = replace(load_config(), sandbox_workdir="Projects")  # run_command's folder: within its scopes
    agents, problems = load_agents(config)
    assert not problems, problems
    return ToolContext(vault=config.vault, agent=scoped(config, agents["contractor"]), config=config,
                       now=datetime.now(timezone.utc), run_id="20261128-083000-c0de")


def _call(ctx, name: str, arguments: dict[str, object]) -> str:
    from routine.tools.base import ToolError
    from routine.tools.registry import TOOLS

    try:
        result = TOOLS[name].call(ctx, arguments)
    except ToolError as exc:  # a refusal goes back to the model: the contract holds
        return f"refused: {exc}"
    return result if isinstance(result, str) else f"wrote {result[0]}"


def test_every_tool_has_its_cases():
    from routine.tools.registry import TOOLS

    assert set(CASES) == set(TOOLS), "give each new tool its scope and approval cases in CASES"


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_tool_changes_nothing_without_approval_and_shows_nothing_outside_the_scopes(contract, name):
    home = contract
    before = _snapshot(home.vault)
    case = CASES[name]
    said = _call(_context(home), name, case.inside)
    assert _snapshot(home.vault) == before, f"{name} changed the vault around the approval path: {said}"
    if case.outside is not None:
        said = _call(_context(home), name, case.outside)
        assert "4711" not in said, f"{name} showed a note outside the agent's reads: {said}"
        assert _snapshot(home.vault) == before, f"{name} changed a note outside the agent's writes: {said}"
