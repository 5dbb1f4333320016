"""Ctrl-C on `routine fire` stops the run and records it as interrupted, whether the daemon
runs it or the command itself does: nothing is written afterwards, nothing stays `running`."""

from __future__ import annotations

import signal
import subprocess
import sys

from test_daemon import daemon, journal_rows, only_schedule, wait_for
from waits import scaled

MISTRAL = "mistral:7b-instruct-q4_K_M"
SLOW = {"content": " ".join(f"Alignment point {i}." for i in range(40)), "delay": 8}


def at_a_terminal() -> None:
    """Ctrl-C as a shell gives it to the command it runs in the foreground: SIGINT at its default.
    (A test worker may have inherited SIGINT ignored, as a background job does; a command
    started from it would then never see the Ctrl-C this test sends.)"""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def fire_then_ctrl_c(home, ollama):
    proc = subprocess.Popen([sys.executable, "-m", "routine", "fire", "strategist"], env=home.env, cwd=home.root,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=at_a_terminal)
    wait_for(lambda: ollama.last_request("/api/chat") is not None, 60, "the model call")
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=scaled(30))
    assert proc.returncode == 130 and "interrupted" in err, (out, err)


def runs(home):
    return journal_rows(home, "SELECT status, error FROM runs WHERE agent='strategist'")


def daily_notes(home):
    return [p.read_text() for p in (home.vault / "Daily").glob("*.md")] if (home.vault / "Daily").exists() else []


def test_ctrl_c_on_a_fire_without_the_daemon_records_it_interrupted(initialised, ollama):
    home = initialised
    ollama.script(MISTRAL, [SLOW])
    fire_then_ctrl_c(home, ollama)
    assert runs(home) == [("interrupted", "interrupted (Ctrl-C) before it finished")]
    assert not any("Alignment point" in text for text in daily_notes(home))


def test_ctrl_c_on_a_fire_handed_to_the_daemon_stops_the_run_there(initialised, ollama):
    home = initialised
    only_schedule(home, "triggers: []\n")
    ollama.script(MISTRAL, [SLOW])
    with daemon(home):
        fire_then_ctrl_c(home, ollama)
        status = wait_for(lambda: [r for r in runs(home) if r[0] != "running"], 20, "the run to end")
        assert status[0][0] == "interrupted" and "Ctrl-C" in status[0][1]
    assert not any("Alignment point" in text for text in daily_notes(home))
