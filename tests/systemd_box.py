"""systemd booted for real in a container of its own (tests/systemd_box.sh: an overlay of / written
to a tmpfs, fresh /tmp, /var/tmp and /run, a network namespace with loopback only), for tests
that install routine's unit and drive it with systemctl. ``Box.boot`` skips the test, with the
reason, where this machine cannot boot one."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from waits import scaled, wait_until

REPO = Path(__file__).resolve().parent.parent
SCRIPT = Path(__file__).resolve().parent / "systemd_box.sh"
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def why_not() -> str | None:
    """Why this machine cannot boot systemd in a container, or None."""
    if os.geteuid() != 0:
        return "booting systemd in a container needs root"
    for tool, package in (("systemd-nspawn", "systemd-container"), ("unshare", "util-linux"),
                          ("nsenter", "util-linux")):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (apt package {package})"
    if not Path("/lib/systemd/systemd").exists():
        return "systemd is not installed (apt package systemd)"
    return None


class Box:
    def __init__(self, base: Path):
        self.base = base
        self.base.mkdir(parents=True, exist_ok=True)
        self.log = base.parent / "box-console.log"
        self.proc: subprocess.Popen | None = None
        self.pid1 = 0

    def boot(self, binds: list[Path]) -> None:
        reason = why_not()
        if reason:
            pytest.skip(reason)
        options = [f"--bind-ro={p}" for p in dict.fromkeys(binds)]
        with open(self.log, "wb") as console:
            self.proc = subprocess.Popen(["unshare", "--mount", "--propagation", "private", str(SCRIPT),
                                          str(self.base), *options], stdin=subprocess.DEVNULL, stdout=console,
                                         stderr=subprocess.STDOUT)
        try:  # the container's PID 1, once it is systemd (or the box ended: 0)
            self.pid1 = wait_until(lambda: self._systemd_child() if self.proc.poll() is None else -1, 60,
                                   "systemd to start in the container", interval=0.1)
        except AssertionError:
            self.pid1 = -1
        if self.pid1 < 0:
            self.close()
            pytest.skip(f"systemd did not boot in a container here: {self._console_tail()}")
        try:  # `--wait` returns once the boot is over; degraded: a unit of the machine's own failed
            wait_until(lambda: self.proc.poll() is not None or self._booted(), 180, "systemd to finish booting")
        except AssertionError:
            pass
        if self.proc.poll() is not None or not self._booted():
            self.close()
            pytest.skip(f"systemd did not finish booting in a container here: {self._console_tail()}")

    def _systemd_child(self) -> int:
        """The box process's first child when it is systemd, else 0."""
        children = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children")
        try:
            first = children.read_text().split()
        except OSError:
            return 0
        return int(first[0]) if first and self._is_systemd(int(first[0])) else 0

    def _booted(self) -> bool:
        state = self.run("systemctl", "is-system-running", "--wait", check=False, timeout=120).stdout.strip()
        return state in ("running", "degraded")

    @staticmethod
    def _is_systemd(pid: int) -> bool:
        try:
            return Path(f"/proc/{pid}/comm").read_text().strip() == "systemd"
        except OSError:
            return False

    def _console_tail(self) -> str:
        try:
            return " / ".join(self.log.read_text(errors="replace").strip().splitlines()[-5:])
        except OSError:
            return "no output"

    def command(self, *args: str, user: str | None = None, env: dict[str, str] | None = None) -> list[str]:
        """``args`` as run inside the container (as ``user``, with a clean environment and ``env``)."""
        home = f"/home/{user}" if user else "/root"
        base = {"PATH": PATH, "LANG": "C.UTF-8", "HOME": home, "PYTHONDONTWRITEBYTECODE": "1", **(env or {})}
        as_user = ["runuser", "-u", user, "--"] if user else []
        return ["nsenter", "-t", str(self.pid1), "-a", *as_user, "env", "-i",
                *[f"{k}={v}" for k, v in base.items()], *args]

    def run(self, *args: str, user: str | None = None, env: dict[str, str] | None = None, check: bool = True,
            timeout: float = 60, input: str | None = None) -> subprocess.CompletedProcess:
        proc = subprocess.run(self.command(*args, user=user, env=env), capture_output=True, text=True,
                              timeout=scaled(timeout), input=input)
        if check and proc.returncode != 0:
            raise AssertionError(f"{' '.join(args)} exited {proc.returncode} in the box\n{proc.stdout}\n{proc.stderr}")
        return proc

    def sh(self, script: str, **kwargs: object) -> subprocess.CompletedProcess:
        return self.run("sh", "-c", script, **kwargs)  # type: ignore[arg-type]

    def spawn(self, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen:
        return subprocess.Popen(self.command(*args, env=env), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True)

    def show(self, unit: str, prop: str) -> str:
        return self.run("systemctl", "show", "-p", prop, "--value", unit).stdout.strip()

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()  # nspawn powers the container off
            try:
                self.proc.wait(scaled(30))
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def python_paths() -> list[Path]:
    """What the container needs of this Python: the repository, the venv and the interpreter's prefix."""
    return [REPO, Path(sys.prefix), Path(sys.base_prefix)]
