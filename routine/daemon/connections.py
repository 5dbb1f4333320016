"""A threading socket server that handles at most ``slots`` connections at once: one more is told
it is busy (``busy``) and closed at once, so idle or flooding clients can never use up the daemon's
file handles or threads. The control socket and the webhook are both one."""

from __future__ import annotations

import socketserver
import threading
from typing import Any, Callable


class BoundedConnections(socketserver.ThreadingMixIn):
    daemon_threads = True
    slots: threading.BoundedSemaphore  # made by the server's __init__ (``bounded``)
    shutdown_request: Callable[[Any], None]  # the server class's own (socketserver.BaseServer)

    def bounded(self, at_once: int) -> None:
        self.slots = threading.BoundedSemaphore(at_once)

    def busy(self, request: Any) -> None:
        """Said to a connection turned away (before it is closed); nothing by default."""

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self.slots.acquire(blocking=False):
            self.busy(request)
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()
