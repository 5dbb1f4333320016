"""`run_command`: a shell command in a bubblewrap sandbox, for the Builder and agents granted it.

Inside: the system's programs read-only, a private size-bounded /tmp, no network (its own
empty network namespace), no view of the host's processes, and one work folder at /work —
read-write only when the agent may write there without approval, read-only otherwise. Outside
it the command sees nothing of the vault or the home folder. Always its own user namespace with
every capability dropped, also when routine runs as root (else root inside could remount /work
or /usr read-write). Time, memory, processes and output are limited, stdin is empty, and
programs that wait for a person (editors, pagers, bare REPLs) are refused up front.
"""

from __future__ import annotations

import json
import os
import resource
import shlex
import shutil
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import IO, NotRequired, TypedDict

from routine.tools.base import ToolContext, ToolError, tool
from routine.tools.proclimit import process_cap
from routine.vault.guard import Guard
from routine.vault.scope import in_scope, resolve

INTERACTIVE = {"vi", "vim", "nvim", "view", "nano", "pico", "emacs", "ed", "less", "more", "most", "pg", "top",
               "htop", "btop", "man", "info", "ssh", "telnet", "ftp", "sftp", "watch", "tmux", "screen", "mc",
               "passwd", "su", "sudo", "crontab", "visudo"}
REPLS = {"python", "python3", "node", "irb", "bash", "sh", "zsh", "fish", "sqlite3", "psql", "mysql", "lua", "R"}
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc/alternatives", "/etc/ld.so.cache",
               "/etc/ssl", "/etc/localtime")
NETWORK_FILES = ("/etc/resolv.conf", "/etc/hosts", "/etc/nsswitch.conf", "/etc/gai.conf")


@dataclass(frozen=True)
class Limits:
    timeout: float = 60.0
    memory: int = 1 << 30
    output: int = 64 * 1024
    processes: int = 64        # a fork bomb ends here (RLIMIT_NPROC inside; a pids cgroup as root)
    tmp_size: int = 64 << 20   # /tmp and /home are tmpfs of at most this many bytes each


def _refuse_interactive(command: str) -> None:
    try:
        words = shlex.split(command)
    except ValueError as exc:
        raise ToolError(f"The command could not be parsed ({exc}); check its quotes.") from None
    if not words:
        raise ToolError("run_command needs a command.")
    program = os.path.basename(words[0])
    if program in INTERACTIVE or (program in REPLS and len(words) == 1):
        raise ToolError(
            f"{program} waits for a person at a terminal, and nobody is there: run a command that "
            "finishes on its own (for a file, use cat or sed -n; for Python, python3 -c '...' or a script)."
        )


def _namespaces(limits: Limits, network: bool = False) -> list[str]:
    """The sandbox itself: its namespaces, no capabilities, private /tmp and /home, the system's
    programs read-only."""
    # --unshare-user and --cap-drop ALL: as root, bwrap would otherwise keep every capability. The
    # namespaces are named, not --unshare-all: its uts and cgroup ones add nothing to a process without
    # capabilities, and the system unit refuses them (RestrictNamespaces=, systemd/routine@.service).
    argv = ["bwrap", "--unshare-user", "--unshare-ipc", "--unshare-pid", *([] if network else ["--unshare-net"]),
            "--cap-drop", "ALL", "--die-with-parent", "--new-session",
            "--proc", "/proc", "--dev", "/dev"]
    for folder in ("/tmp", "/home"):
        argv += ["--size", str(limits.tmp_size), "--tmpfs", folder]
    for path in SYSTEM_DIRS + (NETWORK_FILES if network else ()):
        if os.path.islink(path):
            argv += ["--symlink", os.readlink(path), path]
        elif os.path.exists(path):
            argv += ["--ro-bind", path, path]
    return argv


def sandbox_argv(workdir: Path, writable: bool, limits: Limits = Limits()) -> list[str]:
    argv = _namespaces(limits) + ["--dir", "/work"]
    argv += ["--bind" if writable else "--ro-bind", str(workdir), "/work", "--chdir", "/work"]
    argv += ["--clearenv", "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin", "--setenv", "HOME", "/work",
             "--setenv", "LANG", "C.UTF-8", "--setenv", "TERM", "dumb", "--setenv", "PAGER", "cat",
             "--setenv", "GIT_PAGER", "cat", "--setenv", "EDITOR", "false"]
    # The process limit is set inside the user namespace, where it counts only the sandbox's own
    # processes (set outside, it would count every process of routine's user).
    argv += ["--", "prlimit", f"--nproc={limits.processes}:{limits.processes}", "--"]
    return argv


def server_argv(program: list[str], installed: list[Path], paths: list[Path], env: dict[str, str],
                network: bool, limits: Limits = Limits()) -> list[str]:
    """A long-running program (an MCP server over stdio) in the same sandbox as run_command: its own
    installation read-only (``installed``), ``paths`` read-write at their own place, the network only
    when ``network``, and an environment of ``env`` alone. Refused without bubblewrap."""
    if shutil.which("bwrap") is None:
        raise ToolError("an MCP server started over stdio runs in run_command's sandbox, which needs "
                        "bubblewrap (apt install bubblewrap).")
    argv = _namespaces(limits, network)
    for folder in installed:
        argv += ["--ro-bind", str(folder), str(folder)]
    for folder in paths:
        folder.mkdir(parents=True, exist_ok=True)
        argv += ["--bind", str(folder), str(folder)]
    argv += ["--chdir", str(paths[0]) if paths else "/home", "--clearenv"]
    for name, value in {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/home", "LANG": "C.UTF-8",
                        "TERM": "dumb", "PAGER": "cat", "GIT_PAGER": "cat", "EDITOR": "false", **env}.items():
        argv += ["--setenv", name, value]
    return argv + ["--", "prlimit", f"--nproc={limits.processes}:{limits.processes}", "--", *program]


class Ran(TypedDict):
    """What run_command gives the model (as JSON): the exit code (None: stopped at the time limit), the
    output and errors as kept (what was cut said so), and the /work folder it ran in."""

    return_code: int | None
    output: str
    error: str
    work_folder: NotRequired[str]


def run_sandboxed(command: str, workdir: Path, writable: bool, limits: Limits) -> Ran:
    """Run ``command`` with /bin/sh in the sandbox: {return_code, output, error} (return_code
    None when the time limit ended it), plus what was cut."""
    _refuse_interactive(command)
    if shutil.which("bwrap") is None:
        raise ToolError("run_command needs bubblewrap, which is not installed (apt install bubblewrap).")
    with process_cap(limits.processes) as join:
        def limit() -> None:  # in the child, before bwrap starts: inherited by everything inside
            join()
            resource.setrlimit(resource.RLIMIT_AS, (limits.memory, limits.memory))
            cpu = int(limits.timeout) + 5
            resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))

        proc = subprocess.Popen(sandbox_argv(workdir, writable, limits) + ["/bin/sh", "-c", command],
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                preexec_fn=limit, start_new_session=True)
        return _collect(proc, limits)


def _collect(proc: subprocess.Popen[bytes], limits: Limits) -> Ran:
    kept = {"out": bytearray(), "err": bytearray()}
    dropped = {"out": 0, "err": 0}

    def drain(stream: IO[bytes], key: str) -> None:  # keep the first bytes, count and discard the rest
        for chunk in iter(lambda: stream.read(8192), b""):
            room = limits.output - len(kept[key])
            kept[key] += chunk[:max(room, 0)]
            dropped[key] += max(len(chunk) - max(room, 0), 0)

    readers = [threading.Thread(target=drain, args=(proc.stdout, "out")),
               threading.Thread(target=drain, args=(proc.stderr, "err"))]
    for r in readers:
        r.start()
    timed_out = False
    try:
        code = proc.wait(timeout=limits.timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        proc.kill()  # bwrap's death ends everything in its namespaces (--die-with-parent)
        code = None
        proc.wait()
    for r in readers:
        r.join(5)
    output = kept["out"].decode("utf-8", "replace") + (
        f"\n[… {dropped['out']} more bytes cut]" if dropped["out"] else ""
    )
    error = kept["err"].decode("utf-8", "replace") + (
        f"\n[… {dropped['err']} more bytes cut]" if dropped["err"] else ""
    )
    if timed_out:
        error += f"\n[stopped: the command ran longer than {limits.timeout:.0f}s]"
    return {"return_code": code, "output": output, "error": error.strip("\n")}


def workdir_for(ctx: ToolContext) -> tuple[Path, bool]:
    """The folder mounted at /work and whether the agent may write it, from routine.yaml's
    `sandbox.workdir` and the agent's scopes."""
    config = ctx.config
    folder = config.sandbox_workdir
    if os.path.isabs(folder):
        path = Path(folder)
        writable = config.sandbox_mode == "rw" and ctx.agent.approval != "required"
    else:
        path, rel = resolve(ctx.vault, folder)
        probe = rel.rstrip("/") + "/file.md"
        if not in_scope(list(ctx.agent.reads), probe) and not in_scope(list(ctx.agent.writes), probe):
            raise ToolError(f"The sandbox's work folder {rel}/ is outside your scopes, so no command can run.")
        # Writing from the sandbox would bypass approval: only an agent that may write there directly gets rw.
        # Nor may a mount reach notes no agent writes directly (agent definitions, routine's own).

        # A case file it writes only as proposals (a semi-autonomous member) is never mounted writable.
        inside = rel.rstrip("/") + "/"
        proposals = [g for g in ctx.agent.proposal_writes if not g.startswith("!")]
        writable = (in_scope(list(ctx.agent.writes), probe) and ctx.agent.approval != "required"
                    and not any(in_scope([g], probe) or g.startswith(inside) for g in proposals)
                    and not Guard.of(config).covers_folder(ctx.vault, rel))
    path.mkdir(parents=True, exist_ok=True)
    return path, writable


@tool("run_command", "Run a shell command in a sandbox: no network, the work folder at /work (read-only unless "
      "you may write there), nothing else of the machine writable. Returns return_code, output and error.",
      {"command": {"type": "string", "description": "the command, run with /bin/sh -c in /work, e.g. 'ls -la' or "
                                                    "'python3 -m pytest -q'"}},
      required=["command"])
def run_command(ctx: ToolContext, command: str) -> str:
    workdir, writable = workdir_for(ctx)
    limits = Limits(ctx.config.sandbox_timeout, ctx.config.sandbox_memory, ctx.config.sandbox_output)
    result = run_sandboxed(command, workdir, writable, limits)
    result["work_folder"] = f"/work ({'read-write' if writable else 'read-only'})"
    return json.dumps(result, ensure_ascii=False)
