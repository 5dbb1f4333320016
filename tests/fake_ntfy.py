"""A stand-in ntfy server: a real HTTP server following ntfy's published API
(https://docs.ntfy.sh/publish/, https://docs.ntfy.sh/subscribe/api/), for the parts routine uses.

- Publish: ``PUT``/``POST /<topic>`` with the message as the body and ``X-Title``/``Title``/``t``,
  ``X-Priority``/``Priority``/``p``, ``X-Tags``/``Tags``, ``X-Actions``/``Actions`` headers; or
  ``POST /`` with a JSON object (``topic``, ``message``, ``title``, ``priority``, ``tags``,
  ``actions``). The answer is the message as JSON (``id``, ``time``, ``expires``, ``event``, …).
- Subscribe: ``GET /<topic>/json`` streams JSON lines: an ``open`` event, a ``keepalive`` every
  ``keepalive`` seconds, a ``message`` event per message; ``since=`` (a message id, a unix time,
  a duration such as ``10m``, ``all``) sends the cached messages after it first; ``poll=1``
  answers the cached ones and ends.
- ``token``: when set, every request must carry ``Authorization: Bearer <token>`` (else 401/403).

``press(message, label)`` is the phone: it makes the HTTP request of the message's ``http`` action
of that label, as the ntfy app does. Bound to loopback, stopped by the test.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit
from urllib.request import Request, urlopen

_TOPIC_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")
_PRIORITIES = {"min": 1, "low": 2, "default": 3, "high": 4, "max": 5, "urgent": 5}


def _priority(value: object) -> int:
    if isinstance(value, int):
        return value
    text = str(value or "3").strip().lower()
    return _PRIORITIES.get(text) or int(text)


def _header_actions(text: str) -> list[dict]:
    """The simple format: ``http, Label, URL, method=POST, body=…, clear=true; view, …`` (or JSON)."""
    if text.strip().startswith("["):
        return json.loads(text)
    actions = []
    for part in text.split(";"):
        fields = [f.strip() for f in part.split(",")]
        action = {"action": fields[0], "label": fields[1], "url": fields[2]}
        for extra in fields[3:]:
            key, _, value = extra.partition("=")
            if key.startswith("headers."):
                action.setdefault("headers", {})[key[8:]] = value
            else:
                action[key] = value == "true" if value in ("true", "false") else value
        actions.append(action)
    return actions


class FakeNtfy:
    def __init__(self, keepalive: float = 45.0, token: str | None = None):
        self.keepalive = keepalive
        self.token = token
        self.messages: list[dict] = []  # every message published, in order (the cache)
        self.requests = 0
        self.subscribers = 0  # streams open now
        self.cond = threading.Condition()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):  # noqa: N802 - the http.server API
                outer.requests += 1
                if not self._allowed():
                    return
                parts = urlsplit(self.path)
                segments = [s for s in parts.path.split("/") if s]
                if len(segments) == 2 and segments[1] == "json" and set(segments[0]) <= _TOPIC_CHARS:
                    return outer._subscribe(self, segments[0], parse_qs(parts.query))
                self._json(404, {"code": 40401, "http": 404, "error": "page not found"})

            def do_POST(self):  # noqa: N802
                outer.requests += 1
                if not self._allowed():
                    return
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                path = urlsplit(self.path).path.strip("/")
                if not path:
                    try:
                        data = json.loads(body)
                    except ValueError:
                        return self._json(400, {"code": 40024, "http": 400, "error": "invalid request: JSON"})
                    if not isinstance(data, dict) or not data.get("topic"):
                        return self._json(400, {"code": 40009, "http": 400, "error": "invalid request: topic"})
                    return self._json(200, outer.publish(data["topic"], str(data.get("message") or ""),
                                                         title=data.get("title"), priority=data.get("priority"),
                                                         tags=data.get("tags"), actions=data.get("actions")))
                if "/" in path or not set(path) <= _TOPIC_CHARS:
                    return self._json(404, {"code": 40401, "http": 404, "error": "page not found"})
                h = self.headers
                actions = h.get("X-Actions") or h.get("Actions") or h.get("Action")
                tags = h.get("X-Tags") or h.get("Tags") or h.get("ta")
                self._json(200, outer.publish(path, body.decode("utf-8", errors="replace"),
                                              title=h.get("X-Title") or h.get("Title") or h.get("t"),
                                              priority=h.get("X-Priority") or h.get("Priority") or h.get("p"),
                                              tags=tags.split(",") if tags else None,
                                              actions=_header_actions(actions) if actions else None))

            do_PUT = do_POST  # noqa: N815

            def _allowed(self) -> bool:
                if outer.token is None:
                    return True
                given = self.headers.get("Authorization")
                if given == f"Bearer {outer.token}":
                    return True
                code = 401 if not given else 403
                self._json(code, {"code": code * 100 + 1, "http": code, "error": "unauthorized" if code == 401
                                  else "forbidden"})
                return False

            def _json(self, status: int, data: dict) -> None:
                raw = json.dumps(data).encode() + b"\n"
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    # --- the server's side ------------------------------------------------------------------

    def publish(self, topic: str, message: str, title=None, priority=None, tags=None, actions=None) -> dict:
        now = int(time.time())
        event = {"id": secrets.token_urlsafe(9)[:12], "time": now, "expires": now + 43200, "event": "message",
                 "topic": topic, "message": message or "triggered"}
        if title:
            event["title"] = title
        if priority is not None and _priority(priority) != 3:
            event["priority"] = _priority(priority)
        if tags:
            event["tags"] = list(tags)
        if actions:
            if len(actions) > 3:
                raise ValueError("ntfy allows at most 3 actions")
            event["actions"] = [{"id": secrets.token_hex(5), **a} for a in actions]
        with self.cond:
            self.messages.append(event)
            self.cond.notify_all()
        return event

    def _after(self, topic: str, since: str | None) -> list[dict]:
        mine = [m for m in self.messages if m["topic"] == topic]
        if since is None:
            return []
        if since == "all":
            return mine
        if since.isdigit():
            return [m for m in mine if m["time"] >= int(since)]
        if since[:-1].isdigit() and since[-1] in "smhd":  # a duration: 10m, 1h, 1d
            ago = int(since[:-1]) * {"s": 1, "m": 60, "h": 3600, "d": 86400}[since[-1]]
            return [m for m in mine if m["time"] >= time.time() - ago]
        ids = [m["id"] for m in mine]
        return mine[ids.index(since) + 1:] if since in ids else mine

    def _subscribe(self, handler: BaseHTTPRequestHandler, topic: str, query: dict) -> None:
        since = query.get("since", [None])[0]
        poll = query.get("poll", ["0"])[0] in ("1", "true", "yes")
        handler.send_response(200)
        handler.send_header("Content-Type", "application/x-ndjson; charset=utf-8")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()

        def line(event: dict) -> None:
            raw = json.dumps(event).encode() + b"\n"
            handler.wfile.write(f"{len(raw):x}\r\n".encode() + raw + b"\r\n")
            handler.wfile.flush()

        with self.cond:
            cached = self._after(topic, since)
            seen = len(self.messages)
        try:
            if poll:
                for m in cached:
                    line(m)
                handler.wfile.write(b"0\r\n\r\n")
                return
            self.subscribers += 1
            line({"id": secrets.token_hex(6), "time": int(time.time()), "event": "open", "topic": topic})
            for m in cached:
                line(m)
            while True:
                with self.cond:
                    self.cond.wait_for(lambda at=seen: len(self.messages) > at, timeout=self.keepalive)
                    new, seen = [m for m in self.messages[seen:] if m["topic"] == topic], len(self.messages)
                for m in new:
                    line(m)
                if not new:
                    line({"id": secrets.token_hex(6), "time": int(time.time()), "event": "keepalive", "topic": topic})
        except (BrokenPipeError, ConnectionResetError, OSError):
            return
        finally:
            if not poll:
                self.subscribers -= 1
            handler.close_connection = True

    # --- the phone's side -------------------------------------------------------------------

    def on(self, topic: str) -> list[dict]:
        return [m for m in self.messages if m["topic"] == topic]

    def press(self, message: dict, label: str) -> dict:
        """Press the ``http`` action ``label`` of ``message`` as the ntfy app does: its request made."""
        action = next(a for a in message.get("actions", []) if a["label"] == label)
        assert action["action"] == "http", action
        body = action.get("body")
        request = Request(action["url"], data=body.encode() if body is not None else None,
                          method=action.get("method", "POST"), headers=action.get("headers") or {})
        with urlopen(request, timeout=10) as answer:
            return json.loads(answer.read())

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
