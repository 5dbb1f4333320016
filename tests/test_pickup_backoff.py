"""A task whose pickup keeps failing is retried with backoff, not in a loop, and raises one
alert that resolves itself once the pickup succeeds (through the running daemon)."""

from __future__ import annotations

import time

from routine.vault.frontmatter import split_frontmatter
from test_daemon import daemon, journal_rows, only_schedule, wait_for
from test_projects_daemon import HOME_NOTE, PROJECT, edit, task_line

MISTRAL = "mistral:7b-instruct-q4_K_M"
TASK = "Brief on competitor pricing"


def task_runs(home) -> list[str]:
    return [status for (status,) in journal_rows(
        home, "SELECT status FROM runs WHERE trigger LIKE 'task:%' AND agent = 'research' ORDER BY started_at")]


def alerts(home) -> list[str]:
    folder = home.vault / "Alerts"
    return sorted(f"{p.name}\n{p.read_text(encoding='utf-8')}" for p in folder.glob("*.md")) if folder.is_dir() else []


def status_is(alert: str, status: str) -> bool:
    """The alert's `status:` property, read as routine reads it. Its body says "Set `status: resolved`
    to close it yourself", so a plain substring test would find "resolved" in an open alert."""
    return split_frontmatter(alert.split("\n", 1)[1])[0].get("status") == status


def test_a_failing_pickup_backs_off_raises_one_alert_and_resolves_it(initialised, ollama):
    home = initialised
    only_schedule(home, "# nothing scheduled\n")
    home.run("project", "new", PROJECT, "--goal", "Launch", check=True)
    home.run("project", "assign", PROJECT, "research", "--as", "reactive", check=True)
    edit(home, HOME_NOTE, "digest: 0 9 * * *", "digest: 0 9 * * *\n  react: 'off'")
    failing = {"on": True}
    ollama.reply_fn = lambda model, messages: {"error": (400, "the model refuses")} if failing["on"] else None
    # The first retry after 1 s (then 2, 4 …) instead of 30 s.
    home.config.write_text(home.config.read_text() + "projects: {pickup_backoff: 1s}\n")
    with daemon(home):
        edit(home, HOME_NOTE, "## Tasks\n", f"## Tasks\n\n- [ ] {TASK} [assignee:: [[Research]]]\n")
        wait_for(lambda: len(task_runs(home)) >= 2, 60, "a failed pickup and its first retry")
        began = time.monotonic()
        wait_for(lambda: len(task_runs(home)) >= 3, 60, "the second retry")
        assert time.monotonic() - began >= 1.5  # the backoff grew: 2 s before the second retry
        runs = task_runs(home)
        assert len(runs) <= 5 and set(runs) <= {"failed", "running"}, runs  # not ~9 a second
        opened = [a for a in alerts(home) if status_is(a, "open")]
        assert len(opened) == 1 and f"task not done - {TASK}.md" in opened[0], alerts(home)
        assert "the model refuses" in opened[0] and "count: " in opened[0]

        failing["on"] = False
        wait_for(lambda: "- [x]" in task_line(home, TASK), 60, "the pickup that succeeds")
        # The step's own failure alert may resolve first: wait for the task's alert itself.
        task_alert_resolved = lambda: any(f"task not done - {TASK}" in a and status_is(a, "resolved")  # noqa: E731
                                          for a in alerts(home))
        wait_for(task_alert_resolved, 30, "the task's alert resolved")
        assert not [a for a in alerts(home) if status_is(a, "open")], alerts(home)


def test_a_task_and_the_managers_reaction_held_by_a_pause_are_listed_and_run_when_it_ends(initialised, ollama):
    """Issue 50 (B2): the pickup and the project manager's reaction to the home note wait, `routine
    status` lists both, and both run once `routine resume` ends the pause."""
    from test_daemon import all_handled

    home = initialised
    only_schedule(home, "# nothing scheduled\n")
    home.run("project", "new", PROJECT, "--goal", "Launch", check=True)
    home.run("project", "assign", PROJECT, "research", "--as", "reactive", check=True)
    with daemon(home):
        home.run("pause", check=True)
        edit(home, HOME_NOTE, "## Tasks\n", f"## Tasks\n\n- [ ] {TASK} [assignee:: [[Research]]]\n")
        wait_for(lambda: all_handled(home), 60, "the change seen and decided")
        assert task_runs(home) == [] and "- [ ]" in task_line(home, TASK)  # held: neither the pickup nor the manager
        assert journal_rows(home, "SELECT COUNT(*) FROM runs WHERE agent != 'research'") == [(0,)]
        said = home.run("status").stdout
        assert f"paused: task pickup in Projects/{PROJECT} waits to run when the pause ends" in said, said
        assert f"'s reaction(s) to {HOME_NOTE} wait to run when the pause ends (`routine resume` ends it)" in said, said
        home.run("resume", check=True)  # ends the pause: the daemon hears it at once (no polling)
        wait_for(lambda: "- [x]" in task_line(home, TASK), 60, "the pickup after the pause")
        reacted = wait_for(lambda: journal_rows(home, "SELECT agent, status FROM runs WHERE agent != 'research' "
                                                      "AND trigger = ?", f"trigger:{HOME_NOTE}"),
                           60, "the manager's reaction after the pause")
        assert [status for _, status in reacted] == ["ok"] and reacted[0][0].endswith("-pm"), reacted
        assert "paused: " not in home.run("status").stdout
