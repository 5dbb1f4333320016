"""The control socket protocol, client side: how `routine fire` and `routine status` reach a
running daemon. One JSON object per line; the daemon streams events and ends with
``{"done": true, ...}``. Kept import-light: the CLI loads this for every fire and status.
"""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, NoReturn

from routine import paths
from routine.errors import DaemonError, RoutineError
from routine.host.daemonlock import holder
from routine.jsonvalue import JSONValue, Parsed
from routine.memory.retrieve import Hit

SOCKET_NAME = "control.sock"


def socket_path() -> Path:
    """Where this process's daemon listens (and the CLI looks first)."""
    return paths.runtime_dir() / SOCKET_NAME


def socket_paths() -> list[Path]:
    """Where a daemon may listen: ours, then the system unit's (routine@USER.service)."""
    if os.environ.get("ROUTINE_RUNTIME_DIR"):
        return [socket_path()]
    return list(dict.fromkeys([socket_path(), paths.system_runtime_dir() / SOCKET_NAME]))




def default_wait() -> float:
    """How long a client waits for a daemon that runs but cannot answer yet (busy, starting)."""
    return float(os.environ.get("ROUTINE_CONTROL_WAIT") or 60)


def _try_connect(timeout: float) -> socket.socket | None:
    for path in socket_paths():
        if not path.exists():
            continue
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        try:
            sock.connect(str(path))
        except OSError:
            sock.close()
            continue  # a stale socket from a daemon that died, or a full backlog
        sock.settimeout(None)
        return sock
    return None


def daemon_pid() -> str | None:
    """The pid of the daemon holding this state dir's lock, or None when none runs."""
    return holder(paths.state_dir())


def connect(timeout: float | None = 2.0, wait: float | None = None) -> socket.socket | None:
    """A connection to the running daemon, or None when no daemon runs.

    A daemon that holds the lock but does not answer (starting up, or its backlog full) is
    waited for up to ``wait`` seconds, then DaemonError: the caller must never run the job
    itself beside a running daemon (two model managers would break residency).
    """
    wait = default_wait() if wait is None else wait
    deadline = time.monotonic() + wait
    pause = 0.05
    while True:
        sock = _try_connect(timeout or 2.0)
        if sock is not None:
            return sock
        pid = daemon_pid()
        if pid is None:
            return None
        if time.monotonic() >= deadline:
            _unreachable(pid, wait)
        time.sleep(pause)
        pause = min(pause * 2, 1.0)


def _unreachable(pid: str, wait: float) -> NoReturn:
    raise DaemonError(f"The routine daemon (pid {pid}) runs but did not answer on its control socket "
                      f"within {wait:.0f} s.", "try again in a moment; if it stays so, see `journalctl -u routine` "
                      "and restart the daemon.")


def request(sock: socket.socket, message: Mapping[str, JSONValue]) -> Iterator[Parsed]:
    try:
        sock.sendall((json.dumps(message) + "\n").encode())
    except (BrokenPipeError, ConnectionResetError):
        pass  # a busy daemon answered and closed before our request: its answer is still to read
    with sock.makefile("r", encoding="utf-8") as stream:
        for line in stream:
            if line.strip():
                event = json.loads(line)
                yield event
                if event.get("done"):
                    return


def call(message: Mapping[str, JSONValue], on_event: Callable[[Parsed], None] | None = None,
         wait: float | None = None) -> Parsed | None:
    """Send one request; returns the final message, or None when no daemon runs. A daemon
    with every connection in use answers "busy": the request is sent again until ``wait``."""
    wait = default_wait() if wait is None else wait
    deadline = time.monotonic() + wait
    pause = 0.1
    while True:
        sock = connect(wait=max(0.0, deadline - time.monotonic()))
        if sock is None:
            return None
        event = {"busy": True}  # what a connection closed before any answer counts as
        with sock:
            try:
                for event in request(sock, message):
                    if event.get("done"):
                        break
                    if on_event:
                        on_event(event)
                else:
                    if event.get("busy"):  # closed before it answered: let go as busy
                        event = {"busy": True}
                    else:
                        return {"done": True, "error": "the daemon closed the connection"}
            except (ConnectionResetError, BrokenPipeError):
                if not event.get("busy"):  # it had begun answering: the job may have run
                    return {"done": True, "error": "the daemon closed the connection"}
        if not event.get("busy"):
            return event
        if time.monotonic() >= deadline:
            _unreachable(daemon_pid() or "?", wait)
        time.sleep(pause)
        pause = min(pause * 2, 2.0)


def nudge(op: str) -> None:
    """Tell a running daemon that something it looks at changed (a trial queued): one try, no
    waiting; a daemon that cannot answer now finds it at its next look anyway."""
    try:
        call({"op": op}, wait=0)
    except (RoutineError, OSError):
        pass


def result_of(final: Parsed) -> Any:
    """The result of a finished request, or its error raised as the CLI would raise it locally."""
    if final.get("error") and "result" not in final:
        error = DaemonError(final["error"], final.get("fix"))
        error.exit_code = final.get("exit", error.exit_code)
        raise error
    return final["result"]


class DaemonMemory:
    """The daemon's search index, reached through the socket (the daemon is its one writer).

    Has the ``search`` signature of ``routine.memory.VaultIndex``, so a dry run can gather a
    step's search context while the daemon runs.
    """

    def search(self, query: str, k: int = 6, reads: Iterable[str] | None = None, exclude: Iterable[str] = (),
               refresh: bool = True, progress: Callable[[str, int, int], None] | None = None) -> list[Hit]:
        final = call({"op": "search", "query": query, "k": k, "reads": None if reads is None else list(reads),
                      "exclude": sorted(exclude)})
        if final is None:
            raise DaemonError("The daemon stopped while a search was asked of it.", "run the command again.")
        return [Hit.from_dict(d) for d in result_of(final)]

    def close(self) -> None:
        pass


def daemon_running() -> bool:
    sock = connect()
    if sock is None:
        return False
    sock.close()
    return True
