"""Hostile vault content: names that are not UTF-8, symlink loops, pipes, devices, binary and
UTF-16 agent notes, links out of the vault. None of it may crash, hang or blind the daemon:
after each case a fresh note in the Inbox still gets its trigger run."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time

from test_daemon import daemon, only_schedule, status, wait_for
from test_tools import MISTRAL, call, tester, transcript  # noqa: F401 (fixture)
from test_triggers import trigger_runs
from waits import scaled

INBOX = textwrap.dedent("""\
    triggers:
      - "on": created
        path: "Inbox/*.md"
        agent: librarian
        task: "File [[{{ path }}]]."
        debounce: 1s
        write: {note: "Inbox/Filed.md", section: "Filed"}
    """)

BAD_NAME = os.fsdecode(b"caf\xe9.md")  # Latin-1 bytes from an old archive or a Samba share


def still_fires(home, name: str) -> None:
    (home.vault / "Inbox" / f"{name}.md").write_text("A fresh note for the librarian.\n")
    wait_for(lambda: [r for r in trigger_runs(home, f"Inbox/{name}.md") if r[1] == "ok"], 90,
             f"the trigger run for Inbox/{name}.md")


def hostile_agents(home, outside) -> None:
    agents = home.vault / "Agents"
    (agents / "Utf16.md").write_bytes("---\nagent: utf16\nmodel: general\n---\nHi\n".encode("utf-16"))
    (agents / "Binary.md").write_bytes(bytes(range(256)) * 4)
    (agents / "Zero.md").symlink_to("/dev/zero")
    outside.write_text("---\nagent: outsider\nrole: x\nmodel: general\nreads: ['**']\nwrites: ['**']\n"
                       "write: {note: 'Inbox/x.md'}\ntask: Leak.\n---\nI live outside the vault.\n")
    (agents / "Outsider.md").symlink_to(outside)


def test_hostile_vault_content_never_crashes_hangs_or_blinds_the_daemon(initialised, ollama, tmp_path):
    home = initialised
    only_schedule(home, INBOX)
    inbox = home.vault / "Inbox"
    with daemon(home):
        still_fires(home, "first")
        (inbox / BAD_NAME).write_text("Les notes d'un vieux disque.\n")
        still_fires(home, "after a bad name")
        (inbox / "loop-a.md").symlink_to("loop-b.md")
        (inbox / "loop-b.md").symlink_to("loop-a.md")
        still_fires(home, "after a loop")
        os.mkfifo(inbox / "pipe.md")
        still_fires(home, "after a pipe")
        hostile_agents(home, tmp_path / "outside.md")
        still_fires(home, "after hostile agents")
        assert status(home)["state"] == "running"
        # The person's commands, with all of that in the vault, through the running daemon.
        for args in (["index"], ["search", "vieux disque"], ["fire", "strategist", "--dry-run"]):
            proc = home.run(*args, timeout=60)
            assert proc.returncode == 0 and "Traceback" not in proc.stderr, (args, proc.stderr)
        doctor = home.run("doctor", timeout=60)
        assert doctor.returncode == 2 and "Traceback" not in doctor.stdout + doctor.stderr
        for name, why in (("Utf16", "not UTF-8 text"), ("Binary", "not UTF-8 text"), ("Zero", "outside the vault"),
                          ("Outsider", "outside the vault")):
            assert any(name in line and why in line for line in doctor.stdout.splitlines()), (name, doctor.stdout)
        assert not list((home.vault / "Inbox").glob("x.md"))
    # A restart with all of it still there: the daemon starts and serves.
    with daemon(home, "second.log"):
        still_fires(home, "after a restart")
    log = (home.root / "daemon.log").read_text(errors="replace") + (home.root / "second.log").read_text(
        errors="replace"
    )
    assert "Traceback" not in log, log[-3000:]
    assert "caf\\xe9.md: its name is not valid UTF-8" in log


def test_tools_refuse_pipes_devices_and_loops_and_list_around_them(tester, ollama):  # noqa: F811
    home = tester(iterations=12)
    project = home.vault / "Projects" / "Battery"
    os.mkfifo(project / "pipe.md")
    (project / "zero.md").symlink_to("/dev/zero")
    (project / "loop-a.md").symlink_to("loop-b.md")
    (project / "loop-b.md").symlink_to("loop-a.md")
    (project / BAD_NAME).write_text("old bytes\n")
    ollama.script(MISTRAL, [call("list_notes", folder="Projects"),
                            call("read_note", path="Projects/Battery/pipe.md"),
                            call("read_note", path="Projects/Battery/zero.md"),
                            call("read_note", path="Projects/Battery/loop-a.md"),
                            "Listed and read what could be read."])
    proc = home.run("fire", "tester", timeout=60)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    _, calls, _ = transcript(home)
    listing = calls[0]["result"]
    assert "Projects/Battery/Status.md" in listing and "loop-a" not in listing and "pipe" not in listing
    assert "caf" not in listing
    assert "is a named pipe" in calls[1]["error"]
    assert "outside the vault" in calls[2]["error"]
    assert "symlink loop" in calls[3]["error"]


def test_a_pipe_at_the_output_note_is_refused_at_once(initialised, ollama):
    home = initialised
    daily = home.vault / "Daily"
    daily.mkdir(exist_ok=True)
    from datetime import date

    os.mkfifo(daily / f"{date.today().isoformat()}.md")
    proc = subprocess.run([sys.executable, "-m", "routine", "fire", "strategist"], env=home.env, cwd=home.root,
                          capture_output=True, text=True, timeout=scaled(60))
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert "is a named pipe, not a regular file" in proc.stderr + proc.stdout
    runs = json.loads(home.run("runs", "list", "--json", check=True).stdout)
    assert runs[0]["status"] == "failed"


def test_sigterm_during_the_first_index_build_of_a_vault_with_a_50_mb_note(initialised, ollama):
    home = initialised
    only_schedule(home, INBOX)
    home.config.write_text(home.config.read_text() + "memory: {embedding_model: 'ollama:nomic-embed-text'}\n")
    line = "The supplier called about the battery cells again; nothing new was agreed. " * 4 + "\n"
    with open(home.vault / "Inbox" / "Export.md", "w") as big:  # a 50 MB export pasted into the vault
        for i in range(50 * (1 << 20) // (len(line) * 40)):
            big.write(f"## Entry {i}\n" + line * 40)
    for i in range(300):
        (home.vault / "Inbox" / f"note {i}.md").write_text(f"# Note {i}\nCall {i} about the battery order.\n")
    with daemon(home) as proc:
        wait_for(lambda: "building it from the vault" in (home.root / "daemon.log").read_text(), 60, "the first build")
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0  # the unit's TimeoutStopSec
        took = time.monotonic() - started
    log = (home.root / "daemon.log").read_text()
    # The big note is refused by size at once (its size said as routine measures it), or the stop was quick.
    assert re.search(r"Export\.md is 5\d\.\d MB, over routine's limit", log) or took < 20, log[-2000:]
    with daemon(home, "second.log"):
        wait_for(lambda: "search index ready" in (home.root / "second.log").read_text(), 120, "the index")
        still_fires(home, "after the stop")
    second = (home.root / "second.log").read_text()
    assert "building it from the vault" not in second and "rebuilding" not in second, second[-2000:]
    print(f"stop during the first index build took {took:.1f}s")
