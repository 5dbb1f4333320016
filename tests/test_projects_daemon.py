"""A project run by the daemon, from a fresh `routine init`: a person and two agents with
different behaviours, one task assigned by CLI and one by editing the task line; the reactive
agent's result lands in the case file linked from its task, the semi-autonomous one's as a
proposal, the manager's digest (scheduled by the project's cadence) names everyone's work and
the blocker the person wrote; the cadence hot-reloads; a restart loses nothing."""

from __future__ import annotations

import json

from test_daemon import all_handled, daemon, journal_rows, only_schedule, status, wait_for

PROJECT = "Acme Launch"
HOME_NOTE = f"Projects/{PROJECT}/{PROJECT}.md"


def task_line(home, text: str) -> str:
    return next((line for line in home.note(HOME_NOTE).splitlines() if text in line), "")


def edit(home, rel: str, old: str, new: str) -> None:
    path = home.vault / rel
    text = path.read_text(encoding="utf-8")
    assert old in text, text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def digest_prompts(ollama) -> list[str]:
    found = []
    for request in list(ollama.requests):
        if request.get("_path") != "/api/chat":
            continue
        text = json.dumps(request.get("messages", []), ensure_ascii=False)
        if "digest of the project" in text:
            found.append(text)
    return found


def test_a_project_team_works_through_the_daemon_and_survives_a_restart(initialised, ollama, driven_clock):
    home = initialised
    only_schedule(home, "# only the project's cadence in this test\n")
    home.run("project", "new", PROJECT, "--goal", "Launch on 1 December", check=True)
    home.run("project", "assign", PROJECT, "Ada", "--role", "client lead", check=True)
    home.run("project", "assign", PROJECT, "research", "--as", "reactive", check=True)
    home.run("project", "assign", PROJECT, "scribe", "--as", "semi-autonomous", "--task", "Draft the FAQ", check=True)
    edit(home, HOME_NOTE, "digest: 0 9 * * *", "digest: '* * * * *'\n  react: 'off'")
    edit(home, HOME_NOTE, "## Blockers\n", "## Blockers\n\n- Waiting on legal to approve the prices\n")
    edit(home, HOME_NOTE, "## Tasks\n", "## Tasks\n\n- [ ] Call the printer [assignee:: [[Ada]]] 📅 2026-11-30\n")

    with daemon(home):
        # The person assigns a task in Obsidian, by writing the task line.
        edit(home, HOME_NOTE, "## Tasks\n", "## Tasks\n\n- [ ] Brief on competitor pricing [assignee:: [[Research]]]\n")

        # Reactive: the result is a note in the case file, linked from the task, which is done.
        result = home.vault / "Projects" / PROJECT / "Brief on competitor pricing.md"
        before = driven_clock.now().astimezone()  # the daemon's day, in its (the machine's) time zone
        wait_for(lambda: "- [x]" in task_line(home, "Brief on competitor pricing"), 60, "the reactive agent's result")
        text = result.read_text(encoding="utf-8")  # an intellectual artifact of the agent, ready for QA
        assert "type: intellectual" in text and "owner: '[[Research]]'" in text and "qa: needed" in text, text
        line = task_line(home, "Brief on competitor pricing")
        # Done on the daemon's day (its clock runs ahead of the system's: near midnight the two differ).
        days = {f"✅ {when:%Y-%m-%d}" for when in (before, driven_clock.now().astimezone())}
        assert "[result:: [[Brief on competitor pricing]]]" in line and any(day in line for day in days), line

        # Semi-autonomous: the output is a proposal, linked from the task; nothing lands in the case file.
        wait_for(
            lambda: "[proposal:: [[Drafts/" in task_line(home, "Draft the FAQ"), 60, "the semi-autonomous proposal"
        )
        proposal = task_line(home, "Draft the FAQ").split("[proposal:: [[", 1)[1].split("]]", 1)[0] + ".md"
        assert f"target: '[[Projects/{PROJECT}/Draft the FAQ]]'" in home.note(proposal)
        assert not (home.vault / "Projects" / PROJECT / "Draft the FAQ.md").exists()
        # Approving it lands the result in the case file (the member may write there only through approval).
        approved = home.run("approve", proposal, check=True)
        assert "Created" in approved.stdout, approved.stdout
        assert (home.vault / "Projects" / PROJECT / "Draft the FAQ.md").exists()

        # The manager's digest, fired by the cadence in the home note, was given everyone's work and the blocker.
        digests = home.vault / "Projects" / PROJECT / "Digests"
        driven_clock.before_next_minute()  # the cadence's next minute, in seconds
        wait_for(lambda: digests.is_dir() and any(digests.glob("*.md")), 60, "the project digest")
        assert "Daily digest" in next(digests.glob("*.md")).read_text(encoding="utf-8")
        prompt = digest_prompts(ollama)[0]
        for fact in ("Ada (person, client lead): Call the printer", "Research (reactive)", "Scribe (semi-autonomous)",
                     "Draft the FAQ", "Waiting on legal to approve the prices", "Launch on 1 December"):
            assert fact in prompt, fact

        # The dashboard has a projects section.
        wait_for(
            lambda: f"[[Projects/{PROJECT}/{PROJECT}]]" in home.note("Routine/Dashboard.md"), 20, "the dashboard row"
        )

        # The cadence hot-reloads from the home note.
        edit(home, HOME_NOTE, "review: 0 16 * * 5", "review: 30 7 * * 1")
        wait_for(lambda: any(f["block"] == "acme-launch-review" and "T07:30:00" in f["at"]
                             for f in status(home)["next_fires"]), 20, "the new review time")

    # While the daemon is down, the person assigns another task: it is picked up at start.
    edit(home, HOME_NOTE, "## Tasks\n", "## Tasks\n\n- [ ] List three launch risks [assignee:: [[Research]]]\n")
    with daemon(home, "daemon2.log"):
        wait_for(lambda: "- [x]" in task_line(home, "List three launch risks"), 60, "the task assigned while down")

    runs = journal_rows(home, "SELECT agent, trigger, status, project, details FROM runs WHERE kind = 'step'")
    by_task = {}
    for agent, trigger, state, project, details in runs:
        assert project == PROJECT, (agent, trigger, project)
        task = json.loads(details or "{}").get("task")
        if task:
            by_task.setdefault(task, []).append((agent, state))
    assert by_task["Brief on competitor pricing"] == [("research", "ok")]
    assert by_task["Draft the FAQ"] == [("scribe", "proposal")]
    assert by_task["List three launch risks"] == [("research", "ok")]
    assert all(n == 1 for (n,) in journal_rows(
        home, "SELECT COUNT(*) FROM runs WHERE block = 'acme-launch-digest' AND kind = 'block' GROUP BY slot"))


def test_an_edit_to_an_information_product_puts_it_back_to_needing_qa_and_a_task_asks_for_qa(initialised, ollama):
    from routine.vault.frontmatter import join_frontmatter
    from routine.vault.sections import content_sha

    home = initialised
    only_schedule(home, "# nothing scheduled\n")
    home.run("project", "new", PROJECT, check=True)
    body = "# Report\n\nFinal numbers.\n"
    rel = f"Projects/{PROJECT}/Report.md"
    (home.vault / rel).write_text(join_frontmatter({
        "type": "artifact", "artifact_type": "information-product", "owner": "[[Research]]", "qa": "passed",
        "qa_sha": content_sha(body)}, body), encoding="utf-8")
    with daemon(home):
        edit(home, rel, "Final numbers.", "Final numbers, revised.")
        wait_for(lambda: "qa: needed" in home.note(rel), 20, "qa: needed after the edit")
        assert "artifact_type: intellectual" in home.note(rel)
        # The edit's handling ends (its look for pending tasks) before the person adds the task: a task
        # added meanwhile is picked up by that look, and the pickup's write of the home note, landing
        # before the watcher settles the person's edit, is taken for routine's own (issue 39's note).
        wait_for(lambda: all_handled(home), 30, "the edit handled")

        # A task assigned to the Critic asks for QA: it runs, and the verdict lands in the note and the task.
        ollama.script("qwen2.5:7b-instruct-q4_K_M", ["VERDICT: PASS\nFINDINGS:\n- The revision is consistent"])
        edit(home, HOME_NOTE, "## Tasks\n", "## Tasks\n\n- [ ] QA [[Report]] [assignee:: [[Critic]]]\n")
        wait_for(lambda: "[qa:: passed]" in task_line(home, "QA [[Report]]"), 60, "the QA task")
        assert "- [x]" in task_line(home, "QA [[Report]]")
        assert "artifact_type: information-product" in home.note(rel) and "The revision is consistent" in home.note(rel)

        # The home note changed (the task list): the manager reacted, in the day's digest note.
        digests = home.vault / "Projects" / PROJECT / "Digests"
        wait_for(
            lambda: digests.is_dir() and any("Changes" in p.read_text(encoding="utf-8") for p in digests.glob("*.md")),
            60,
            "the manager's reaction",
        )
        assert journal_rows(home, "SELECT project FROM runs WHERE agent = 'acme-launch-pm'") == [(PROJECT,)]
