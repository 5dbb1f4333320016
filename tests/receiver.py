"""A real local HTTP server that keeps what notification services were sent (an ntfy server and
a JSON webhook look the same from here: a POST with a body). Bound to loopback, stopped by the test."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from waits import wait_until


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def text(self) -> str:
        """Everything a person would read: the body (JSON values joined) and the title headers."""
        try:
            data = json.loads(self.body)
            values = " ".join(str(v) for v in data.values()) if isinstance(data, dict) else str(data)
        except ValueError:
            values = self.body.decode("utf-8", errors="replace")
        return " ".join([values, *(v for k, v in self.headers.items() if k.lower() in ("x-title", "title"))])


class Receiver:
    def __init__(self, status: int = 200):
        self.got: list[Received] = []
        self.status = status
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - the http.server API
                length = int(self.headers.get("Content-Length") or 0)
                outer.got.append(Received(self.path, dict(self.headers), self.rfile.read(length)))
                self.send_response(outer.status)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(b'{"id": "x", "success": true}')

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def texts(self) -> list[str]:
        return [r.text for r in self.got]

    def wait_for(self, predicate, timeout: float, what: str):
        """The first true ``predicate(texts received)``, within ``timeout`` (scaled, tests/waits.py)."""
        return wait_until(lambda: predicate(self.texts()), timeout, what, interval=0.05)

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
