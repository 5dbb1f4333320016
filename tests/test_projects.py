"""Projects through the CLI, in process (`routine.cli.main`): scaffolding that never
overwrites, membership scopes and artifact ownership against scripted tool calls, QA, and the
project manager's recommendation approved into the case file."""

from __future__ import annotations

import json
import os
import re

import pytest

from routine.cli import main

MISTRAL = "mistral:7b-instruct-q4_K_M"
QWEN = "qwen2.5:7b-instruct-q4_K_M"
PROJECT = "Acme Launch"
HOME_NOTE = f"Projects/{PROJECT}/{PROJECT}.md"


def call(name, **arguments):
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


@pytest.fixture
def cli(initialised, monkeypatch, capsys):
    for key in list(os.environ):
        if key.startswith(("ROUTINE_", "XDG_", "OLLAMA_")):
            monkeypatch.delenv(key)
    for key, value in initialised.env.items():
        monkeypatch.setenv(key, value)

    def run(*args: str, ok: bool = True):
        code = main(list(args))
        out = capsys.readouterr()
        if ok:
            assert code == 0, f"routine {' '.join(args)} exited {code}\n{out.out}\n{out.err}"
        return code, out.out, out.err

    run.home = initialised
    return run


def properties(home, rel: str) -> dict:
    from routine.vault.frontmatter import split_frontmatter

    return split_frontmatter(home.note(rel))[0]


def artifact(home, rel: str, owner: str, body: str, **props) -> None:
    from routine.vault.frontmatter import join_frontmatter

    path = home.vault / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(join_frontmatter({"type": "artifact", "artifact_type": "intellectual", "owner": f"[[{owner}]]",
                                      "status": "draft", "qa": "none", **props}, body), encoding="utf-8")


def test_a_project_is_scaffolded_adopted_and_staffed_without_overwriting_anything(cli):
    home = cli.home
    cli("project", "new", PROJECT, "--goal", "Ship the launch")
    props = properties(home, HOME_NOTE)
    assert props["type"] == "project" and props["goal"] == "Ship the launch" and props["status"] == "active"
    assert props["manager"] == f"[[{PROJECT} PM]]"
    pm = home.note(f"Agents/{PROJECT} PM.md")
    assert "agent: acme-launch-pm" in pm and f'writes: ["Projects/{PROJECT}/**"]' in pm

    before = home.note(HOME_NOTE)
    code, _, err = cli("project", "new", PROJECT, ok=False)
    assert code == 2 and "never overwrites" in err and "adopt" in err
    assert home.note(HOME_NOTE) == before

    # A folder made by hand, with the person's own home note: adopting only adds what is missing.
    hand = home.vault / "Projects" / "Garden" / "Garden.md"
    hand.parent.mkdir(parents=True)
    hand.write_text("---\ngoal: Grow tomatoes\n---\n# Garden\n\nMy own words.\n", encoding="utf-8")
    cli("project", "adopt", "Garden")
    adopted = home.note("Projects/Garden/Garden.md")
    assert "My own words." in adopted and "goal: Grow tomatoes" in adopted and "type: project" in adopted
    assert (home.vault / "Agents" / "Garden PM.md").exists()

    cli("project", "assign", PROJECT, "Ada", "--role", "client lead")
    cli("project", "assign", PROJECT, "research", "--as", "reactive")
    cli(
        "project",
        "assign",
        PROJECT,
        "scribe",
        "--as",
        "semi-autonomous",
        "--task",
        "Draft the FAQ",
        "--due",
        "2026-12-01",
    )
    assert properties(home, "People/Ada.md")["type"] == "person"
    _, out, _ = cli("project", "show", PROJECT, "--json")
    info = json.loads(out)
    assert {(m["name"], m["kind"], m["behaviour"]) for m in info["members"]} == {
        ("Ada", "person", None), ("Research", "agent", "reactive"), ("Scribe", "agent", "semi-autonomous")}
    assert info["open_tasks"] == {"Scribe": [{"text": "Draft the FAQ", "due": "2026-12-01", "state": "open",
                                              "file": HOME_NOTE, "result": None}]}
    assert [f["block"] for f in info["next_fires"]] == ["acme-launch-digest", "acme-launch-review"]

    # Reassigning moves the task; a bad behaviour is one sentence with the fix.
    cli("project", "assign", PROJECT, "research", "--task", "Draft the FAQ")
    assert "- [ ] Draft the FAQ [assignee:: [[Research]]] 📅 2026-12-01" in home.note(HOME_NOTE)
    code, _, err = cli("project", "assign", PROJECT, "research", "--as", "lazy", ok=False)
    assert code == 2 and "autonomous, semi-autonomous, reactive, scheduled" in err and "Traceback" not in err


def test_scripted_tool_calls_cannot_write_an_artifact_the_agent_does_not_own(cli, ollama):
    """The librarian may write all of Projects/** by its own note and has write_note; still it
    writes only the artifacts it owns or was assigned, whatever the model asks."""
    home = cli.home
    cli("project", "new", PROJECT)
    cli("project", "assign", PROJECT, "librarian", "--as", "autonomous")
    artifact(home, f"Projects/{PROJECT}/Pricing report.md", "Ada", "# Pricing\n\nAda's analysis.\n",
             shared_with=["[[Librarian]]"])
    artifact(home, f"Projects/{PROJECT}/Index.md", "Librarian", "# Index\n")
    artifact(home, f"Projects/{PROJECT}/Brief.md", "Ada", "# Brief\n")
    with open(home.vault / HOME_NOTE, "a", encoding="utf-8") as fh:
        fh.write("- [ ] Update the brief [assignee:: [[Librarian]]] [result:: [[Brief]]]\n")
    report_before = home.note(f"Projects/{PROJECT}/Pricing report.md")
    ollama.script(MISTRAL, [
        call("write_note", path=f"Projects/{PROJECT}/Pricing report.md", content="Overwritten!", section="Pricing"),
        call("write_note", path=f"Projects/{PROJECT}/Pricing report", content="Appended!", append=True),
        call("read_note", path=f"Projects/{PROJECT}/Pricing report.md"),
        call("write_note", path=f"Projects/{PROJECT}/Index.md", content="- [[Pricing report]]", section="Entries"),
        call("write_note", path=f"Projects/{PROJECT}/Brief.md", content="Brief updated.", section="Update"),
        "Done.",
    ])
    _, out, _ = cli("fire", "librarian", "--task", "Tidy the project.", "--json")
    run_id = json.loads(out)["run"]
    assert home.note(f"Projects/{PROJECT}/Pricing report.md") == report_before
    assert "- [[Pricing report]]" in home.note(f"Projects/{PROJECT}/Index.md")
    assert "Brief updated." in home.note(f"Projects/{PROJECT}/Brief.md")

    from routine.journal import Journal

    journal = Journal()
    try:
        run = journal.get(run_id)
    finally:
        journal.close()
    results = [entry for entry in run.log if entry.get("type") == "tool"]
    refused = [e for e in results if "neither owns nor was assigned" in json.dumps(e)]
    assert len(refused) == 2, results
    assert any("Ada's analysis." in json.dumps(e) for e in results)  # shared with it: readable


def test_qa_promotes_on_a_pass_an_edit_puts_it_back_and_a_fail_records_findings(cli, ollama):
    home = cli.home
    cli("project", "new", PROJECT)
    rel = f"Projects/{PROJECT}/Market report.md"
    artifact(home, rel, "Research", "# Market report\n\nThe market grows.\n", derived_from=["[[Interviews]]"])
    ollama.script(QWEN, ["VERDICT: PASS\nFINDINGS:\n- The question is stated first",
                         "VERDICT: PASS\nFINDINGS:\n- Sources are cited"])
    _, out, _ = cli("artifact", "qa", rel, "--json")
    result = json.loads(out)
    assert result["verdict"] == "passed" and result["promoted"] is True
    props = properties(home, rel)
    assert props["artifact_type"] == "information-product" and props["qa"] == "passed" and len(props["qa_runs"]) == 2
    text = home.note(rel)
    assert "Verdict: passed" in text and "The question is stated first" in text and "Sources are cited" in text

    from routine.journal import Journal

    journal = Journal()
    try:
        projects = {journal.get(r).project for r in props["qa_runs"]}
    finally:
        journal.close()
    assert projects == {PROJECT}

    # The person edits the promoted report: it needs QA again (seen by `project show`, and by the daemon).
    path = home.vault / rel
    path.write_text(
        path.read_text(encoding="utf-8").replace("The market grows.", "The market shrinks."), encoding="utf-8"
    )
    _, out, _ = cli("project", "show", PROJECT, "--json")
    assert json.loads(out)["artifacts"] == {"intellectual": {"needed": [rel]}}

    ollama.script(QWEN, ["VERDICT: FAIL\nFINDINGS:\n- The claim contradicts [[Interviews]]",
                         "VERDICT: PASS\nFINDINGS:\n- Fine"])
    code, out, _ = cli("artifact", "qa", rel, ok=False)
    assert code == 1 and "failed" in out
    props = properties(home, rel)
    assert props["artifact_type"] == "intellectual" and props["qa"] == "failed"
    assert "The claim contradicts" in home.note(rel) and "Verdict: failed" in home.note(rel)


def test_a_reply_without_a_verdict_never_promotes(cli, ollama):
    home = cli.home
    cli("project", "new", PROJECT)
    rel = f"Projects/{PROJECT}/Plan.md"
    artifact(home, rel, "Research", "# Plan\n")
    ollama.script(QWEN, ["Looks great to me!", "VERDICT: PASS"])
    code, _, _ = cli("artifact", "qa", rel, ok=False)
    assert code == 1 and properties(home, rel)["artifact_type"] == "intellectual"
    assert "no VERDICT line" in home.note(rel)


def test_the_managers_recommendation_is_a_proposal_and_approving_it_instantiates_the_template(cli, ollama):
    home = cli.home
    cli("project", "new", PROJECT, "--goal", "Launch on 1 December")
    cli("project", "assign", PROJECT, "Ada")
    ollama.script(MISTRAL, [call("recommend_artifact", template="Pre-mortem", reason="the launch is next week"),
                            "**Progress** — Ada: nothing yet."])
    _, out, _ = cli("fire", "acme-launch-digest", "--json")
    fired = json.loads(out)
    assert fired["status"] == "ok"
    digest = next((home.vault / "Projects" / PROJECT / "Digests").glob("*.md")).read_text(encoding="utf-8")
    assert "Ada: nothing yet." in digest
    proposals = [p for p in (home.vault / "Drafts").glob("*.md") if "Pre-mortem" in p.read_text(encoding="utf-8")]
    assert len(proposals) == 1
    assert "the launch is next week" in proposals[0].read_text(encoding="utf-8")
    target = home.vault / "Projects" / PROJECT / "Pre-mortem.md"
    assert not target.exists()

    cli("approve", proposals[0].relative_to(home.vault).as_posix())
    created = properties(home, f"Projects/{PROJECT}/Pre-mortem.md")
    assert created["type"] == "artifact" and created["artifact_type"] == "cognitive"
    assert created["owner"] == f"[[{PROJECT} PM]]" and created["shared_with"] == ["[[Ada]]"]
    assert "## Causes (most likely first)" in target.read_text(encoding="utf-8")

    from test_daemon import journal_rows

    rows = journal_rows(home, "SELECT kind, project FROM runs WHERE block = 'acme-launch-digest'")
    assert sorted(rows) == [("block", PROJECT), ("step", PROJECT)]


def test_cadence_in_the_home_note_becomes_blocks_and_a_bad_cron_is_one_sentence(cli):
    home = cli.home
    cli("project", "new", PROJECT)
    path = home.vault / HOME_NOTE
    path.write_text(path.read_text(encoding="utf-8").replace("digest: 0 9 * * *", "digest: 30 7 * * 1-5")
                    .replace("review: 0 16 * * 5", "review: 'off'"), encoding="utf-8")
    _, out, _ = cli("schedule", "list", "--json")
    blocks = {b["id"]: b["cron"] for b in json.loads(out)["blocks"]}
    assert blocks["acme-launch-digest"] == "30 7 * * 1-5" and "acme-launch-review" not in blocks
    path.write_text(path.read_text(encoding="utf-8").replace("30 7 * * 1-5", "every morning"), encoding="utf-8")
    code, _, err = cli("schedule", "validate", ok=False)
    assert code == 2 and re.search(r"Acme Launch\.md.*cadence\.digest.*bad cron 'every morning'", err), err


def test_autonomous_members_work_on_the_cadence_before_the_managers_digest(cli, ollama):
    home = cli.home
    cli("project", "new", PROJECT)
    cli("project", "assign", PROJECT, "research", "--as", "autonomous")
    ollama.script(QWEN, ["Compared three competitors' prices."])
    _, out, _ = cli("fire", "acme-launch-digest", "--json")
    steps = json.loads(out)["steps"]
    assert [s["status"] for s in steps] == ["ok", "ok"]
    digest = next((home.vault / "Projects" / PROJECT / "Digests").glob("*.md")).read_text(encoding="utf-8")
    assert "Research's work" in digest and "Compared three competitors' prices." in digest and "Daily digest" in digest
    pm_prompt = json.dumps(ollama.last_request()["messages"])
    assert "What the autonomous members did today" in pm_prompt and "Compared three competitors" in pm_prompt


def test_case_file_scopes_follow_membership_tasks_and_status(cli):
    home = cli.home
    cli("project", "new", PROJECT)
    cli("project", "new", "Garden")
    cli("project", "assign", PROJECT, "research", "--as", "reactive")
    cli("project", "assign", "Garden", "Ada", "--task", "Water the tomatoes")
    with open(
        home.vault / "Projects" / "Garden" / "Garden.md", "a", encoding="utf-8"
    ) as fh:  # in Obsidian: not a member
        fh.write("- [ ] Review the plan [assignee:: [[Critic]]] [result:: [[Plan review]]]\n")

    def shown(agent: str) -> dict:
        return json.loads(cli("agent", "show", agent, "--json")[1])

    def added(agent: str, key: str) -> list[str]:
        return [g for g in shown(agent)[key] if g.startswith("Projects/")]

    assert added("research", "writes") == [f"Projects/{PROJECT}/**"]
    assert shown("research")["projects"] == [PROJECT]
    assert added("acme-launch-pm", "writes") == [f"Projects/{PROJECT}/**"]
    assert added("critic", "writes") == ["Projects/Garden/Garden.md", "Projects/Garden/Plan review.md"]
    assert shown("critic")["assignments"] == {"projects": [], "tasks": ["Projects/Garden/Garden.md"]}
    assert shown("planner")["assignments"] == {"projects": [], "tasks": []}
    path = home.vault / HOME_NOTE
    path.write_text(path.read_text(encoding="utf-8").replace("status: active", "status: paused"), encoding="utf-8")
    assert added("research", "writes") == [] and shown("research")["assignments"]["projects"] == []


def test_an_exclusion_wins_over_any_glob_and_says_why():
    from routine.errors import ScopeError
    from routine.vault.scope import check_write, in_scope

    globs = ["Projects/**", "!Projects/A/Report.md"]
    assert in_scope(globs, "Projects/A/Notes.md") and not in_scope(globs, "Projects/A/Report.md")
    with pytest.raises(ScopeError, match="an artifact librarian neither owns nor was assigned"):
        check_write(__import__("pathlib").Path("/tmp"), globs, "Projects/A/Report.md", "librarian")


def test_the_managers_task_breakdown_is_a_proposal_and_approving_it_adds_the_task_lines(cli, ollama):
    home = cli.home
    cli("project", "new", PROJECT)
    cli("project", "assign", PROJECT, "research", "--as", "reactive")
    ollama.script(MISTRAL, [call("propose_tasks", tasks=[{"text": "Interview five customers", "assignee": "Research",
                                                         "due": "2026-12-02"}, {"text": "Book the venue"}]),
                            "Proposed a breakdown."])
    cli("fire", "acme-launch-pm", "--task", "Break the launch down into tasks.")
    assert "Interview five customers" not in home.note(HOME_NOTE)
    proposal = next(p for p in (home.vault / "Drafts").glob("*.md") if "Interview five customers" in p.read_text())
    cli("approve", proposal.relative_to(home.vault).as_posix())
    _, out, _ = cli("project", "show", PROJECT, "--json")
    tasks = json.loads(out)["open_tasks"]
    assert [t["text"] for t in tasks["Research"]] == ["Interview five customers"]
    assert tasks["Research"][0]["due"] == "2026-12-02"
    assert [t["text"] for t in tasks["(unassigned)"]] == ["Book the venue"]
