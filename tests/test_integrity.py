"""Words and state that must not be lost: leftovers of a killed write are cleaned up, and a
person's editor saving while routine writes the same note loses nothing."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap

from test_daemon import daemon, only_schedule


def killed_mid_write(home, rel: str) -> None:
    """A routine process killed (-9) after its temp file was written, before the rename."""
    code = textwrap.dedent(f"""\
        import os, signal
        from pathlib import Path
        from routine.vault.atomic import _write_temp
        _write_temp(Path({str(home.vault / rel)!r}), b"half of a new version")
        os.kill(os.getpid(), signal.SIGKILL)
        """)
    proc = subprocess.run([sys.executable, "-c", code], env=home.env)
    assert proc.returncode == -signal.SIGKILL


def leftovers(home):
    return sorted(p.name for p in home.vault.rglob("*") if ".routine-tmp-" in p.name)


def test_temp_files_left_by_a_killed_write_are_removed_when_the_daemon_starts(initialised):
    home = initialised
    only_schedule(home, "triggers: []\n")
    (home.vault / "Daily").mkdir(exist_ok=True)
    (home.vault / "Daily" / "Mine.md").write_text("My words.\n")
    for _ in range(3):
        killed_mid_write(home, "Daily/Mine.md")
    killed_mid_write(home, "Plans/OKRs.md")
    assert len(leftovers(home)) == 4
    with daemon(home):
        assert leftovers(home) == []
    assert (home.vault / "Daily" / "Mine.md").read_text() == "My words.\n"
    assert "removed 4 temp file(s)" in (home.root / "daemon.log").read_text()
