"""The little HTTP the two-way channels need, on the standard library: a JSON request, and a
held-open request read line by line (a stream, a long poll) that another thread can end at once.
Every failure is one ``HttpFailed`` sentence with the host shown, never a token in a URL."""

from __future__ import annotations

import http.client
import json
import socket
import threading
from typing import Callable, Iterator
from urllib.parse import urlsplit

from routine.jsonvalue import JSONValue
from routine.redact import redact_text, redact_url

MAX_LINE = 256 * 1024  # one line of a stream, one JSON answer: more is refused, not read into memory
SEND_SECONDS = 15.0


class HttpFailed(Exception):
    """One sentence: what failed and where (the host only)."""


def _connection(url: str, timeout: float) -> tuple[http.client.HTTPConnection, str]:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise HttpFailed(f"{redact_url(url)} is not an http(s) URL")
    kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return kind(parts.hostname, parts.port, timeout=timeout), path


def request(method: str, url: str, body: JSONValue = None, headers: dict[str, str] | None = None,
            timeout: float = SEND_SECONDS) -> JSONValue:
    """One request with a JSON body (or none); the JSON answer. An HTTP error is ``HttpFailed``
    with the server's own words (its ``error``/``description``) where it gave them."""
    conn, path = _connection(url, timeout)
    data = None if body is None else json.dumps(body).encode("utf-8")
    try:
        conn.request(method, path, body=data, headers={**({"Content-Type": "application/json"} if data else {}),
                                                       **(headers or {})})
        response = conn.getresponse()
        raw = response.read(MAX_LINE + 1)
    except (OSError, http.client.HTTPException) as exc:
        raise HttpFailed(redact_text(f"{redact_url(url)} cannot be reached ({exc})")) from None
    finally:
        conn.close()
    if len(raw) > MAX_LINE:
        raise HttpFailed(f"{redact_url(url)} answered more than {MAX_LINE} bytes")
    try:
        answer: JSONValue = json.loads(raw) if raw.strip() else None
    except ValueError:
        answer = None
    if response.status >= 300:
        said = answer.get("error") or answer.get("description") if isinstance(answer, dict) else None
        raise HttpFailed(redact_text(f"{redact_url(url)} answered {response.status}"
                                     + (f": {str(said)[:200]}" if said else "")))
    return answer


class Held:
    """A request held open and read line by line; ``end`` (from any thread) closes it now."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._conn: http.client.HTTPConnection | None = None
        self.ended = False

    def lines(self, url: str, timeout: float, headers: dict[str, str] | None = None,
              opened: Callable[[], None] | None = None) -> Iterator[bytes]:
        """Each line the server sends (a blocking read, ``timeout`` at most between lines), until it
        closes the connection; ``HttpFailed`` on a refusal or a broken connection. ``opened`` is
        called once the server accepted the request (before its first line)."""
        conn, path = _connection(url, timeout)
        with self._lock:
            if self.ended:
                return
            self._conn = conn
        try:
            conn.request("GET", path, headers=headers or {})
            response = conn.getresponse()
            if response.status >= 300:
                raise HttpFailed(f"{redact_url(url)} answered {response.status}")
            if opened is not None:
                opened()
            while True:
                line = response.readline(MAX_LINE + 1)
                if not line:
                    return
                if len(line) > MAX_LINE:
                    raise HttpFailed(f"{redact_url(url)} sent a line of more than {MAX_LINE} bytes")
                yield line
        except (OSError, http.client.HTTPException) as exc:
            if not self.ended:
                raise HttpFailed(redact_text(f"{redact_url(url)}: the connection broke ({exc})")) from None
        finally:
            with self._lock:
                self._conn = None
            conn.close()

    def end(self) -> None:
        with self._lock:
            self.ended = True
            conn = self._conn
        if conn is not None and conn.sock is not None:
            try:
                conn.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
