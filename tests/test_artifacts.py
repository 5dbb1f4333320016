"""Artifacts as the person types them (`type: intellectual`, `Information Product`…), from a
fresh `routine init`, through the CLI: QA promotes them, `project show` and the project canvas
list them, ownership holds; a reactive member's task result is an artifact from the start."""

from __future__ import annotations

import ast
import json
from datetime import datetime

import pytest

from deciders import second_deciders
from routine.projects.artifacts import LEGACY_TYPE, ArtifactType, artifact_type_of, type_properties
from test_projects import PROJECT, QWEN, call, properties
from test_projects import cli as cli  # noqa: F401  (the fixture)

REPORT = f"Projects/{PROJECT}/Garden report.md"
QA_PASS = ["VERDICT: PASS\nFINDINGS:\n- The question is stated first", "VERDICT: PASS\nFINDINGS:\n- Sources are cited"]


@pytest.mark.parametrize(
    "written, kind",
    [
        ("intellectual", ArtifactType.INTELLECTUAL),
        ("Intellectual", ArtifactType.INTELLECTUAL),
        ("cognitive", ArtifactType.COGNITIVE),
        ("COGNITIVE", ArtifactType.COGNITIVE),
        ("information-product", ArtifactType.INFORMATION_PRODUCT),
        ("information product", ArtifactType.INFORMATION_PRODUCT),
        ("Information Product", ArtifactType.INFORMATION_PRODUCT),
        ("information_product", ArtifactType.INFORMATION_PRODUCT),
        (" Information  product ", ArtifactType.INFORMATION_PRODUCT),
    ],
)
def test_the_kinds_a_person_types_make_an_artifact(written, kind):
    assert artifact_type_of({"type": written}) is kind


def test_the_older_form_still_counts_and_other_types_do_not():
    assert (
        artifact_type_of({"type": "artifact", "artifact_type": "Information Product"})
        is ArtifactType.INFORMATION_PRODUCT
    )
    assert artifact_type_of({"type": "Artifact"}) is ArtifactType.COGNITIVE
    for props in (
        {},
        {"type": "project"},
        {"type": "note"},
        {"artifact_type": "intellectual"},
        {"type": ["intellectual"]},
        {"type": "intellectuals"},
    ):
        assert artifact_type_of(props) is None, props


def test_a_change_of_kind_is_written_in_the_notes_own_form():
    product = ArtifactType.INFORMATION_PRODUCT
    assert type_properties({"type": "artifact", "artifact_type": "intellectual"}, product) == {
        "artifact_type": product.value
    }
    assert type_properties({"type": "intellectual"}, product) == {"type": "information-product"}
    assert type_properties({"type": "Intellectual"}, product) == {"type": "Information Product"}
    assert type_properties({"type": "information product"}, ArtifactType.INTELLECTUAL) == {"type": "intellectual"}
    assert type_properties({"type": "Information_Product"}, ArtifactType.INTELLECTUAL) == {"type": "Intellectual"}
    assert type_properties({}, ArtifactType.INTELLECTUAL) == {"type": "intellectual"}


def write(home, rel: str, text: str) -> None:
    path = home.vault / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_a_person_typed_intellectual_report_passes_qa_and_is_listed_and_drawn(cli, ollama):
    home = cli.home
    cli("project", "new", PROJECT)
    write(home, REPORT, '---\ntype: intellectual\nowner: "[[Research]]"\nderived_from: ["[[Garden Shed]]"]\n---\n'
                        "# Garden report\n\nThe shed needs a new roof.\n")
    _, out, _ = cli("project", "show", PROJECT, "--json")
    assert json.loads(out)["artifacts"] == {"intellectual": {"none": [REPORT]}}

    ollama.script(QWEN, QA_PASS)
    _, out, _ = cli("artifact", "qa", REPORT, "--json")
    assert json.loads(out)["verdict"] == "passed" and json.loads(out)["promoted"] is True
    props = properties(home, REPORT)
    assert props["type"] == "information-product" and props["qa"] == "passed" and "artifact_type" not in props
    assert props["derived_from"] == ["[[Garden Shed]]"] and "Verdict: passed" in home.note(REPORT)
    _, out, _ = cli("project", "show", PROJECT, "--json")
    assert json.loads(out)["artifacts"] == {"information-product": {"passed": [REPORT]}}
    from routine.projects.brief import project_brief
    from routine.projects.model import find_project

    assert "[[Garden report]] (information-product, QA passed)" in project_brief(
        home.vault, find_project(home.vault, PROJECT)
    )

    # The graph and the project's canvas show it as an artifact, derived from the shed.
    _, out, _ = cli("graph", "show", "project", PROJECT, "--json")
    shown = json.loads(out)
    node = next(n for n in shown["nodes"] if n["id"] == REPORT)
    assert node["type"] == "artifact" and node["artifact_type"] == "information-product", node
    from routine.graph.cache import GraphCache
    from routine.graph.publish import CanvasWriter

    cache = GraphCache(home.vault, home.root / "graph-test.sqlite3")
    try:
        cache.reconcile()
        written = CanvasWriter(home.vault, home.root / "canvases.json").refresh(cache.graph)
    finally:
        cache.close()
    canvas_rel = next(rel for rel in written if rel.endswith(f"Project {PROJECT}.canvas"))
    doc = json.loads((home.vault / canvas_rel).read_text(encoding="utf-8"))
    from routine.graph.cards import COLORS
    from routine.graph.model import NodeType

    report = next(n for n in doc["nodes"] if n.get("file") == REPORT)  # drawn in the artifacts' colour
    assert report.get("color") == COLORS[NodeType.ARTIFACT], report

    # Capitalised, it stays in the person's spelling when an edit sends it back to QA.
    path = home.vault / REPORT
    path.write_text(path.read_text(encoding="utf-8").replace("type: information-product", "type: Information Product")
                    .replace("a new roof", "two new doors"), encoding="utf-8")
    _, out, _ = cli("project", "show", PROJECT, "--json")
    assert json.loads(out)["artifacts"] == {"intellectual": {"needed": [REPORT]}}
    assert properties(home, REPORT)["type"] == "Intellectual"


def test_qa_of_a_note_that_is_not_an_artifact_says_which_property_to_add(cli):
    home = cli.home
    cli("project", "new", PROJECT)
    write(home, REPORT, "# Garden report\n")
    code, _, err = cli("artifact", "qa", REPORT, ok=False)
    assert code != 0 and "Traceback" not in err
    assert "add `type: intellectual` (or cognitive, information product) in its properties" in err, err
    write(home, REPORT, "---\ntype: meeting\n---\n# Garden report\n")
    _, _, err = cli("artifact", "qa", REPORT, ok=False)
    assert "its `type:` is 'meeting'" in err and "set `type: intellectual`" in err, err
    write(home, REPORT, "---\ntype: Cognitive\n---\n# Garden report\n")
    _, _, err = cli("artifact", "qa", REPORT, ok=False)
    assert "cognitive artifact" in err and "set `type: Intellectual` if it is a product" in err, err


def test_a_reactive_members_task_result_is_an_artifact_qa_needs_no_hand_edit_and_it_is_its_own(cli, ollama):
    """The pickup the daemon runs, in process: the result is an intellectual artifact owned by the
    agent, derived from the notes the task and its run cited; QA passes with no hand edit; the
    librarian (who may write all of Projects/**) may not write it."""
    from routine.config.loader import load_agents, load_config
    from routine.flows.pickup import pending, run_pickup
    from routine.flows.step_setup import STEP_SETUP
    from routine.journal import Journal
    from routine.runner.step import Runner

    home = cli.home
    cli("project", "new", PROJECT)
    cli("project", "assign", PROJECT, "research", "--as", "reactive")
    write(home, f"Projects/{PROJECT}/Garden Shed.md", "# Garden Shed\n\nThe roof leaks.\n")
    write(home, "Plans/Project Map.md", "# Project map\n\n- Acme Launch: the garden first.\n")
    agent_note = home.vault / "Agents/Research.md"  # its grounding: what every run of it reads and cites
    agent_note.write_text(
        agent_note.read_text(encoding="utf-8").replace("grounding: []", 'grounding: ["[[Project Map]]"]'),
        encoding="utf-8",
    )
    home_note = home.vault / f"Projects/{PROJECT}/{PROJECT}.md"
    home_note.write_text(home_note.read_text(encoding="utf-8").replace(
        "## Tasks\n", "## Tasks\n\n- [ ] Summarise [[Garden Shed]] [assignee:: [[Research]]]\n"), encoding="utf-8")
    config = load_config(None)
    agents, _ = load_agents(config)
    picks = pending(home.vault, agents)
    assert [p.task.text for p in picks] == ["Summarise [[Garden Shed]]"]
    journal = Journal()
    runner = Runner(config, journal, setup=STEP_SETUP)
    try:
        assert run_pickup(runner, home.vault, picks[0], datetime.now().astimezone(), agents) is True
    finally:
        runner.close()
        journal.close()
    rel = picks[0].result_rel
    props = properties(home, rel)
    assert props["type"] == "intellectual" and props["owner"] == "[[Research]]", props
    assert props["status"] == "draft" and props["qa"] == "needed"
    assert props["derived_from"] == [f"[[Projects/{PROJECT}/{PROJECT}]]", "[[Garden Shed]]", "[[Plans/Project Map]]"]

    ollama.script(QWEN, QA_PASS)
    _, out, _ = cli("artifact", "qa", rel, "--json")
    assert json.loads(out)["promoted"] is True and properties(home, rel)["type"] == "information-product"

    before = home.note(rel)
    ollama.script("mistral:7b-instruct-q4_K_M", [call("write_note", path=rel, content="Overwritten!"), "Done."])
    _, out, _ = cli("fire", "librarian", "--task", "Tidy the project.", "--json")
    assert home.note(rel) == before
    journal = Journal()
    try:
        log = journal.get(json.loads(out)["run"]).log
    finally:
        journal.close()
    assert any("neither owns nor was assigned" in json.dumps(e) for e in log if e.get("type") == "tool"), log


# --- nothing else decides "is this an artifact", or its kind ------------------------------------

DECIDER = "projects/artifacts.py"  # artifact_type_of: the one definition
KIND_WORDS = {LEGACY_TYPE, *(k.value for k in ArtifactType), *(k.spoken for k in ArtifactType),
              *(k.value.replace("-", "_") for k in ArtifactType)}
ITS_OWN = {"LEGACY_TYPE", "_declared_type", "parse"}  # artifacts.py's means of reading a `type:`


def _bare(node: ast.AST) -> ast.AST:
    """``str(x).strip().lower()`` -> ``x``."""
    while isinstance(node, ast.Call):
        if isinstance(node.func, ast.Attribute) and node.func.attr in ("lower", "strip", "casefold", "replace"):
            node = node.func.value
        elif isinstance(node.func, ast.Name) and node.func.id == "str" and node.args:
            node = node.args[0]
        else:
            break
    return node


def _reads_type(node: ast.AST) -> bool:
    """``x.get("type")``, ``x["type"]`` (a note's `type:` property read)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" and node.args:
        key = node.args[0]
    elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
        key = node.slice
    else:
        return False
    return isinstance(key, ast.Constant) and key.value == "type"


def _kind(node: ast.AST) -> bool:
    """A kind word ('intellectual', 'artifact'…, or a tuple of them) or an ``ArtifactType`` member."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.strip().lower() in KIND_WORDS
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_kind(e) for e in node.elts)
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and node.id == "ArtifactType"


def _written_out(tree: ast.AST) -> set[int]:
    """ids of the "artifact_type" constants that only name an output's key (``attrs[k] = …``, ``{k: …}``)."""
    keys = {id(n.slice) for n in ast.walk(tree) if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store)}
    return keys | {id(k) for n in ast.walk(tree) if isinstance(n, ast.Dict) for k in n.keys if k is not None}


def artifact_decisions(tree: ast.AST) -> list[str]:
    """What in a module decides for itself whether a note is an artifact, or of which kind: reading
    `artifact_type`, the decider's own parsing, a `type:` (or anything) compared with a kind."""
    found: list[tuple[int, str]] = []
    out = _written_out(tree)
    for node in ast.walk(tree):
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
        if name in ITS_OWN and (name != "parse" or _kind(node)):
            found.append((node.lineno, name))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "ArtifactType":
            found.append((node.lineno, "ArtifactType(…)"))
        if isinstance(node, ast.Constant) and node.value == "artifact_type" and id(node) not in out:
            found.append((node.lineno, "reads `artifact_type`"))
        if isinstance(node, ast.Compare):
            sides = [_bare(s) for s in (node.left, *node.comparators)]
            words = any(_kind(s) and not isinstance(s, ast.Attribute) for s in sides)
            if words or (any(_reads_type(s) for s in sides) and any(_kind(s) for s in sides)):
                found.append((node.lineno, "compares with an artifact kind"))
    return [f"line {line}: {what}" for line, what in sorted(found)]


def test_only_artifact_type_of_decides_what_is_an_artifact():
    offenders = second_deciders(DECIDER, lambda tree, rel: artifact_decisions(tree))
    assert offenders == {}, ("only routine.projects.artifacts.artifact_type_of decides whether a note is an "
                             f"artifact and of which kind; call it: {offenders}")


def test_the_check_catches_a_second_definition():
    second = ast.parse(
        "def is_report(props):\n    return str(props.get('type')).strip().lower() in ('intellectual', 'cognitive')\n"
        "def kind(note):\n    return note.frontmatter.get('artifact_type') or 'cognitive'\n"
        "def legacy(props):\n    return props['type'] == ArtifactType.INTELLECTUAL.value\n"
        "def parsed(props):\n    return ArtifactType.parse(props.get('kind'))\n"
        "SHOWN = ('status', 'artifact_type')\n"
        "def shown(kind, attrs):\n    attrs['artifact_type'] = kind.value\n    return kind == ArtifactType.COGNITIVE\n"
    )
    assert artifact_decisions(second) == [
        "line 2: compares with an artifact kind", "line 4: reads `artifact_type`",
        "line 6: compares with an artifact kind", "line 8: parse", "line 9: reads `artifact_type`",
    ]


def test_a_note_that_is_not_an_artifact_has_no_kind_in_the_graph():
    """`artifact_type:` beside another `type:` is not an artifact: its graph node has no kind."""
    from routine.graph.extract import extract

    [node] = extract("Projects/Acme/Notes.md", "---\ntype: meeting\nartifact_type: intellectual\n---\n# Notes\n").nodes
    assert node.type != "artifact" and "artifact_type" not in node.attrs, node
    [node] = extract("Projects/Acme/Spec.md", "---\ntype: Intellectual\n---\n# Spec\n").nodes
    assert node.type == "artifact" and node.attrs["artifact_type"] == "intellectual", node
