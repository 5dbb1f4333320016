"""The control socket, daemon side: `routine fire` (``routine.daemon.fire_op``), `status`, `index`,
`search` and `answer` (``routine.daemon.questions``) while the daemon runs.

A manual fire goes through the same work queue, model client and journal as scheduled work,
and its progress streams back to the CLI as JSON lines (protocol: ``routine.daemon.client``).
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import socket
import socketserver
import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Protocol

from routine.access import resolve
from routine.config.loader import agent_named
from routine.daemon.chat_op import chat
from routine.daemon.client import socket_path
from routine.daemon.connections import BoundedConnections
from routine.daemon.event_op import Host as EventHost
from routine.daemon.event_op import event
from routine.daemon.fire_op import fire
from routine.daemon.work import Work
from routine.errors import DaemonError, RoutineError
from routine.host import supervise
from routine.journal.decisions import Outcome
from routine.runner.events import IndexProgress

if TYPE_CHECKING:
    from routine.daemon.questions import QuestionKeeper
    from routine.daemon.status_record import DaemonStatus
    from routine.daemon.vault_events import VaultEvents
    from routine.jsonvalue import Parsed
    from routine.memory.remote import RemoteIndex

log = logging.getLogger(__name__)


MAX_CONNECTIONS = 64       # open at once; one more is told "busy" at once and closed (its client retries)
BACKLOG = 128              # connections the kernel holds before we accept them (a burst of fires)
REQUEST_TIMEOUT = 10.0     # seconds a client has to send its one request line
SEND_TIMEOUT = 60.0        # a client that stops reading our replies is let go (its run goes on)
MAX_LINE = 1 << 20         # the request line; a task text is far smaller


class BadRequest(RoutineError):
    """A request on the control socket that is not one routine sends."""

    exit_code = 2


class Host(EventHost, Protocol):
    """What the socket's requests use (the daemon): runs through the queue, the search index,
    proposals decided by the vault's events."""

    @property
    def memory(self) -> RemoteIndex | None: ...
    @property
    def vault_events(self) -> VaultEvents | None: ...
    @property
    def questions(self) -> QuestionKeeper: ...
    def changed(self) -> None: ...
    def plan_reminders(self) -> None: ...
    def trials_now(self) -> str | None: ...


Send = Callable[[dict[str, Any]], None]


class ControlServer:
    """``host``: what requests use; ``status``: the daemon's status now (``status.snapshot``)."""

    def __init__(self, host: Host, status: Callable[[], DaemonStatus]):
        self.host, self.status = host, status
        self.path = socket_path()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if self.path.exists():
            self.path.unlink()  # stale: start-up owns the runtime dir
        old = os.umask(0o177)  # the socket is the person's alone (0600)
        try:
            self._server = _Server(str(self.path), _handler(self.host, self.status))
        finally:
            os.umask(old)

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


class _Server(BoundedConnections, socketserver.UnixStreamServer):
    """At most MAX_CONNECTIONS handled at once; the rest are answered "busy" and closed."""

    request_queue_size = BACKLOG

    def __init__(self, *args: Any) -> None:
        self.bounded(MAX_CONNECTIONS)
        super().__init__(*args)

    def busy(self, request: Any) -> None:
        _reply_busy(request)

    def get_request(self) -> tuple[Any, Any]:
        try:
            return super().get_request()
        except OSError as exc:
            if exc.errno in (errno.EMFILE, errno.ENFILE):  # out of file handles: do not spin on accept
                log.error("control socket: out of file handles (%s); pausing new connections for a second", exc)
                time.sleep(1.0)
            raise

    def handle_error(self, request: Any, client_address: Any) -> None:
        log.exception("control connection failed")


def _reply_busy(request: socket.socket) -> None:
    try:
        request.settimeout(1.0)
        request.sendall((json.dumps({"done": True, "busy": True, "exit": 1,
                                     "error": f"the daemon has {MAX_CONNECTIONS} connections open"}) + "\n").encode())
    except OSError:
        pass


def _handler(host: Host, status: Callable[[], DaemonStatus]) -> type[socketserver.StreamRequestHandler]:
    class Handler(socketserver.StreamRequestHandler):
        def handle(self) -> None:
            self.connection.settimeout(REQUEST_TIMEOUT)
            try:
                line = self.rfile.readline(MAX_LINE + 1)
            except OSError:  # idle past the timeout, or gone
                return
            if not line:
                return
            self.connection.settimeout(SEND_TIMEOUT)
            lock = threading.Lock()

            def send(obj: dict[str, Any]) -> None:
                with lock:
                    try:
                        self.wfile.write((json.dumps(obj, default=str) + "\n").encode())
                        self.wfile.flush()
                    except OSError:
                        pass  # the CLI went away or stopped reading; the run goes on and is journaled

            gone = threading.Event()  # the CLI went away (Ctrl-C): what it asked for is called off
            peer = self.connection.dup()  # its own descriptor: never contends with rfile's lock
            peer.settimeout(None)

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
                handle_request(host, status, parse_request(line), send, gone)
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
    return Handler


OPS = {"status": (), "fire": ("target",), "decide": ("rel",), "index": (), "search": (), "chat": (), "held": (),
       "queued": (), "answer": ("question",), "reminders": (), "event": ("event",), "trials_now": ()}


def parse_request(line: bytes) -> Parsed:
    """One request line as routine's CLI sends it, or BadRequest with what is wrong."""
    fix = "use the `routine` command; it speaks this socket's protocol (one JSON object per line)."
    if len(line) > MAX_LINE:
        raise BadRequest(f"The request is longer than {MAX_LINE >> 20} MB; refused.", fix)
    try:
        message = json.loads(line)
    except (ValueError, UnicodeDecodeError):
        raise BadRequest("The request is not JSON; refused.", fix) from None
    except RecursionError:  # [[[[…]]]] 100,000 deep: json recurses once per level
        raise BadRequest("The request nests its JSON too deeply; refused.", fix) from None
    if not isinstance(message, dict):
        raise BadRequest(f"The request is a JSON {type(message).__name__}, not an object; refused.", fix)
    op = message.get("op")
    if op not in OPS:
        raise BadRequest(f"Unknown request {op!r} (known: {', '.join(OPS)}); refused.", fix)
    for key in OPS[op]:
        if not isinstance(message.get(key), str) or not message[key].strip():
            raise BadRequest(f"The {op} request has no {key!r}; refused.", fix)
    return message


def handle_request(host: Host, status: Callable[[], DaemonStatus], message: dict[str, Any], send: Send,
                   gone: threading.Event | None = None) -> None:
    op = message.get("op")
    if op == "status":
        send({"done": True, "status": status().to_json()})
    elif op == "fire":
        fire(host, message, send, gone or threading.Event())
    elif op == "decide":
        decide(host, message, send)
    elif op == "index":
        index(host, message, send)
    elif op == "search":
        search(host, message, send)
    elif op == "chat":
        chat(host, message, send)
    elif op == "answer":  # `routine answer ID TEXT`: the one path of answers, its block resumed on the queue
        outcome = host.questions.answer(message["question"], str(message.get("text") or ""), "cli")
        send({"done": True, "result": outcome.summary(), "exit": 0 if outcome.accepted else 1})
    elif op == "event":  # `routine trigger NAME`: the event's triggers queued with its payload
        event(host, message, send)
    elif op == "reminders":  # `routine remind` set, snoozed or ended one: its timer is planned now
        host.plan_reminders()
        send({"done": True})
    elif op in ("held", "queued"):  # `routine pause|resume` changed what is held: the dashboard and status say
        if op == "held" and host.vault_events is not None:
            host.vault_events.release_held()  # a resume: the trigger runs the pause held fire now
        host.changed()  # so now; `models try`, `agent try` queued a trial: the trials window looks at once
        send({"done": True})
    elif op == "trials_now":  # `models try --now`, `agent try --now`: queued trials start when residency allows
        send({"done": True, "result": {"waits": host.trials_now()}})
    else:
        send({"done": True, "error": f"unknown request {op!r}", "exit": 2})


def decide(host: Host, message: dict[str, Any], send: Send) -> None:
    """`routine approve` while the daemon runs: the decision goes through the one queue."""
    done = threading.Event()
    result: dict[str, Any] = {}
    events = host.vault_events
    if events is None:
        raise DaemonError("The daemon is not watching the vault yet, so it cannot decide proposals.",
                          "try again in a moment, once `routine status` says the daemon is running.")

    def work() -> None:
        try:
            result.update(events.decide(message["rel"], "cli", bool(message.get("approved", True)),
                                        bool(message.get("force"))).summary())
        except RoutineError as exc:
            result.update(outcome=Outcome.FAILED.value, message=str(exc))
        finally:
            done.set()

    host.queue.submit(Work(key=f"proposal:{message['rel']}", label=f"decide {message['rel']}", run=work))
    done.wait()
    send({"done": True, "result": result, "exit": 0 if Outcome(result.get("outcome")).settled else 1})


def index(host: Host, message: dict[str, Any], send: Send) -> None:
    """`routine index [--rebuild]`: the daemon's own index, progress streamed back."""
    memory = _memory(host)

    def progress(what: str, done: int, total: int) -> None:  # not "done": that key ends a reply
        send(IndexProgress(what, done, total).to_json())

    stats = (memory.rebuild if message.get("rebuild") else memory.reconcile)(progress)
    send({"done": True, "result": stats.as_dict(), "exit": 0})


def search(host: Host, message: dict[str, Any], send: Send) -> None:
    """Ranked hits; ``agent`` (a name) or ``reads`` (globs) limit them to what may be read."""
    reads = message.get("reads")
    if reads is not None and not (isinstance(reads, list) and all(isinstance(g, str) for g in reads)):
        raise BadRequest("The search request's 'reads' is not a list of globs; refused.")
    if message.get("agent"):
        reads = resolve(host.live.config, agent_named(host.live.agents, [], message["agent"])).read_globs
    try:
        k = int(message.get("k") or 6)
    except (TypeError, ValueError):
        raise BadRequest("The search request's 'k' is not a number; refused.") from None
    hits = _memory(host).search(str(message.get("query") or ""), k, reads, exclude=message.get("exclude") or ())
    send({"done": True, "result": [hit.as_dict() for hit in hits], "exit": 0})


def _memory(host: Host) -> RemoteIndex:
    if host.memory is None:
        raise DaemonError("The daemon's search index is not open yet.",
                          "try again in a moment, once `routine status` says the daemon is running.")
    return host.memory
