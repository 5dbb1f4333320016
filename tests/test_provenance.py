"""Routine's own words never become the person's intent (issue 33).

A project whose digest, QA note, task result and a Librarian section copied its checkbox lines:
`project show` lists only the person's tasks, the graph draws no copy as a task, an agent's answer
that echoes `[assignee:: [[Pricer]]]` assigns nothing, the person is told once per real task, and
Obsidian's Tasks plugin (its own pattern, below) counts no checkbox routine wrote. Which text is
routine's is decided in one module (``routine.vault.provenance``); a second decider fails here.
"""

from __future__ import annotations

import ast
import json
import re
from datetime import datetime
from pathlib import Path

import pytest

from deciders import second_deciders
from test_projects import cli as cli  # noqa: F401  (the fixture)

PROJECT = "Orin Pilot"
HOME_NOTE = f"Projects/{PROJECT}/{PROJECT}.md"
# The Tasks plugin's own task pattern (obsidian-tasks, TaskRegularExpressions.taskRegex): what Obsidian counts.
OBSIDIAN_TASK = re.compile(r"^([\s\t>]*)([-*+]|[0-9]+[.)]) +\[(.)\] *(.*)", re.M)
REAL_TASKS = [
    "- [ ] Call the printer [assignee:: [[Ada]]] 📅 2026-11-30",
    "- [ ] Sign the venue contract [assignee:: [[Bruno]]]",
    "- [ ] Price the pilot [assignee:: [[Research]]]",
    "- [/] Book the demo room",
    "- [ ] Send the agenda [assignee:: [[Ada]]]",
]
PLACEHOLDERS = ["- [ ] ", "- [ ] task 1", "- [ ] <task, starting with a verb>"]
# What a model echoes of the case file: every task line, and one assigning work to an agent.
ECHO = "\n".join(["Open work in the case file:", *REAL_TASKS, "- [ ] Price the pilot [assignee:: [[Pricer]]]",
                  "VERDICT: PASS"])


# --- one decider ----------------------------------------------------------------------------------
DECIDER = "vault/provenance.py"
MARKER_WRITERS = ("vault/sections.py", "vault/live.py")  # write markers (f-strings), never read them alone
TASK_READER = "projects/tasks.py"    # the one reader of task lines, which asks the decider
_MARKER = re.compile(r"routine.{0,20}:.{0,20}(?:begin|end|proposal)\b")
_TAGS = ("routine/proposal", "routine/alert")


def _docstrings(tree: ast.AST) -> set[int]:
    return {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}


def provenance_decisions(tree: ast.AST, rel: str = "") -> list[str]:
    """What in a module decides for itself which text is routine's: its notes' tags, the archived
    proposals' folder, its markers, or a checkbox line read by a pattern of its own."""
    skip = _docstrings(tree)
    written = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values} \
        if rel in MARKER_WRITERS else set()
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)) or id(node) in skip:
            continue
        text = node.value
        if any(tag in text for tag in _TAGS):
            found.append((node.lineno, "names routine's tag"))
        if re.search(r"(?:^|/)Proposals(?:/|$)", text):
            found.append((node.lineno, "names the archived proposals' folder"))
        if _MARKER.search(text) and id(node) not in written:
            found.append((node.lineno, "reads routine's markers"))
        if "[-*+]" in text and "\\[" in text and rel != TASK_READER:
            found.append((node.lineno, "reads checkbox lines"))
    return [f"line {line}: {what}" for line, what in sorted(found)]


def test_only_the_provenance_module_decides_which_text_is_routines():
    offenders = second_deciders(DECIDER, provenance_decisions)
    assert offenders == {}, ("only routine.vault.provenance decides which text is routine's (and "
                             f"routine.projects.tasks reads task lines through it); ask it: {offenders}")


def test_the_check_catches_a_second_decider():
    second = ast.parse(
        '"""A docstring may say Archive/Proposals/ and routine/proposal."""\n'
        "def mine(props):\n    return 'routine/proposal' not in props.get('tags', [])\n"
        "ARCHIVE = f'{folder}/Proposals'\n"
        "SKIP = re.compile(r'%%\\s*routine\\s*:\\s*begin')\n"
        "TASK = re.compile(r'^\\s*[-*+] \\[( |x)\\] (.*)$')\n"
        "def marker(key):\n    return f'%% routine:end {key} %%'\n"
    )
    assert provenance_decisions(second, "graph/extract.py") == [
        "line 3: names routine's tag", "line 4: names the archived proposals' folder",
        "line 5: reads routine's markers", "line 6: reads checkbox lines", "line 8: reads routine's markers"]
    # The marker writer may write markers in f-strings, never match them.
    assert provenance_decisions(ast.parse("def end(key):\n    return f'%% routine:end {key} %%'\n"),
                                MARKER_WRITERS[0]) == []


# --- the quotation ---------------------------------------------------------------------------------
def test_a_checkbox_routine_writes_is_a_quotation_obsidian_does_not_count_and_an_approval_makes_it_a_task():
    from routine.projects.tasks import parse_tasks
    from routine.vault.provenance import quote_tasks, unquote_tasks
    from routine.vault.sections import prepare_content

    text = ("- [ ] a\n  * [x] b\n> - [/] in a callout\n1. [ ] numbered\n```\n- [ ] in code\n```\n"
            "Not a [ ] task.\n")
    quoted = prepare_content(text)
    assert quoted == quote_tasks(text) == ("- \\[ ] a\n  * \\[x] b\n> - \\[/] in a callout\n1. \\[ ] numbered\n"
                                           "```\n- [ ] in code\n```\nNot a [ ] task.\n")
    outside_code = quoted.split("```")[0] + quoted.split("```")[2]
    assert not OBSIDIAN_TASK.search(outside_code) and parse_tasks("Inbox/x.md", quoted)[0] == []
    assert unquote_tasks(quoted) == text


# --- the reproduction, through the CLI ------------------------------------------------------------
def _write(vault: Path, target, content: str, agent: str, approval: bool = False):
    from routine.vault import Provenance, write_output

    prov = Provenance(agent=agent, model="qwen", run=f"run-{agent}", generated=datetime(2026, 11, 26, 9, 0))
    return write_output(vault, target, content, prov, ["**"], approval_required=approval)


def orin_pilot(cli) -> Path:
    """The project as the issue found it: five real tasks, the template's blanks, and copies of
    the task lines in routine's digest, QA note, the task's result and a Librarian section; one of
    them an older routine's unquoted copy, and a proposal decided and archived."""
    from routine.vault import WriteTarget

    home = cli.home
    vault = home.vault
    cli("project", "new", PROJECT)
    for person in ("Ada", "Bruno"):
        cli("project", "assign", PROJECT, person)
    cli("project", "assign", PROJECT, "research", "--as", "reactive")
    pricer = (vault / "Agents" / "Research.md").read_text().replace("agent: research", "agent: pricer")
    (vault / "Agents" / "Pricer.md").write_text(pricer)
    home_note = vault / HOME_NOTE
    home_note.write_text(home_note.read_text().replace(
        "## Tasks\n", "## Tasks\n\n" + "\n".join(REAL_TASKS + PLACEHOLDERS) + "\n", 1))
    folder = f"Projects/{PROJECT}"
    _write(vault, WriteTarget(note=f"{folder}/Digests/2026-11-26.md", section="Daily digest"), ECHO, "orin-pilot-pm")
    _write(vault, WriteTarget(note=f"{folder}/QA/Pilot plan.md", section="Critic"), ECHO, "critic")
    _write(vault, WriteTarget(note=f"{folder}/Price the pilot.md"), ECHO, "research")
    _write(vault, WriteTarget(note="Daily/2026-11-26.md", section="Librarian"), ECHO, "librarian")
    legacy = (f"## Daily digest\n%% routine:begin daily-digest agent=orin-pilot-pm sha=0123456789ab %%\n{ECHO}\n"
              "%% routine:end daily-digest %%\n")  # an older routine wrote checkboxes as they came
    (vault / folder / "Digests" / "2026-11-25.md").write_text(legacy)
    proposal = _write(vault, WriteTarget(note=f"{folder}/Notes.md", section="Plan"), ECHO, "librarian", approval=True)
    cli("approve", proposal.proposal_rel, "--reject")
    return vault


def test_copies_in_routines_text_are_not_tasks_not_assignments_and_not_cards(cli):
    vault = orin_pilot(cli)
    home = cli.home
    assert list((vault / "Archive" / "Proposals").glob("*.md")), "the rejected proposal is archived"
    # What Obsidian's Tasks plugin counts: none of routine's checkboxes, wherever it wrote them.
    for rel in (f"Projects/{PROJECT}/Digests/2026-11-26.md", f"Projects/{PROJECT}/QA/Pilot plan.md",
                f"Projects/{PROJECT}/Price the pilot.md", "Daily/2026-11-26.md"):
        assert "Call the printer" in home.note(rel) and not OBSIDIAN_TASK.search(home.note(rel)), rel

    _, out, _ = cli("project", "show", PROJECT, "--json")
    shown = sorted((t["text"], who, t["file"]) for who, tasks in json.loads(out)["open_tasks"].items() for t in tasks)
    assert shown == sorted([
        ("Book the demo room", "(unassigned)", HOME_NOTE), ("Call the printer", "Ada", HOME_NOTE),
        ("Price the pilot", "Research", HOME_NOTE), ("Send the agenda", "Ada", HOME_NOTE),
        ("Sign the venue contract", "Bruno", HOME_NOTE)]), shown
    _, out, _ = cli("project", "show", PROJECT)
    assert "Pricer" not in out

    # The agent an answer echoed as assignee has no task; the one the person assigned has one.
    _, out, _ = cli("agent", "show", "pricer")
    assert "tasks in: none" in out, out
    from routine.projects.assignees import assignments_of

    assert [t.text for _, t in assignments_of(vault, "pricer").tasks] == []
    assert [t.text for _, t in assignments_of(vault, "research").tasks] == [] \
        and assignments_of(vault, "research").projects == (PROJECT,)

    # The project's canvas and graph: one card per real task, none for a copy or a blank.
    _, out, _ = cli("graph", "show", "project", PROJECT, "--json")
    cards = sorted(n["text"] for n in json.loads(out)["nodes"] if n.get("type") == "task")
    assert cards == sorted(["Call the printer", "Sign the venue contract", "Price the pilot", "Book the demo room",
                            "Send the agenda"]), cards
    edges = json.loads(out)["edges"]
    assert not [e for e in edges if e["type"] == "assigned_to" and "Pricer" in e["target"]], edges


def test_the_person_is_told_once_per_real_task(cli, monkeypatch):
    """Each note of the case file, as the daemon sees it change, tells people of their own tasks only."""
    from receiver import Receiver
    from routine.config.loader import load_config
    from routine.daemon.person_tasks import tell_people

    vault = orin_pilot(cli)
    receiver = Receiver()
    try:
        home = cli.home
        home.config.write_text(home.config.read_text() + f"\nnotify: {{urls: [json://127.0.0.1:{receiver.port}/hook]}}\n")
        config = load_config(str(home.config))
        now = datetime(2026, 11, 26, 12, 0)
        told = sum(tell_people(config, p.relative_to(vault).as_posix(), now)
                   for p in sorted((vault / "Projects" / PROJECT).rglob("*.md")))
        told += sum(tell_people(config, p.relative_to(vault).as_posix(), now) for p in (vault / "Daily").glob("*.md"))
        assert told == 3
        receiver.wait_for(lambda ts: len(ts) >= 3, 30, "the three messages")
        titles = sorted(t for t in receiver.texts())
        assert len(titles) == 3, titles
        for title in ("Task for Ada: Call the printer", "Task for Ada: Send the agenda",
                      "Task for Bruno: Sign the venue contract"):
            assert sum(title in t for t in titles) == 1, (title, titles)
    finally:
        receiver.stop()


@pytest.mark.parametrize("echo", ["- [ ] Price the pilot [assignee:: [[Pricer]]]",
                                  "Pricer could take it: [assignee:: [[Pricer]]]"])
def test_an_answer_that_echoes_an_assignee_into_a_case_file_assigns_nothing(cli, echo):
    """Whether the answer lands as a section, a whole note or an entry at the end of a note."""
    from routine.projects.assignees import assignments_of
    from routine.vault import WriteTarget

    vault = orin_pilot(cli)
    folder = f"Projects/{PROJECT}"
    _write(vault, WriteTarget(append=HOME_NOTE), echo, "librarian")
    _write(vault, WriteTarget(note=f"{folder}/Pricing answer.md"), echo, "librarian")
    _write(vault, WriteTarget(note=HOME_NOTE, section="Librarian"), echo, "librarian")
    assert assignments_of(vault, "pricer").tasks == ()
    _, out, _ = cli("agent", "show", "pricer")
    assert "tasks in: none" in out, out
