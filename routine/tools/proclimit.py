"""How many processes a sandboxed command may have: the fork-bomb limit.

For an ordinary user, ``prlimit --nproc`` inside the sandbox's user namespace does it (see
``sandbox_argv``). The kernel never applies RLIMIT_NPROC to uid 0 of the host, which is what the
sandbox's root maps to when routine runs as root (a container, a board's default login); there
the command goes into a pids cgroup of its own with ``pids.max``. Root without a usable pids
cgroup gets no command at all: a clear refusal beats an unbounded one.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from routine.tools.base import ToolError

CGROUP_ROOT = Path("/sys/fs/cgroup")
_serial = itertools.count(1)


def _v2_parent() -> Path | None:
    """Our own cgroup v2 folder, if the pids controller is delegated to its children."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        if line.startswith("0::"):
            folder = CGROUP_ROOT / line[3:].lstrip("/")
            try:
                if "pids" in (folder / "cgroup.subtree_control").read_text().split():
                    return folder
            except OSError:
                return None
    return None


def _v1_parent() -> Path | None:
    folder = CGROUP_ROOT / "pids"
    return folder if (folder / "cgroup.procs").exists() else None


def _make_group(limit: int) -> Path | None:
    for parent in (_v2_parent(), _v1_parent()):
        if parent is None:
            continue
        group = parent / f"routine-sandbox-{os.getpid()}-{next(_serial)}"
        try:
            group.mkdir()
            (group / "pids.max").write_text(str(limit))
            return group
        except OSError:
            with contextlib.suppress(OSError):
                group.rmdir()
    return None


def _remove_group(group: Path) -> None:
    """Kill whatever is left in the group (bwrap's death normally took it all), then remove it."""
    deadline = time.monotonic() + 5
    while True:
        try:
            pids = [int(p) for p in (group / "cgroup.procs").read_text().split()]
        except OSError:
            pids = []
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, 9)
        try:
            group.rmdir()
            return
        except OSError:
            if time.monotonic() > deadline:
                return
            time.sleep(0.02)  # the killed processes are being reaped


@contextlib.contextmanager
def process_cap(limit: int) -> Iterator[Callable[[], None]]:
    """Yield the function the child calls before exec (it joins the pids cgroup as root)."""
    if os.geteuid() != 0:
        yield lambda: None
        return
    group = _make_group(limit)
    if group is None:
        raise ToolError("routine runs as root here and cannot create a pids cgroup to limit a command's processes, "
                        "so run_command is refused; run routine as an ordinary user (the shipped systemd unit does).")
    procs = str(group / "cgroup.procs")

    def join() -> None:
        fd = os.open(procs, os.O_WRONLY)
        try:
            os.write(fd, b"0")
        finally:
            os.close(fd)
    try:
        yield join
    finally:
        _remove_group(group)
