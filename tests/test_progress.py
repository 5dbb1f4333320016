"""`routine fire` on a terminal says what it waits on: queued, loading MODEL, generating, writing,
both on its own and through the running daemon."""

from __future__ import annotations

import os
import subprocess
import sys

from test_daemon import MINUTELY, daemon, only_schedule
from waits import scaled


def fire_on_a_terminal(home, *args: str) -> tuple[int, str]:
    """Run `routine fire ARGS` with a pseudo-terminal as stdout and stderr, as a person would."""
    master, slave = os.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "routine", "fire", *args], env=home.env, cwd=home.root,
                            stdin=subprocess.DEVNULL, stdout=slave, stderr=slave)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return proc.wait(timeout=scaled(120)), b"".join(chunks).decode("utf-8", "replace")


def _in_order(text: str, *parts: str) -> bool:
    at = 0
    for part in parts:
        at = text.find(part, at)
        if at < 0:
            return False
    return True


def test_fire_on_a_terminal_shows_loading_generating_writing(initialised):
    code, out = fire_on_a_terminal(initialised, "strategist")
    assert code == 0, out
    assert _in_order(out, "loading mistral:7b-instruct-q4_K_M …", "generating …", "writing …", "Wrote "), out


def test_fire_through_the_daemon_shows_the_phases_too(initialised):
    home = initialised
    only_schedule(home, MINUTELY.replace('"* * * * *"', '"0 3 * * *"'))
    with daemon(home):
        code, out = fire_on_a_terminal(home, "strategist")
        assert code == 0, out
        assert _in_order(out, "generating …", "writing …", "Wrote "), out
        assert "loading mistral:7b-instruct-q4_K_M …" in out or "preload" in out, out
