"""The webhook for outside events (`events:` in routine.yaml; off unless `listen` is set): a small
HTTP server on loopback only. ``POST /event/NAME`` with ``Authorization: Bearer TOKEN`` (the token
`events.tokens` names for that event, compared in constant time) and a JSON object as the body runs
that event's triggers, exactly as `routine trigger` does (``event_op.queue_event``). Bounded as
every door is: a body over ``events.MAX_BYTES`` is refused before it is read, a slow client is let
go after ``READ_SECONDS``, at most ``MAX_CONNECTIONS`` are open at once, each event accepts
``per_minute`` requests (429 after), and every refusal is one JSON sentence with its status;
nothing else is served."""

from __future__ import annotations

import hmac
import json
import logging
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

from routine.daemon.connections import BoundedConnections
from routine.daemon.event_op import Host, queue_event
from routine.errors import PayloadProblem, RoutineError
from routine.host import supervise
from routine.schedule.events import MAX_BYTES, checked

log = logging.getLogger(__name__)

READ_SECONDS = 10.0
WINDOW = 60.0  # seconds of the rate limit
MAX_CONNECTIONS = 16  # open at once; one more is closed at once (a slow client holds one for READ_SECONDS)


class _Server(BoundedConnections, HTTPServer):
    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler]):
        self.bounded(MAX_CONNECTIONS)
        super().__init__(address, handler)


class Refused(Exception):
    def __init__(self, status: int, sentence: str):
        super().__init__(sentence)
        self.status, self.sentence = status, sentence


class Webhook:
    def __init__(self, jobs: Host):
        self.jobs = jobs
        self.server: _Server | None = None
        self.lock = threading.Lock()
        self.seen: dict[str, deque[float]] = {}  # event -> monotonic times of its accepted requests

    @property
    def port(self) -> int | None:
        return self.server.server_address[1] if self.server else None

    def start(self) -> None:
        listen = self.jobs.live.config.events.listen
        if not listen:
            return
        host, _, port = listen.rpartition(":")
        self.server = _Server((host.strip("[]"), int(port)), _handler(self))
        supervise.start("webhook", self.server.serve_forever)
        log.info("webhook for outside events listening on %s", listen)

    def stop(self) -> None:
        if self.server:
            self.server.shutdown()
            self.server.server_close()

    def handle(self, path: str, auth: str, length: int | None, read: Any) -> dict[str, Any]:
        """One request, or Refused with its status and sentence."""
        name = path.removeprefix("/event/") if path.startswith("/event/") else ""
        if not name or "/" in name:
            raise Refused(404, "POST /event/NAME, NAME an event a schedule declares.")
        token = self.jobs.live.config.events.token_of(name)
        given = auth.removeprefix("Bearer ").strip() if auth.startswith("Bearer ") else ""
        if token is None or not hmac.compare_digest(given.encode(), token.encode()):
            raise Refused(401, f"No valid token for the event {name!r}: send `Authorization: Bearer TOKEN` with "
                               "the token `events.tokens` names for it.")
        if length is None or length > MAX_BYTES:
            raise Refused(413, f"The body is {'of unknown length' if length is None else f'{length} bytes'}; an "
                               f"event's payload is a JSON object of at most {MAX_BYTES // 1024} KB.")
        self._count(name)
        try:
            data = json.loads(read(length) or b"{}")
        except (ValueError, UnicodeDecodeError, RecursionError):
            raise Refused(400, "The body is not a JSON object.") from None
        try:
            return queue_event(self.jobs, name, checked(data))
        except PayloadProblem as exc:
            raise Refused(400, exc.message) from None
        except RoutineError as exc:  # no trigger declared for it
            raise Refused(404, f"{exc.message} {exc.fix or ''}".strip()) from None

    def _count(self, name: str) -> None:
        now, limit = time.monotonic(), self.jobs.live.config.events.per_minute
        with self.lock:
            times = self.seen.setdefault(name, deque())
            while times and now - times[0] > WINDOW:
                times.popleft()
            if len(times) >= limit:
                raise Refused(429, f"The event {name!r} was sent {limit} times this minute, its limit "
                                   "(`events.per_minute`); try again in a minute.")
            times.append(now)


def _handler(hook: Webhook) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        timeout = READ_SECONDS

        def do_POST(self) -> None:  # noqa: N802 - the http.server API
            length = self.headers.get("Content-Length")
            try:
                size = int(length) if length is not None else None
                result = hook.handle(self.path, self.headers.get("Authorization") or "", size, self.rfile.read)
                self._answer(202, result)
            except ValueError:
                self._answer(400, {"error": "Content-Length is not a number."})
            except Refused as exc:
                log.info("webhook refused %s: %s", self.path[:80], exc.sentence)
                self._answer(exc.status, {"error": exc.sentence})

        def do_GET(self) -> None:  # noqa: N802
            self._answer(405, {"error": "POST /event/NAME with a JSON object."})

        def _answer(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data)
            self.close_connection = True

        def log_message(self, *args: Any) -> None:
            pass  # refusals are logged above; accepted events by queue_event

    return Handler
