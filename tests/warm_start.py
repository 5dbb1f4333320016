"""Real `routine` processes started warm: forked from an interpreter that imported the ollama client once.

A test daemon is a real process (its own pid, signals, sockets, files, children); what is saved
is the import of the ollama client (httpx, pydantic). LiteLLM is not preloaded: routine imports it
only for an OpenAI-compatible deployment, and a daemon forked with it would carry its ~250 MB and
hide a daemon that loads it (issue 47). A server, one per test worker, imports that library and
nothing of routine, then for each request forks a monitor, which forks the
process: its working directory, environment, argv and standard streams are the test's, it runs
`python -m routine ARGS` from the top (routine's own modules are imported fresh, so they read
this environment), and at the end it exits as an interpreter does (threads joined, atexit run,
streams flushed). The monitor sends the pid, then the exit status, as `subprocess.Popen` gives it.

`WarmProcess` is the test's handle: the part of `subprocess.Popen` the tests use. Where what a
fresh process imports is the point (tests/test_cli_light.py, the memory worker's libraries),
tests start a cold `python` as before; `ROUTINE_TEST_COLD_START=1` starts every process cold.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import IO, Any

COLD = os.environ.get("ROUTINE_TEST_COLD_START") == "1"
PRELOADED = ("ollama",)  # what every model-calling routine process imports; never litellm, chromadb or torch
_HEADER = struct.Struct("!I")


# ------------------------------------------------------------------------------------- the server


def _serve(path: str) -> None:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # before litellm is imported
    for name in PRELOADED:
        __import__(name)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(16)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # monitors are reaped by the kernel
    print("ready", flush=True)
    while True:
        conn, _ = listener.accept()
        try:
            request, fds = _receive(conn)
        except (OSError, ValueError):
            conn.close()
            continue
        if os.fork() == 0:
            listener.close()
            _monitor(conn, request, fds)
        conn.close()
        for fd in fds:
            os.close(fd)


def _receive(conn: socket.socket) -> tuple[dict, list[int]]:
    head, fds, _flags, _addr = socket.recv_fds(conn, _HEADER.size, 3)
    (size,) = _HEADER.unpack(head)
    body = b""
    while len(body) < size:
        chunk = conn.recv(size - len(body))
        if not chunk:
            raise ValueError("request cut off")
        body += chunk
    return json.loads(body), fds


def _monitor(conn: socket.socket, request: dict, fds: list[int]) -> None:
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    pid = os.fork()
    if pid == 0:
        conn.close()
        _child(request, fds)
    for fd in fds:
        os.close(fd)
    conn.sendall(json.dumps({"pid": pid}).encode() + b"\n")
    _, status = os.waitpid(pid, 0)
    code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
    try:
        conn.sendall(json.dumps({"returncode": code}).encode() + b"\n")
    finally:
        os._exit(0)


def _child(request: dict, fds: list[int]) -> None:
    code = 1
    try:
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        os.closerange(3, min(os.sysconf("SC_OPEN_MAX"), 65536))  # nothing of the server's stays open in it
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        code = _run_routine(request["args"])
    finally:
        os._exit(code)


def _run_routine(args: list[str]) -> int:
    import runpy
    import traceback

    sys.argv = [sys.executable, *args]
    sys.path[0] = os.getcwd()  # as `python -m` puts it first
    try:
        runpy.run_module("routine", run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if isinstance(exc.code, str):
            print(exc.code, file=sys.stderr)
    except BaseException:
        traceback.print_exc()
        code = 1
    return _finish(code)


def _finish(code: int) -> int:
    """What the interpreter does at exit: join the threads, run atexit, flush the streams."""
    import atexit

    shutdown = getattr(threading, "_shutdown", None)
    if shutdown is not None:
        shutdown()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            code = code or 120
    return code


# ------------------------------------------------------------------------------------- the client


class WarmStarter:
    """One server for this test worker, started on first use."""

    def __init__(self) -> None:
        self._dir = tempfile.mkdtemp(prefix="routine-warm-")
        self.path = os.path.join(self._dir, "s")
        self._server: subprocess.Popen | None = None
        self._lock = threading.Lock()

    def _ensure(self, env: dict) -> None:
        with self._lock:
            if self._server is not None and self._server.poll() is None:
                return
            base = {k: v for k, v in env.items() if not k.startswith(("ROUTINE_", "OLLAMA_", "XDG_"))}
            self._server = subprocess.Popen([sys.executable, __file__, self.path], env=base,
                                            stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
            assert self._server.stdout is not None
            line = self._server.stdout.readline()
            if line.strip() != "ready":
                raise RuntimeError(f"the warm-start server did not start: {line!r}")

    def popen(self, args: list[str], env: dict, cwd: Path | str, stdin: Any = None, stdout: Any = None,
              stderr: Any = None, cold: bool = False) -> WarmProcess | subprocess.Popen:
        """`python -m routine ARGS`, warm; stdout/stderr as in Popen (None, a file, PIPE, STDOUT).
        ``cold``: a fresh interpreter that imports everything itself, in routine's own order."""
        if COLD or cold:
            return subprocess.Popen([sys.executable, "-m", "routine", *args], env=env, cwd=cwd, stdin=stdin,
                                    stdout=stdout, stderr=stderr)
        self._ensure(env)
        return WarmProcess(self.path, [str(a) for a in args], env, str(cwd), stdin, stdout, stderr)

    def run(self, args: list[str], env: dict, cwd: Path | str, timeout: float,
            input: str | None = None) -> subprocess.CompletedProcess:
        """`subprocess.run(..., capture_output=True, text=True)`, warm."""
        proc = self.popen(args, env, cwd, stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            out, err = proc.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            raise
        return subprocess.CompletedProcess([sys.executable, "-m", "routine", *args], proc.returncode or 0, out, err)

    def close(self) -> None:
        if self._server is not None and self._server.poll() is None:
            self._server.kill()
            self._server.wait()
        for name in os.listdir(self._dir):
            os.unlink(os.path.join(self._dir, name))
        os.rmdir(self._dir)


class WarmProcess:
    """A warm-started process, driven as `subprocess.Popen` is (the methods the tests use)."""

    def __init__(self, path: str, args: list[str], env: dict, cwd: str, stdin: Any, stdout: Any, stderr: Any):
        self.args = args
        self.returncode: int | None = None
        self.stdin: IO[str] | None = None
        self.stdout: IO[str] | None = None
        self.stderr: IO[str] | None = None
        fds, mine = self._streams(stdin, stdout, stderr)
        self._conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._conn.connect(path)
        body = json.dumps({"args": args, "env": env, "cwd": cwd}).encode()
        socket.send_fds(self._conn, [_HEADER.pack(len(body))], fds)
        self._conn.sendall(body)
        for fd in mine:
            os.close(fd)
        self._reader = self._conn.makefile("r")
        self.pid = int(json.loads(self._reader.readline())["pid"])

    def _streams(self, stdin: Any, stdout: Any, stderr: Any) -> tuple[list[int], list[int]]:
        """The child's fds 0-2, and those of them to close here once sent."""
        fds: list[int] = []
        mine: list[int] = []
        for index, spec in enumerate((stdin, stdout, stderr)):
            if spec == subprocess.STDOUT:
                fds.append(fds[1])
            elif spec == subprocess.PIPE:
                read, write = os.pipe()
                child, here = (read, write) if index == 0 else (write, read)
                fds.append(child)
                mine.append(child)
                setattr(self, ("stdin", "stdout", "stderr")[index], os.fdopen(here, "w" if index == 0 else "r"))
            elif spec == subprocess.DEVNULL:
                fd = os.open(os.devnull, os.O_RDWR)
                fds.append(fd)
                mine.append(fd)
            elif spec is None:
                fds.append(index)
            else:
                fds.append(spec if isinstance(spec, int) else spec.fileno())
        return fds, mine

    def poll(self) -> int | None:
        if self.returncode is None and select.select([self._conn], [], [], 0)[0]:
            self._read_status()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            if not select.select([self._conn], [], [], timeout)[0]:
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
            self._read_status()
        assert self.returncode is not None
        return self.returncode

    def _read_status(self) -> None:
        line = self._reader.readline()
        self.returncode = int(json.loads(line)["returncode"]) if line else -signal.SIGKILL
        self._reader.close()
        self._conn.close()

    def communicate(self, input: str | None = None, timeout: float | None = None) -> tuple[str, str]:
        out: list[str] = []
        err: list[str] = []
        threads = [threading.Thread(target=lambda s=s, acc=acc: acc.append(s.read()), daemon=True)
                   for s, acc in ((self.stdout, out), (self.stderr, err)) if s is not None]
        for thread in threads:
            thread.start()
        if self.stdin is not None:
            try:
                if input:
                    self.stdin.write(input)
            except BrokenPipeError:
                pass
            finally:
                self.stdin.close()
        self.wait(timeout)
        for thread in threads:
            thread.join()
        return "".join(out), "".join(err)

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


if __name__ == "__main__":
    _serve(sys.argv[1])
