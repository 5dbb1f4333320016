"""The control socket under abuse: malformed requests, huge lines, a flood of idle connections,
a burst of parallel fires. The daemon keeps serving, and a fire never runs beside it."""

from __future__ import annotations

import fcntl
import json
import os
import socket
import subprocess
import sys

import ollama as ollama_client

from test_daemon import MINUTELY, daemon, journal_rows, only_schedule, status, wait_for
from waits import scaled

FOREIGN = "llama3.2:3b"


def ask(home, raw: bytes) -> dict:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(30)
        sock.connect(str(home.root / "run" / "control.sock"))
        sock.sendall(raw)
        with sock.makefile("r") as stream:
            return json.loads(stream.readline())


def daemon_sockets(proc) -> int:
    """Open sockets of the daemon (its model clients, the index and torch open other files)."""
    count = 0
    for fd in os.listdir(f"/proc/{proc.pid}/fd"):
        try:
            count += os.readlink(f"/proc/{proc.pid}/fd/{fd}").startswith("socket:")
        except OSError:
            continue
    return count


def test_malformed_huge_and_idle_connections_are_refused_and_the_daemon_keeps_serving(initialised, ollama):
    home = initialised
    only_schedule(home, MINUTELY.replace('"* * * * *"', '"0 3 * * *"'))
    with daemon(home) as proc:
        for raw, why in ((b"hello daemon\n", "not JSON"), (b"[1, 2]\n", "JSON list, not an object"),
                         (b'{"op": "fire"}\n', "has no 'target'"), (b'{"op": "rm -rf"}\n', "Unknown request"),
                         (b"x" * (1 << 20) + b"x\n", "longer than 1 MB"),
                         (b"[" * 100_000 + b"]" * 100_000 + b"\n", "nests its JSON too deeply"),
                         (b'{"a":' * 100_000 + b"1" + b"}" * 100_000 + b"\n", "nests its JSON too deeply")):
            reply = ask(home, raw)
            assert reply["done"] and reply["exit"] == 2 and why in reply["error"], reply
            assert "internal error" not in reply["error"] and "Traceback" not in reply["error"]
        # A flood of connections that never say anything: they cannot use up the daemon's files.
        before = daemon_sockets(proc)
        idle = []
        for _ in range(300):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.connect(str(home.root / "run" / "control.sock"))
            idle.append(sock)
        try:
            assert daemon_sockets(proc) <= before + 64 + 8
            # The person's commands wait their turn and go through the daemon, never beside it.
            answer = home.run("status", "--json", timeout=120)
            assert answer.returncode == 0 and answer.stdout.startswith("{"), (
                answer.stdout[:500],
                answer.stderr[-1500:],
            )
            assert json.loads(answer.stdout)["state"] == "running"
            fired = home.run("fire", "strategist", "--json", timeout=120)
            assert fired.returncode == 0, fired.stderr
        finally:
            for sock in idle:
                sock.close()
        assert all(r["keep_alive"] == -1 for r in ollama.requests if r["_path"] == "/api/chat"), \
            "a fire ran in its own process"
        wait_for(lambda: daemon_sockets(proc) <= before + 4, 60, "the idle connections to be let go")
        assert status(home)["vault_watch"]["mode"] != "stopped"
    log = (home.root / "daemon.log").read_text()
    assert "Traceback" not in log


def test_thirty_parallel_fires_all_go_through_the_daemon_and_residency_holds(initialised, ollama):
    home = initialised
    only_schedule(home, MINUTELY.replace('"* * * * *"', '"0 3 * * *"'))
    # Another program has a model loaded: it counts against max_resident (2) and stays.
    ollama_client.Client(host=ollama.url).generate(model=FOREIGN, prompt="", keep_alive="1h")
    agents = ["strategist", "critic", "builder"] * 10  # three models for one free slot
    with daemon(home):
        fires = [subprocess.Popen([sys.executable, "-m", "routine", "fire", agent, "--json"], env=home.env,
                                  cwd=home.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for agent in agents]
        results = [f.communicate(timeout=scaled(600)) for f in fires]
    assert [f.returncode for f in fires] == [0] * 30, [err for _, err in results if err][:3]
    assert {json.loads(out)["status"] for out, _ in results} <= {"ok", "proposal"}  # the builder proposes
    chats = [r for r in ollama.requests if r["_path"] == "/api/chat"]
    assert len(chats) == 30 and all(r["keep_alive"] == -1 for r in chats), "a fire ran in its own process"
    assert ollama.peak_resident <= 2
    assert FOREIGN in [e["model"] for e in ollama.events if e["kind"] == "load"]
    assert not [e for e in ollama.events if e["model"] == FOREIGN and e["kind"] in ("evict", "unload")]
    assert journal_rows(home, "SELECT COUNT(*) FROM runs WHERE status IN ('ok', 'proposal')")[0][0] == 30


def test_a_daemon_that_holds_the_lock_but_cannot_answer_is_waited_for_never_bypassed(initialised, ollama):
    home = initialised
    home.state.mkdir(parents=True, exist_ok=True)
    with open(home.state / "daemon.lock", "a+") as held:  # a daemon that is starting, or stuck
        fcntl.flock(held, fcntl.LOCK_EX)
        held.write(f"{os.getpid()}\n")
        held.flush()
        proc = home.run("fire", "strategist", timeout=60, env_extra={"ROUTINE_CONTROL_WAIT": "2"})
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert f"daemon (pid {os.getpid()}) runs but did not answer" in proc.stderr
    assert not [r for r in ollama.requests if r["_path"] == "/api/chat"]
    if (home.state / "journal.sqlite3").exists():
        assert journal_rows(home, "SELECT COUNT(*) FROM runs")[0][0] == 0


def test_a_deeply_nested_request_is_refused_in_one_sentence():
    from routine.daemon.control import BadRequest, parse_request

    for raw in (b"[" * 100_000 + b"]" * 100_000, b'{"op": ' * 50_000 + b"1" + b"}" * 50_000):
        try:
            parse_request(raw + b"\n")
        except BadRequest as exc:
            assert str(exc).startswith("The request nests its JSON too deeply; refused."), exc
        else:
            raise AssertionError("a 100,000-deep request was taken")
