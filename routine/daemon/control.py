"""The control socket, daemon side: `routine fire`, `status`, `index` and `search` while the daemon runs.

A manual fire goes through the same work queue, model client and journal as scheduled work,
and its progress streams back to the CLI as JSON lines (protocol: ``routine.control``).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import socketserver
import threading

from routine.control import socket_path
from routine.errors import RoutineError, UsageError
from routine.journal.status import succeeded

log = logging.getLogger(__name__)


class ControlServer:
    def __init__(self, daemon):
        self.daemon = daemon
        self.path = socket_path()
        self._server = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if self.path.exists():
            self.path.unlink()  # stale: start-up owns the runtime dir
        daemon = self.daemon

        class Handler(socketserver.StreamRequestHandler):
            def handle(self):
                line = self.rfile.readline()
                if not line:
                    return
                lock = threading.Lock()

                def send(obj: dict) -> None:
                    with lock:
                        try:
                            self.wfile.write((json.dumps(obj, default=str) + "\n").encode())
                            self.wfile.flush()
                        except (BrokenPipeError, ConnectionResetError):
                            pass  # the CLI went away; the run goes on and is journaled

                gone = threading.Event()  # the CLI went away (Ctrl-C): what it asked for is called off
                peer = self.connection.dup()  # its own descriptor: never contends with rfile's lock

                def watch_client() -> None:
                    try:
                        while peer.recv(64):  # the CLI sends nothing more: empty when it closes
                            pass
                    except OSError:
                        pass
                    gone.set()
                watcher = threading.Thread(target=watch_client, name="control-client", daemon=True)
                watcher.start()
                try:
                    handle_request(daemon, json.loads(line), send, gone)
                except RoutineError as exc:
                    send({"done": True, "error": exc.message, "fix": exc.fix, "exit": exc.exit_code})
                except Exception as exc:  # never kill the server thread
                    log.exception("control request failed")
                    send({"done": True, "error": f"internal error: {exc}", "exit": 1})
                finally:
                    with contextlib.suppress(OSError):
                        peer.shutdown(socket.SHUT_RD)  # the answer is sent: end the watch now
                    watcher.join(1)
                    peer.close()

        class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
            daemon_threads = True

        old = os.umask(0o177)  # the socket is the person's alone (0600)
        try:
            self._server = Server(str(self.path), Handler)
        finally:
            os.umask(old)
        from routine import supervise

        self._thread = supervise.start("control", self._server.serve_forever).thread

    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def stop(self) -> None:
        if self._server:
            self._server.shutdown()
            self._server.server_close()
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass


def handle_request(daemon, message: dict, send, gone: threading.Event | None = None) -> None:
    op = message.get("op")
    if op == "status":
        from routine.daemon.status import snapshot

        send({"done": True, "status": snapshot(daemon)})
    elif op == "fire":
        fire(daemon, message, send, gone or threading.Event())
    elif op == "decide":
        decide(daemon, message, send)
    elif op == "index":
        index(daemon, message, send)
    elif op == "search":
        search(daemon, message, send)
    elif op == "chat":
        from routine.daemon.chat_op import chat

        chat(daemon, message, send)
    else:
        send({"done": True, "error": f"unknown request {op!r}", "exit": 2})


def fire(daemon, message: dict, send, gone: threading.Event) -> None:
    """Run an agent or a block through the queue; if the CLI goes away (Ctrl-C), the run stops
    at its next token or write and is journaled as interrupted."""
    from routine.config.loader import agent_named
    from routine.daemon.work import Work
    from routine.journal import Journal
    from routine.runner.block import run_block
    from routine.runner.step import StepRequest

    live = daemon.live
    target = message["target"]
    done = threading.Event()
    result: dict = {}

    def on_event(kind: str, data: dict) -> None:
        if gone.is_set():
            from routine.errors import Abandoned

            raise Abandoned("the person interrupted `routine fire` (Ctrl-C), so this run stopped and wrote nothing.")
        send({"event": kind, **data})

    block = live.schedules.blocks.get(target)
    if message.get("resume") and block is None:
        raise UsageError(f"Block {target} of run {message['resume']} is no longer in the schedules.",
                         "restore it in its schedule file, or fire its agents one by one.")
    job = Work(key="", label=f"fire {target}", run=None)
    if block is not None and target.lower() not in live.agents:
        resume = _resume(message.get("resume"), block)  # refused here, before anything is queued

        def work() -> None:
            journal = Journal()
            try:
                outcome = run_block(daemon.make_runner(journal, on_event, job, gone), block, live.agents,
                                    trigger="retry" if resume else "manual", stream=True, resume=resume)
                result.update(status=outcome.status, run=outcome.run_id,
                              steps=[s.summary() for s in outcome.steps])
            finally:
                journal.close()
                done.set()
        job.key, job.models = f"block:{block.id}", daemon.model_keys(block.agents)
    else:
        agent = agent_named(live.agents, [], target)
        request = StepRequest.for_agent(live.config, agent, message.get("task"))

        def work() -> None:
            journal = Journal()
            try:
                outcome = daemon.make_runner(journal, on_event, cancel=gone).run_step(request, stream=True)
                result.update(outcome.summary())
            finally:
                journal.close()
                done.set()
        job.key, job.models = f"agent:{agent.name}", daemon.model_keys([agent.name])
    job.run = work
    daemon.queue.submit(job)
    snapshot = daemon.queue.snapshot()
    if snapshot["queued"]:
        send({"event": "queued", "ahead": len(snapshot["running"]) + len(snapshot["queued"]) - 1})
    done.wait()
    failed = not succeeded(result.get("status"))
    send({"done": True, "result": result, "exit": 1 if failed else 0})


def _resume(run_id: str | None, block):
    """Where `routine runs retry` picks the block up (None for a plain fire)."""
    if not run_id:
        return None
    from routine.journal import Journal
    from routine.runner.resume import block_run_of, resume_point

    journal = Journal()
    try:
        run = journal.get(run_id)
        return resume_point(journal, block_run_of(journal, run), block) if run is not None else None
    finally:
        journal.close()


def decide(daemon, message: dict, send) -> None:
    """`routine approve` while the daemon runs: the decision goes through the one queue."""
    from routine.daemon.work import Work

    done, result = threading.Event(), {}

    def work() -> None:
        try:
            result.update(daemon.vault_events.decide(message["rel"], "cli", bool(message.get("approved", True)),
                                                    bool(message.get("force"))).summary())
        except RoutineError as exc:
            result.update(outcome="failed", message=str(exc))
        finally:
            done.set()

    daemon.queue.submit(Work(key=f"proposal:{message['rel']}", label=f"decide {message['rel']}", run=work))
    done.wait()
    send({"done": True, "result": result, "exit": 0 if result.get("outcome") in ("applied", "rejected") else 1})


def index(daemon, message: dict, send) -> None:
    """`routine index [--rebuild]`: the daemon's own index, progress streamed back."""
    memory = daemon.memory

    def progress(what: str, done: int, total: int) -> None:  # not "done": that key ends a reply
        send({"event": "progress", "what": what, "count": done, "total": total})

    stats = (memory.rebuild if message.get("rebuild") else memory.reconcile)(progress)
    send({"done": True, "result": stats.as_dict(), "exit": 0})


def search(daemon, message: dict, send) -> None:
    """Ranked hits; ``agent`` (a name) or ``reads`` (globs) limit them to what may be read."""
    reads = message.get("reads")
    if message.get("agent"):
        from routine.config.loader import agent_named

        reads = list(agent_named(daemon.live.agents, [], message["agent"]).reads)
    hits = daemon.memory.search(str(message.get("query") or ""), int(message.get("k") or 6), reads,
                                exclude=message.get("exclude") or ())
    send({"done": True, "result": [hit.as_dict() for hit in hits], "exit": 0})
