"""Edge-frugal: commands that call no model import no heavy library."""

from __future__ import annotations

import subprocess
import sys

import pytest

from waits import scaled

HEAVY = ("litellm", "chromadb", "torch", "sentence_transformers")


def imported_modules(args, env) -> set[str]:
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "routine", *args], env=env,
                          capture_output=True, text=True, timeout=scaled(60))
    names = set()
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip().split(".")[0])
    return names


@pytest.mark.parametrize("args", [["--help"], ["runs", "list"], ["fire", "--help"], ["schedule", "--help"],
                                  ["index", "--help"], ["search", "--help"], ["schedule", "list"],
                                  ["graph", "show", "workspace"], ["chats", "list"], ["chat", "--help"],
                                  ["ask", "--help"], ["chat", "new", "strategist", "Light"], ["project", "list"],
                                  ["project", "show", "Acme"], ["models", "scores"], ["models", "tokens"]])
def test_listing_commands_import_nothing_heavy(home, args):
    if args in (["runs", "list"], ["schedule", "list"], ["graph", "show", "workspace"], ["chats", "list"],
                ["chat", "new", "strategist", "Light"], ["project", "list"], ["project", "show", "Acme"],
                ["models", "scores"], ["models", "tokens"]):
        home.run("init", str(home.vault), check=True)
        home.run("project", "new", "Acme", check=True)
    names = imported_modules(args, home.env)
    assert "routine" in names  # the measurement works
    assert not names & set(HEAVY), names & set(HEAVY)


def test_help_lists_every_command_and_exit_codes(home):
    out = home.run("--help", check=True).stdout
    for command in ("init", "doctor", "fire", "runs", "schedule", "index", "search"):
        assert command in out
    assert "Exit codes" in out


def test_no_command_prints_help_and_exits_2(home):
    proc = home.run()
    assert proc.returncode == 2 and "usage" in proc.stdout.lower()


def test_help_groups_commands_by_what_a_person_wants_to_do(home):
    out = home.run("--help", check=True).stdout
    groups = ["Every day:", "Answer and approve:", "Agents and projects:", "Models:", "Set up and fix:"]
    assert all(g in out for g in groups), out
    assert [out.index(g) for g in groups] == sorted(out.index(g) for g in groups)
    every_day = out.split("Every day:")[1].split("\n\n")[0]
    assert "status" in every_day and "ask" in every_day and "doctor" not in every_day
    assert "doctor" in out.split("Set up and fix:")[1].split("\n\n")[0]
    for shown in ("Agents/<Name>/Memory.md", "agent try", "advice", "after:"):
        assert shown in out, shown
