"""A stand-in Telegram Bot API server: a real HTTP server following the published Bot API
(https://core.telegram.org/bots/api) for the methods routine uses.

Requests are ``GET``/``POST /bot<token>/<method>`` with parameters in the query string, a JSON
body or a form; every answer is ``{"ok": true, "result": …}`` or ``{"ok": false, "error_code": N,
"description": …}``. Methods: ``getMe``; ``sendMessage`` (``chat_id``, ``text``, ``reply_markup``
with ``inline_keyboard``: each button's ``callback_data`` 1–64 bytes); ``getUpdates`` (``offset``
confirms the updates before it, ``limit``, ``timeout`` holds the request until an update comes,
``allowed_updates``); ``answerCallbackQuery`` (``callback_query_id``, ``text``).

The person's side: ``press`` (a callback query from a chat, as a tap on an inline button makes)
and ``reply`` (a message typed as a reply to one of the bot's). A wrong token answers 401.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


class FakeTelegram:
    def __init__(self, token: str = "123456:TESTTOKEN"):
        self.token = token
        self.sent: list[dict] = []  # the bot's messages (Message objects), in order
        self.updates: list[dict] = []  # not yet confirmed
        self.answered: list[dict] = []  # answerCallbackQuery calls
        self.next_update = 1
        self.next_message = 100
        self.polls = 0
        self.cond = threading.Condition()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):  # noqa: N802 - the http.server API
                self._call(b"")

            def do_POST(self):  # noqa: N802
                self._call(self.rfile.read(int(self.headers.get("Content-Length") or 0)))

            def _call(self, body: bytes) -> None:
                parts = urlsplit(self.path)
                prefix, _, method = parts.path.strip("/").partition("/")
                params = {k: v[0] for k, v in parse_qs(parts.query).items()}
                kind = self.headers.get("Content-Type", "")
                if body and "json" in kind:
                    params.update(json.loads(body))
                elif body:
                    params.update({k: v[0] for k, v in parse_qs(body.decode()).items()})
                if prefix != f"bot{outer.token}":
                    return self._answer({"ok": False, "error_code": 401, "description": "Unauthorized"}, 401)
                handler = getattr(outer, f"_m_{method}", None)
                if handler is None:
                    return self._answer({"ok": False, "error_code": 404, "description": "Not Found"}, 404)
                try:
                    self._answer({"ok": True, "result": handler(params)})
                except ValueError as exc:
                    self._answer({"ok": False, "error_code": 400, "description": f"Bad Request: {exc}"}, 400)

            def _answer(self, data: dict, status: int = 200) -> None:
                raw = json.dumps(data).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(raw)))
                    self.end_headers()
                    self.wfile.write(raw)
                except OSError:
                    pass

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    # --- the Bot API's methods ----------------------------------------------------------------

    def _m_getMe(self, params: dict) -> dict:  # noqa: N802 - the API's name
        return {"id": 123456, "is_bot": True, "first_name": "routine", "username": "routine_bot"}

    def _m_sendMessage(self, params: dict) -> dict:  # noqa: N802
        if not params.get("chat_id") or not params.get("text"):
            raise ValueError("chat_id and text are required")
        markup = params.get("reply_markup")
        if isinstance(markup, str):
            markup = json.loads(markup)
        for row in (markup or {}).get("inline_keyboard", []):
            for button in row:
                if not 1 <= len(button.get("callback_data", "").encode()) <= 64:
                    raise ValueError("BUTTON_DATA_INVALID")
        with self.cond:
            self.next_message += 1
            message = {"message_id": self.next_message, "date": int(time.time()),
                       "chat": {"id": int(params["chat_id"]), "type": "private"},
                       "from": {"id": 123456, "is_bot": True, "first_name": "routine"}, "text": params["text"]}
            if markup:
                message["reply_markup"] = markup
            self.sent.append(message)
        return message

    def _m_getUpdates(self, params: dict) -> list[dict]:  # noqa: N802
        offset = int(params.get("offset") or 0)
        limit = int(params.get("limit") or 100)
        timeout = float(params.get("timeout") or 0)
        with self.cond:
            self.polls += 1
            if offset:
                self.updates = [u for u in self.updates if u["update_id"] >= offset]
            self.cond.wait_for(lambda: bool(self.updates), timeout=timeout)
            return self.updates[:limit]

    def _m_answerCallbackQuery(self, params: dict) -> bool:  # noqa: N802
        self.answered.append(params)
        return True

    # --- the person's side ----------------------------------------------------------------------

    def _add(self, update: dict) -> dict:
        with self.cond:
            update["update_id"] = self.next_update
            self.next_update += 1
            self.updates.append(update)
            self.cond.notify_all()
        return update

    def press(self, message: dict, label: str, chat: int, user: int | None = None) -> dict:
        """A tap on the inline button ``label`` of the bot's ``message``, seen from chat ``chat``."""
        button = next(b for row in message["reply_markup"]["inline_keyboard"] for b in row if b["text"] == label)
        shown = {**message, "chat": {"id": chat, "type": "private"}}
        return self._add({"callback_query": {"id": f"cq{self.next_update}", "chat_instance": "1",
                                             "from": {"id": user or chat, "is_bot": False, "first_name": "P"},
                                             "message": shown, "data": button["callback_data"]}})

    def reply(self, message: dict, text: str, chat: int, user: int | None = None) -> dict:
        """The person types ``text`` as a reply to the bot's ``message``."""
        with self.cond:
            self.next_message += 1
            mine = self.next_message
        return self._add({"message": {"message_id": mine, "date": int(time.time()), "text": text,
                                      "chat": {"id": chat, "type": "private"},
                                      "from": {"id": user or chat, "is_bot": False, "first_name": "P"},
                                      "reply_to_message": message}})

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
