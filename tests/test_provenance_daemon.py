"""The issue's afternoon, through the daemon: a project with two people and a reactive agent, whose
models copy the case file's task lines into everything they write (the manager's digest, the
task's result). The phone gets one message per real task, the project's canvas one card per
real task, and the agent an answer names as assignee is given nothing."""

from __future__ import annotations

import json

from receiver import Receiver
from test_daemon import daemon, only_schedule, wait_for
from test_provenance import ECHO, HOME_NOTE, PROJECT, REAL_TASKS

CANVAS = f"Routine/Graphs/Project {PROJECT}.canvas"


def cards(home) -> list[str]:
    try:
        doc = json.loads((home.vault / CANVAS).read_text())
    except (OSError, ValueError):
        return []
    return [n.get("text", "") for n in doc["nodes"] if n.get("type") == "text"]


def test_the_daemon_tells_once_and_draws_once_per_real_task_when_models_copy_the_task_lines(
        initialised, ollama, driven_clock):
    home = initialised
    receiver = Receiver()
    try:
        home.config.write_text(home.config.read_text() + f"\nnotify: {{urls: [json://127.0.0.1:{receiver.port}/hook]}}\n")
        only_schedule(home, "# only the project's cadence\n")
        ollama.reply_fn = lambda model, messages: ECHO
        home.run("project", "new", PROJECT, check=True)
        for person in ("Ada", "Bruno"):
            home.run("project", "assign", PROJECT, person, check=True)
        home.run("project", "assign", PROJECT, "research", "--as", "reactive", check=True)
        pricer = (home.vault / "Agents" / "Research.md").read_text().replace("agent: research", "agent: pricer")
        (home.vault / "Agents" / "Pricer.md").write_text(pricer)
        for agent in ("Research", f"{PROJECT} PM"):  # the copies land as written, not held as unsupported claims
            path = home.vault / "Agents" / f"{agent}.md"
            path.write_text(path.read_text().replace("\nagent: ", "\ngrounding_check: 'off'\nagent: ", 1))
        note = home.vault / HOME_NOTE
        note.write_text(note.read_text().replace("digest: 0 9 * * *", "digest: '* * * * *'\n  react: 'off'"))
        with daemon(home):
            note.write_text(note.read_text().replace("## Tasks\n", "## Tasks\n\n" + "\n".join(REAL_TASKS) + "\n", 1))
            result = home.vault / "Projects" / PROJECT / "Price the pilot.md"
            wait_for(result.exists, 60, "the reactive agent's result")
            digests = home.vault / "Projects" / PROJECT / "Digests"
            driven_clock.before_next_minute()
            copied = lambda: digests.is_dir() and any("Call the printer" in p.read_text() for p in digests.glob("*.md"))  # noqa: E731
            wait_for(copied, 60, "the digest, copying the task lines")
            assert "Call the printer" in result.read_text()
            receiver.wait_for(lambda ts: len(ts) >= 3, 30, "the people's tasks")
            wait_for(lambda: sum("Call the printer" in c for c in cards(home)) >= 1, 30, "the project's canvas")
            # Everything settles: the digest and the result are seen by the watcher, the graph and the canvas.
            home.run("index", check=True)
            shown = json.loads(home.run("project", "show", PROJECT, "--json", check=True).stdout)["open_tasks"]
            agent = home.run("agent", "show", "pricer", check=True).stdout
        tasks = sorted(t for t in receiver.texts() if "Task for" in t)
        assert len(tasks) == 3 and len(set(tasks)) == 3, tasks
        assert {t["text"] for who in shown.values() for t in who} == {
            "Call the printer", "Sign the venue contract", "Book the demo room", "Send the agenda"}, shown
        for text in ("Call the printer", "Sign the venue contract", "Price the pilot", "Book the demo room"):
            assert sum(text in c for c in cards(home)) == 1, (text, cards(home))
        assert "tasks in: none" in agent, agent
    finally:
        receiver.stop()
