"""One resolver for what an agent may do (routine/access): through the CLI as a person would, with
the stand-in Ollama scripted to call tools. A semi-autonomous member's case-file writes are
proposals on every path; the same agent reads the same notes in `fire` and in `ask`; a project
folder named `*` grants only itself; `agent show --json` says exactly what a run may do; and no
other module computes scopes."""

from __future__ import annotations

import ast
import json
import textwrap
from datetime import date
from pathlib import Path

import pytest

from agent_cli import cli

MISTRAL = "mistral:7b-instruct-q4_K_M"
ROUTINE = Path(__file__).resolve().parent.parent / "routine"


def call(name, **arguments):
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def put(home, rel: str, text: str) -> None:
    path = home.vault / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")


def project(home, name: str, members: dict[str, str], tasks: str = "") -> None:
    """A project's home note as a person writes it in Obsidian: members and their behaviours."""
    links = "".join(f'\n- "[[Agents/{m}]]"' for m in members)
    behaviours = "".join(f'\n- "{m}: {b}"' for m, b in members.items())
    put(home, f"Projects/{name}/{name}.md",
        f"---\ntype: project\nstatus: active\ngoal: Ship {name}\nmembers:{links or ' []'}\n"
        f"behaviours:{behaviours or ' []'}\n---\n# {name}\n{tasks}")


def tool_calls(home) -> list[dict]:
    run_id = json.loads(cli(home, "runs", "list", "--json").stdout)[0]["id"]
    return [e for e in json.loads(cli(home, "runs", "show", run_id, "--json").stdout)["log"] if e["type"] == "tool"]


@pytest.fixture
def team(initialised):
    """An initialised home with a custom agent (read_note, write_note) and searches embedded by
    the stand-in (no MiniLM load)."""
    home = initialised
    home.config.write_text(home.config.read_text() + "\nmemory: {embedding_model: 'ollama:nomic-embed-text'}\n")
    put(home, "Artifacts/Pricing.md", "# Pricing\nOur list price is 40 EUR per seat per month.\n")
    cli(home, "agent", "new", "Helper", "--from", "Artifacts/Pricing.md", "--tools", "read_note", "write_note")
    return home


def test_a_semi_autonomous_member_fired_writes_a_proposal_not_the_case_file(team, ollama):
    home = team
    project(home, "P0", {"Helper": "semi-autonomous"})
    shown = json.loads(cli(home, "agent", "show", "helper", "--json").stdout)
    assert shown["proposal_writes"] == ["Projects/P0/**"] and "Projects/P0/**" not in shown["writes"]
    assert "Projects/P0/**" in shown["reads"] and shown["assignments"]["projects"] == ["P0"]

    ollama.script(MISTRAL, [call("write_note", path="Projects/P0/Plan.md", content="Ship on Friday."),
                            "Planned in [[Projects/P0/Plan]]."])
    cli(home, "fire", "helper", "--task", "Plan P0.")
    assert not (home.vault / "Projects" / "P0" / "Plan.md").exists()
    [written] = tool_calls(home)
    assert not written.get("refused"), written
    proposals = [p for p in (home.vault / "Drafts").rglob("*.md") if "Ship on Friday." in p.read_text()]
    assert len(proposals) == 1, list((home.vault / "Drafts").rglob("*.md"))
    # The person approves it: then, and only then, the case file changes.
    rel = proposals[0].relative_to(home.vault).as_posix()
    cli(home, "approve", rel)
    assert "Ship on Friday." in home.note("Projects/P0/Plan.md")


def test_the_same_agent_reads_its_case_file_in_fire_and_in_ask(team, ollama):
    home = team
    put(home, "Projects/Acme/Acme.md", "---\ntype: project\nstatus: active\ngoal: Renew Acme\n---\n# Acme\n")
    put(home, "Projects/Acme/Tasks.md", "# Todo\n- [ ] Draft the renewal offer [assignee:: [[Helper]]]\n"
                                        "Acme runs 12 seats since March.\n")
    ollama.script(MISTRAL, [call("read_note", path="Projects/Acme/Tasks.md"), "Acme has 12 seats."])
    cli(home, "fire", "helper", "--task", "How many seats has Acme?")
    [read] = tool_calls(home)
    assert not read.get("refused") and "12 seats" in read["result"], read

    ollama.script(MISTRAL, [call("read_note", path="Projects/Acme/Tasks.md"), "Acme has 12 seats."])
    asked = cli(home, "ask", "helper", "How many seats has Acme?")
    assert "Acme has 12 seats." in asked.stdout
    chat_id = asked.stderr.split("(conversation ")[1].split(";")[0]
    messages = json.loads(cli(home, "chats", "show", chat_id, "--json").stdout)["messages"]
    [tool] = [m for m in messages if m["role"] == "tool"]
    assert "12 seats" in tool["result"] and "outside" not in tool["result"], tool


def test_a_project_folder_named_star_grants_only_itself(team, ollama):
    home = team
    project(home, "*", {"Helper": "autonomous"})
    project(home, "Other", {})
    put(home, "Projects/Other/Secret.md", "# Secret\nThe other project's budget is 9000 EUR.\n")
    shown = json.loads(cli(home, "agent", "show", "helper", "--json").stdout)
    assert shown["writes"].count("Projects/[*]/**") == 1 and "Projects/*/**" not in shown["writes"] + shown["reads"]

    ollama.script(MISTRAL, [call("read_note", path="Projects/Other/Secret.md"),
                            call("write_note", path="Projects/Other/Plan.md", content="Hijacked."),
                            call("write_note", path="Projects/*/Plan.md", content="Our own plan."),
                            "Done."])
    cli(home, "fire", "helper", "--task", "Plan.")
    calls = tool_calls(home)
    assert [bool(c.get("refused")) for c in calls] == [True, True, False], calls
    assert "9000" not in json.dumps(calls)
    assert not (home.vault / "Projects" / "Other" / "Plan.md").exists()
    assert "Our own plan." in home.note("Projects/*/Plan.md")



def test_an_artifact_shared_with_one_agent_is_read_by_it_and_by_no_third_agent(team, ollama, monkeypatch):
    """A report Research owns, typed as a person types it, `shared_with: ["[[Helper]]"]`: the
    custom agent Helper (whose own scopes do not reach Projects/) may read it and not write it;
    Other, a third custom agent, may not read it; as the resolver, `agent show` and a run say."""
    from routine.access import resolve
    from routine.config.loader import load_agents, load_config

    home = team
    put(home, "Artifacts/Notes.md", "# Notes\nMy own notes.\n")
    cli(home, "agent", "new", "Other", "--from", "Artifacts/Notes.md", "--tools", "read_note")
    project(home, "Atlas", {"Research": "autonomous"})
    spec = "Projects/Atlas/Spec.md"
    put(home, spec, '---\ntype: intellectual\nowner: "[[Research]]"\nshared_with: ["[[Helper]]"]\n---\n'
                    "# Spec\nThe API answers in 40 ms.\n")

    for key, value in home.env.items():
        monkeypatch.setenv(key, value)
    config = load_config()
    agents = load_agents(config)[0]
    helper, other = resolve(config, agents["helper"]), resolve(config, agents["other"])
    assert helper.may_read(spec) and helper.write_mode(spec).value == "none"
    assert not other.may_read(spec)
    shown = {name: json.loads(cli(home, "agent", "show", name, "--json").stdout) for name in ("helper", "other")}
    assert spec in shown["helper"]["reads"] and f"!{spec}" in shown["helper"]["denied"]
    assert spec not in shown["other"]["reads"]

    for name, refused in (("helper", False), ("other", True)):
        ollama.script(MISTRAL, [call("read_note", path=spec), "Read."])
        cli(home, "fire", name, "--task", "How fast is the API?")
        [read] = tool_calls(home)
        assert bool(read.get("refused")) is refused and ("40 ms" in json.dumps(read)) is not refused, (name, read)
    # Shared for reading only: Helper's write of it is refused and the note stays as Research left it.
    before = home.note(spec)
    ollama.script(MISTRAL, [call("write_note", path=spec, content="Faster."), "Done."])
    cli(home, "fire", "helper", "--task", "Improve the spec.")
    [wrote] = tool_calls(home)
    assert wrote.get("refused") and home.note(spec) == before, wrote

# --- agent show --json is what a run may do ------------------------------------------------------

def realistic(home) -> None:
    """The week vault (OKRs, three projects, daily notes, inbox, research) with members of every
    behaviour, tasks assigned in Obsidian, owned and shared artifacts, a locked and a custom agent."""
    from weekvault import make_vault

    make_vault(home.vault, date(2026, 11, 23))
    put(home, "Artifacts/Recipe.md", "# Recipe\nSmoked paprika.\n")
    cli(home, "agent", "new", "Chef", "--from", "Artifacts/Recipe.md", "--locked")
    cli(home, "project", "assign", "Atlas", "research", "--as", "autonomous")
    cli(home, "project", "assign", "Beacon", "scribe", "--as", "semi-autonomous")
    cli(home, "project", "assign", "Cedar", "helper", "--as", "reactive")
    cli(home, "project", "assign", "Cedar", "librarian", "--as", "semi-autonomous")
    with open(home.vault / "Projects" / "Atlas" / "Atlas.md", "a", encoding="utf-8") as fh:
        fh.write("- [ ] Review the API contract [assignee:: [[Critic]]] [result:: [[Contract review]]]\n")
    for name, owner, shared in (("Atlas/Spec", "Research", ["[[Critic]]"]), ("Beacon/Post", "Scribe", []),
                                ("Cedar/Valves", "Ada", ["[[Helper]]"])):
        put(home, f"Projects/{name}.md", f"---\ntype: artifact\nartifact_type: intellectual\nowner: '[[{owner}]]'\n"
                                         f"shared_with: {json.dumps(shared)}\nstatus: draft\nqa: none\n---\n# {name}\n")


def test_agent_show_json_is_what_a_run_may_do_for_every_agent(team, ollama):
    from routine.vault.notes import vault_files
    from routine.vault.scope import in_scope

    home = team
    realistic(home)
    agents = [row["name"] for row in json.loads(cli(home, "agent", "list", "--json").stdout)]
    assert {"chef", "helper", "librarian", "research", "scribe", "critic"} <= set(agents)
    notes = [rel for rel in vault_files(home.vault) if rel.endswith(".md")]
    notes += ["Projects/Atlas/New.md", "Projects/Beacon/New.md", "Projects/Cedar/New.md", "Agents/Helper/New.md"]
    for name in agents:
        shown = json.loads(cli(home, "agent", "show", name, "--json").stdout)
        run = json.loads(cli(home, "fire", name, "--task", "Look around.", "--dry-run", "--json").stdout)["scopes"]
        assert run["approval"] == shown["approval"], name
        out = shown["hidden"]
        for rel in notes:
            may_read = in_scope(shown["reads"] + out, rel)
            proposal = bool(shown["proposal_writes"]) and in_scope(
                shown["proposal_writes"] + out + shown["denied"], rel
            )
            direct = not proposal and in_scope(shown["writes"] + out + shown["denied"], rel)
            run_proposal = bool(run["proposal_writes"]) and in_scope(run["proposal_writes"], rel)
            assert (may_read, direct, proposal) == (in_scope(run["reads"], rel),
                                                   not run_proposal and in_scope(run["writes"], rel),
                                                   run_proposal), (name, rel)
    # What the realistic vault gives, as `agent show` says it.
    scribe = json.loads(cli(home, "agent", "show", "scribe", "--json").stdout)
    assert scribe["proposal_writes"] == ["Projects/Beacon/**"] and scribe["assignments"]["projects"] == ["Beacon"]
    librarian = json.loads(cli(home, "agent", "show", "librarian", "--json").stdout)
    assert "!Projects/Atlas/Spec.md" in librarian["denied"] and "!Artifacts/Recipe.md" in librarian["hidden"]
    critic = json.loads(cli(home, "agent", "show", "critic", "--json").stdout)
    assert critic["assignments"]["tasks"] == ["Projects/Atlas/Atlas.md"] and "Projects/Atlas/Spec.md" in critic["reads"]
    chef = json.loads(cli(home, "agent", "show", "chef", "--json").stdout)
    assert chef["hidden"] == [] and "Artifacts/Recipe.md" in chef["reads"]


# --- nothing else computes scopes ----------------------------------------------------------------

RESOLVER = "access"
GONE = {"with_assignments", "effective_scopes", "effective_agent", "case_file_globs", "custom_scopes"}
ASSIGNMENT_READERS = {"assignments_of", "locked_grounding"}  # only the resolver turns these into scopes
SCOPE_FIELDS = {"reads", "writes", "proposal_writes"}


def scope_computations(tree: ast.AST) -> list[str]:
    """What in a module computes an agent's scopes: the old resolvers, reading assignments or locks,
    a spec copied with other scopes, an exclusion glob built by hand."""
    found = []
    for node in ast.walk(tree):
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
        if name in GONE | ASSIGNMENT_READERS:
            found.append(f"line {node.lineno}: {name}")
        if isinstance(node, ast.alias) and node.name.rsplit(".", 1)[-1] in GONE | ASSIGNMENT_READERS:
            found.append(f"imports {node.name}")
        if (
            isinstance(node, ast.Call)
            and (getattr(node.func, "id", None) or getattr(node.func, "attr", None)) == "replace"
        ):
            if SCOPE_FIELDS & {k.arg for k in node.keywords}:
                found.append(
                    f"line {node.lineno}: replace(…, "
                    f"{', '.join(sorted(SCOPE_FIELDS & {k.arg for k in node.keywords}))}=…)"
                )
        if (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and isinstance(node.left, ast.Constant)
                and node.left.value == "!"):
            found.append(f"line {node.lineno}: '!' + …")
    return found


def offenders(root: Path) -> dict[str, list[str]]:
    out = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(RESOLVER + "/") or rel == "projects/assignees.py":  # the resolver; the one "assigned"
            continue
        found = scope_computations(ast.parse(path.read_text(encoding="utf-8")))
        if found:
            out[rel] = found
    return out


def test_only_routine_access_computes_effective_scopes():
    assert offenders(ROUTINE) == {}
    assert not (ROUTINE / "projects" / "membership.py").exists()  # one definition of "assigned"
    assert not (ROUTINE / "config" / "sandbox.py").exists()


def test_the_scope_check_catches_a_second_resolver():
    second = ast.parse("from dataclasses import replace\n"
                       "def widen(agent, globs):\n    return replace(agent, writes=agent.writes + globs)\n"
                       "def hide(rel):\n    return '!' + rel\n"
                       "from routine.projects.assignees import assignments_of\n")
    assert len(scope_computations(second)) == 3


def test_a_semi_autonomous_members_case_file_is_never_mounted_writable_in_the_sandbox(team, monkeypatch):
    """The librarian's own note lets it write Projects/**; as a semi-autonomous member of P0 a
    run_command mount of Projects/ would write the case file around the proposal: read-only."""
    from dataclasses import replace
    from datetime import datetime

    from routine.access import scoped
    from routine.config.loader import load_agents, load_config
    from routine.tools.base import ToolContext
    from routine.tools.sandbox import workdir_for

    home = team
    for key, value in home.env.items():
        monkeypatch.setenv(key, value)
    config = replace(load_config(), sandbox_workdir="Projects")
    librarian = load_agents(config)[0]["librarian"]

    def writable() -> bool:
        ctx = ToolContext(vault=config.vault, agent=scoped(config, librarian), config=config, now=datetime.now())
        return workdir_for(ctx)[1]

    project(home, "P0", {})
    assert writable()
    project(home, "P0", {"Librarian": "semi-autonomous"})
    assert not writable()
    with pytest.raises(ValueError, match="effective scopes"):  # a tool never sees the note's own scopes
        ToolContext(vault=config.vault, agent=librarian, config=config, now=datetime.now())


def test_an_owned_artifact_outside_projects_is_still_its_owners_alone(team, monkeypatch):
    """An artifact owned by the Research agent lies in Inbox/, where the Librarian may write: the
    Librarian may not write it (nor append to it); its owner may."""
    from routine.access import resolve
    from routine.config.loader import load_agents, load_config

    home = team
    owned = "Inbox/Findings.md"
    put(home, owned, '---\ntype: intellectual\nowner: "[[Research]]"\n---\n# Findings\nThe kiln holds 900 C.\n')
    put(home, "Inbox/Loose.md", "# Loose\nAnyone's.\n")
    for key, value in home.env.items():
        monkeypatch.setenv(key, value)
    config = load_config()
    agents = load_agents(config)[0]
    librarian = resolve(config, agents["librarian"])
    assert librarian.write_mode(owned).value == "none" and librarian.write_mode("Inbox/Loose.md").value != "none"
    assert f"!{owned}" in json.loads(cli(home, "agent", "show", "librarian", "--json").stdout)["denied"]
