"""A real local HTTP server for calendar tests: ``serving(respond)`` runs it on loopback with
``respond(handler)`` answering each GET, and yields its base URL; stopped when the block ends."""

from __future__ import annotations

from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from threading import Thread
from typing import Callable, Iterator


@contextmanager
def serving(respond: Callable[[BaseHTTPRequestHandler], None]) -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - the http.server API
            try:
                respond(self)
            except OSError:  # the client gave up (a deadline): nothing to answer
                pass

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def refuse(handler: BaseHTTPRequestHandler) -> None:
    handler.send_error(503)
