"""Long work is never silent on a terminal: a fired block shows a live line while each step loads
and answers (tokens so far), then a line per step as it ends; every line fits the terminal. Run under
a real pseudo-terminal, against the stand-in answering at a slow board's pace."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
import textwrap

WIDTH = 60
STEP = textwrap.dedent("""\
      - agent: {agent}
        task: Step {n} of the morning.
""")
ANSWER = "Focus on shipping the pricing page today and keep the launch note short."  # ~18 tokens


def _four_steps(home) -> None:
    folder = home.config.parent / "schedules"
    for f in folder.glob("*.yaml"):
        f.unlink()
    agents = ["strategist", "planner", "research", "librarian"]
    steps = "".join(STEP.format(agent=a, n=n) for n, a in enumerate(agents, 1))
    (folder / "test.yaml").write_text('blocks:\n  four-steps:\n    cron: "0 3 * * *"\n    steps:\n'
                                      + textwrap.indent(steps, "    "))


def _on_a_terminal(home, *args: str) -> tuple[int, str]:
    """`routine ARGS` with stderr on a pseudo-terminal WIDTH columns wide: its exit code and what the
    terminal received, in order."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, WIDTH, 0, 0))
    env = {k: v for k, v in home.env.items() if k not in ("COLUMNS", "LINES")}
    proc = subprocess.Popen([sys.executable, "-m", "routine", *args], env=env, cwd=home.root,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    received = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the process closed its end
            break
        if not chunk:
            break
        received += chunk
    os.close(master)
    proc.stdout.read()
    return proc.wait(timeout=60), received.decode("utf-8", "replace")


def test_a_four_step_block_shows_each_step_as_it_ends_and_a_live_token_count(initialised, ollama):
    home = initialised
    _four_steps(home)
    ollama.tokens_per_s = 15
    ollama.reply_fn = lambda model, messages: ANSWER
    code, screen = _on_a_terminal(home, "fire", "four-steps")
    assert code == 0, screen
    pieces = [p.replace("\x1b[K", "") for p in re.split(r"[\r\n]+", screen) if p.replace("\x1b[K", "")]
    assert all(len(p) <= WIDTH for p in pieces), [p for p in pieces if len(p) > WIDTH]
    ends = [i for i, p in enumerate(pieces) if p.startswith("✓ [")]
    assert [pieces[i][:7] for i in ends] == ["✓ [1/4]", "✓ [2/4]", "✓ [3/4]", "✓ [4/4]"], pieces
    assert re.match(r"✓ \[1/4\] strategist · [\d.]+ s · [\d.]+ tokens/s · wrote ", pieces[ends[0]]), pieces[ends[0]]
    for k, end in enumerate(ends, 1):  # step k's live count, growing, is shown before its line, after step k-1's
        start = ends[k - 2] if k > 1 else -1
        counts = [int(m.group(1)) for p in pieces[start + 1:end]
                  if p.startswith(f"[{k}/4] ") and (m := re.search(r"· (\d+) tokens ·", p))]
        assert len(counts) >= 2 and counts == sorted(counts) and counts[-1] > counts[0], (k, pieces[start + 1:end])


def test_no_progress_when_quiet(initialised, ollama):
    home = initialised
    ollama.reply_fn = lambda model, messages: ANSWER
    code, screen = _on_a_terminal(home, "fire", "strategist", "--quiet")
    assert code == 0 and "tokens" not in screen and "✓" not in screen, screen


def test_the_live_line_says_what_it_waits_for_when_ollama_is_down(initialised):
    import socket

    home = initialised
    with socket.socket() as s:  # a port nothing listens on: Ollama is down
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    home.env["OLLAMA_HOST"] = f"http://127.0.0.1:{port}"
    code, screen = _on_a_terminal(home, "fire", "strategist")
    assert code != 0, screen
    assert f"waiting for Ollama at 127.0.0.1:{port}" in screen, screen
