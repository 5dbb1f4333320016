"""A task outside every project (`Inbox/Todo.md`) assigned to a custom agent: `agent assign --task`
names the note in the agent's `tasks:`, `agent show` lists it under tasks, and the running daemon
picks it up as a reactive agent does; an agent that never picks up tasks is refused in one
sentence. Through the real CLI and daemon, against the stand-in Ollama."""

from __future__ import annotations

import json

from agent_cli import cli
from routine.vault.frontmatter import split_frontmatter
from test_custom_agents import artifacts, put  # noqa: F401 - the fixture
from test_daemon import daemon, journal_rows, only_schedule, wait_for

TODO = "Inbox/Todo.md"
ITEM = "Price the Acme renewal"


def test_a_custom_agent_assigned_a_task_in_the_inbox_lists_it_and_picks_it_up(artifacts, ollama):  # noqa: F811
    home = artifacts
    only_schedule(home, "# nothing scheduled\n")
    put(home, TODO, "# Todo\n- [ ] Book the dentist\n")
    cli(home, "agent", "new", "Pricer", "--from", "Artifacts/Pricing.md")
    said = cli(home, "agent", "assign", "Pricer", "--task", TODO, "--item", ITEM).stdout
    assert f"Assigned pricer a task in {TODO}; it picks the task up when the daemon runs (reactive" in said
    assert f"- [ ] {ITEM} [assignee:: [[Pricer]]]" in home.note(TODO)
    props = split_frontmatter(home.note("Agents/Pricer.md"))[0]
    assert props["tasks"] == ["[[Inbox/Todo]]"]

    shown = cli(home, "agent", "show", "pricer").stdout
    assert f"tasks in: {TODO}" in shown, shown
    scopes = json.loads(cli(home, "agent", "show", "pricer", "--json").stdout)
    assert scopes["assignments"]["tasks"] == [TODO] and TODO in scopes["writes"]

    with daemon(home):
        wait_for(lambda: f"- [x] {ITEM}" in home.note(TODO), 60, "the pickup")
    assert "- [ ] Book the dentist\n" in home.note(TODO)  # the person's own task is left alone
    result = home.vault / "Inbox" / f"{ITEM}.md"
    assert result.is_file() and f"[result:: [[{ITEM}]]]" in home.note(TODO)
    rows = journal_rows(home, "SELECT agent, status FROM runs WHERE trigger = ?", f"task:{TODO}")
    assert rows == [("pricer", "ok")], rows

    cli(home, "agent", "unassign", "Pricer", "--task", TODO)
    assert "tasks" not in split_frontmatter(home.note("Agents/Pricer.md"))[0]
    assert "tasks in: none" in cli(home, "agent", "show", "pricer").stdout


def test_an_agent_that_never_picks_up_tasks_is_told_so_in_one_sentence(artifacts):  # noqa: F811
    home = artifacts
    put(home, TODO, "# Todo\n")
    cli(home, "agent", "new", "Pricer", "--from", "Artifacts/Pricing.md", "--behaviour", "scheduled")
    refused = cli(home, "agent", "assign", "Pricer", "--task", TODO, "--item", ITEM, check=False)
    assert refused.returncode == 2
    assert "pricer is scheduled (runs on its own schedule files only), so it would never pick up a task in " \
           f"{TODO}" in refused.stderr, refused.stderr
    assert "behaviour: reactive" in refused.stderr and "Traceback" not in refused.stderr
    assert home.note(TODO) == "# Todo\n"  # nothing written
