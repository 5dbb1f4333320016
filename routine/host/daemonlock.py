"""One daemon per state dir. The system unit, the user unit and a daemon in a terminal keep
their control sockets in different places, so they could miss each other; they all share
the state dir, and an flock on ``daemon.lock`` there settles it (released when the process
ends, however it ends)."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import IO

from routine import paths
from routine.errors import DaemonError

NAME = "daemon.lock"


def hold() -> IO[str]:
    """Take the lock for this process's lifetime (keep the returned file open)."""
    path = paths.state_dir() / NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = open(path, "a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        pid = handle.read().strip() or "?"
        handle.close()
        raise DaemonError(f"A routine daemon (pid {pid}) already runs with the state dir {path.parent}.",
                          "stop it first (`systemctl stop routine`, or the terminal it runs in), "
                          "or use `routine status`.") from None
    handle.seek(0)
    handle.truncate()
    handle.write(f"{os.getpid()}\n")
    handle.flush()
    return handle


def holder(state: Path) -> str | None:
    """The pid of the daemon holding ``state``'s lock, or None when none runs."""
    path = state / NAME
    try:
        handle = open(path, "r")
    except FileNotFoundError:
        return None
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return handle.read().strip() or "?"
        return None
