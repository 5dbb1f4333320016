"""The README's shell examples, run: every `routine …` line of its sh/bash blocks, in order, against a
vault `routine init` made (with the notes the examples name), through the stand-in Ollama. A line
that fails, or a new line neither run nor listed in SKIPPED with its reason, fails this test."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BLOCK = re.compile(r"```(?:sh|bash)\n(.*?)```", re.S)
YAML = re.compile(r"```yaml\n(.*?)```", re.S)
SKIPPED = {  # a line's start → why it is not run here
    "routine service install": "writes a systemd unit and starts it (tests/test_service.py covers it with --print)",
    "routine runs retry ID": "ID is a placeholder for a failed block run (tests/test_retry.py)",
    "routine answer q-7f3a9c": "q-7f3a9c is a placeholder for a question an agent asked (tests/test_questions.py)",
}
SAYS = {  # what the README's text says a line does, checked where it is plain to see
    "routine fire strategist": lambda home, out: "Alignment" in next((home.vault / "Daily").glob("*.md")).read_text(),
    "routine fire planner --dry-run": lambda home, out: "Dry run: nothing sent" in out,
    "routine pause --until tomorrow": lambda home, out: "paused: everything until" in out,
    "routine resume": lambda home, out: "resumed everything" in out,
    "routine agent new Pricer": lambda home, out: (home.vault / "Agents" / "Pricer.md").exists(),
    "routine graph show project Alpha": lambda home, out: "Alpha" in out,
    "routine remind --list": lambda home, out: "Call Priya" in out and "Send the deck" in out,
    "routine remind --done 1": lambda home, out: out.startswith("done: #1"),
    "routine trigger build-done": lambda home, out: "librarian ok" in out
    and "## Builds" in home.note("Inbox/Builds.md"),
}
NOTES = {  # what the examples name, as a person following them would have it
    "Artifacts/Price list.md": "# Price list\nA seat costs 40 EUR a month.\n",
    "Customers.md": "# Customers\nAcme runs 12 seats since March.\n",
    "Inbox/Todo.md": "# Todo\n- [ ] Acme renewal offer\n",
}


def readme_lines() -> list[list[str]]:
    """Each `routine` command of the README's shell blocks, as argv after `routine`; a `cp` of a
    note as ["cp", SRC, DST]."""
    out = []
    for block in BLOCK.findall((REPO / "README.md").read_text(encoding="utf-8")):
        for line in block.splitlines():
            words = shlex.split(line, comments=True)
            if words and words[0] == "sudo":
                words = words[1:]
            if words and words[0] in (".venv/bin/routine", "routine"):
                out.append(words[1:])
            elif words and words[0] == "cp":
                out.append(words)
    return out


def _in_vault(home, arg: str) -> str:
    """The README's vault (`~/Vault`, `$HOME/Vault`) is the test's."""
    for prefix in ("~/Vault", "$HOME/Vault"):
        if arg == prefix or arg.startswith(prefix + "/"):
            return str(home.vault) + arg[len(prefix):]
    return arg


def test_every_routine_line_of_the_readme_runs(home, ollama):
    lines = readme_lines()
    assert len(lines) > 20, lines  # the blocks were found
    ran, skipped = [], []
    for argv in lines:
        said = " ".join(argv) if argv[0] == "cp" else "routine " + " ".join(argv)
        if any(said.startswith(start) for start in SKIPPED):
            skipped.append(said)
            continue
        argv = [_in_vault(home, a) for a in argv]
        if argv[0] == "cp":  # a note copied, as the text before it says
            shutil.copy(argv[1], argv[2])
            continue
        if argv[0] == "trigger":  # the event's trigger, as the README's schedule entry declares it
            entry = next(b for b in YAML.findall((REPO / "README.md").read_text(encoding="utf-8"))
                         if f"event: {argv[1]}" in b)
            (home.config.parent / "schedules" / "events.yaml").write_text(entry, encoding="utf-8")
        if argv[0] == "graph" and argv[1:3] == ["show", "project"]:
            home.run("project", "new", argv[3], check=True)  # the project the example shows
        done = home.run(*argv)
        assert done.returncode == 0, f"{said}\n{done.stdout}\n{done.stderr}"
        assert "Traceback" not in done.stderr, said
        check = next((c for start, c in SAYS.items() if said.startswith(start)), None)
        assert check is None or check(home, done.stdout), f"{said} did not do what the README says:\n{done.stdout}"
        ran.append(said)
        if argv[0] == "init":
            for rel, text in NOTES.items():
                (home.vault / rel).parent.mkdir(parents=True, exist_ok=True)
                (home.vault / rel).write_text(text, encoding="utf-8")
    assert len(ran) >= 20 and skipped, (ran, skipped)
