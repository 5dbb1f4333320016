"""Hostile files among a step's inputs: `routine fire librarian` reads `Inbox/*.md`, and a name
that is not UTF-8 or a symlink loop there is skipped (and logged), never a traceback."""

from __future__ import annotations

import json
import os

BAD_NAME = os.fsdecode(b"caf\xe9.md")  # Latin-1 bytes from an old archive or a Samba share


def test_fire_skips_an_undecodable_name_and_a_symlink_loop_among_its_inputs(initialised, ollama):
    home = initialised
    inbox = home.vault / "Inbox"
    inbox.mkdir(exist_ok=True)
    (inbox / "Idea.md").write_text("A plain idea worth filing.\n")
    (inbox / BAD_NAME).write_text("Les notes d'un vieux disque.\n")
    (inbox / "loop-a.md").symlink_to("loop-b.md")
    (inbox / "loop-b.md").symlink_to("loop-a.md")
    proc = home.run("fire", "librarian", process=True, env_extra={"ROUTINE_LOG_LEVEL": "WARNING"})
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    prompt = "\n".join(m["content"] for m in ollama.last_request("/api/chat")["messages"])
    assert "A plain idea worth filing." in prompt and "vieux disque" not in prompt
    assert "caf\\xe9.md" in proc.stderr and "not valid UTF-8" in proc.stderr, proc.stderr
    runs = json.loads(home.run("runs", "list", "--json", check=True).stdout)
    assert runs[0]["status"] == "ok" and runs[0]["agent"] == "librarian"
