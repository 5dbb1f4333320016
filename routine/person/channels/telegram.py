"""Telegram's Bot API as a two-way channel (https://core.telegram.org/bots/api): ``sendMessage``
with an inline keyboard (each button's ``callback_data`` a signed token), answers read by long
polling ``getUpdates`` (``offset``: the update after the last one read; ``timeout``: the server
holds the request until something arrives). A pressed button is acknowledged with
``answerCallbackQuery`` and the sentence routine gives; a reply typed to one of routine's
messages (``reply_to_message``) is an answer too. Only the configured chat's answers count: the
others arrive marked ``foreign`` and are refused."""

from __future__ import annotations

import json
import threading
from typing import Callable
from urllib.parse import quote

from routine.config.notify import TelegramSettings
from routine.jsonvalue import JSONValue
from routine.person.channels.base import Channel, Deliver, Incoming, Outgoing, Result, Trouble
from routine.person.channels.http import Held, HttpFailed, request
from routine.person.channels.reading import keep_reading
from routine.redact import redact_url

POLL_SECONDS = 50  # the long poll's timeout: the server answers at once when an update comes
MAX_TEXT = 4096  # Telegram's longest message


class TelegramChannel(Channel):
    name = "telegram"
    two_way = True

    def __init__(self, settings: TelegramSettings):
        self.settings = settings
        self.base = f"{settings.api.rstrip('/')}/bot{settings.token}"
        self.shown = redact_url(settings.api)
        self.held = Held()

    def _call(self, method: str, body: JSONValue) -> JSONValue:
        answer = request("POST", f"{self.base}/{method}", body)
        if not isinstance(answer, dict) or not answer.get("ok"):
            said = answer.get("description") if isinstance(answer, dict) else None
            raise HttpFailed(f"{self.shown} refused {method}" + (f": {str(said)[:200]}" if said else ""))
        return answer.get("result")

    def send(self, message: Outgoing) -> Result:
        body: dict[str, JSONValue] = {"chat_id": self.settings.chat,
                                      "text": f"{message.title}\n\n{message.body}"[:MAX_TEXT]}
        if message.buttons:
            body["reply_markup"] = {"inline_keyboard": [[{"text": b.label, "callback_data": b.data}
                                                         for b in message.buttons]]}
        try:
            sent = self._call("sendMessage", body)
        except HttpFailed as exc:
            return Result(self.shown, False, str(exc))
        ref = sent.get("message_id") if isinstance(sent, dict) else None
        return Result(self.shown, True, ref=str(ref) if ref is not None else None)

    def check(self) -> str | None:
        try:
            self._call("getMe", {})
        except HttpFailed as exc:
            return str(exc)
        return None

    def receive(self, stop: threading.Event, deliver: Deliver, cursor: str | None,
                trouble: Trouble | None = None) -> None:
        offset = [int(cursor) + 1 if cursor and cursor.isdigit() else None]

        def read(connected: Callable[[], None]) -> None:
            query = json.dumps(["message", "callback_query"])
            url = f"{self.base}/getUpdates?timeout={POLL_SECONDS}&limit=20&allowed_updates={quote(query)}"
            url += f"&offset={offset[0]}" if offset[0] is not None else ""
            raw = b"".join(self.held.lines(url, timeout=POLL_SECONDS + 15, opened=connected))
            try:
                answer = json.loads(raw) if raw else None
            except ValueError:
                raise HttpFailed(f"{self.shown} answered getUpdates with something not JSON") from None
            if not isinstance(answer, dict) or not answer.get("ok") or not isinstance(answer.get("result"), list):
                raise HttpFailed(f"{self.shown} refused getUpdates")
            for update in answer["result"]:
                if not isinstance(update, dict) or not isinstance(update.get("update_id"), int):
                    continue
                offset[0] = update["update_id"] + 1
                incoming = self._incoming(update)
                if incoming is not None:
                    said = deliver(incoming)
                    self._acknowledge(update, said)

        keep_reading(self.name, stop, read, trouble)

    def _incoming(self, update: dict[str, JSONValue]) -> Incoming | None:
        cursor = str(update["update_id"])
        query, message = update.get("callback_query"), update.get("message")
        if isinstance(query, dict):
            chat = _chat_of(query.get("message"))
            sender = query.get("from")
            return Incoming("telegram", cursor, data=str(query.get("data") or "")[:64], origin=f"chat {chat}",
                            foreign=self._foreign(chat, sender))
        if isinstance(message, dict):
            chat = _chat_of(message)
            replied = message.get("reply_to_message")
            ref = replied.get("message_id") if isinstance(replied, dict) else None
            return Incoming("telegram", cursor, text=str(message.get("text") or "")[:MAX_TEXT],
                            in_reply_to=str(ref) if ref is not None else None, origin=f"chat {chat}",
                            foreign=self._foreign(chat, message.get("from")))
        return None

    def _foreign(self, chat: str | None, sender: JSONValue) -> str | None:
        """Why this is not the person: another chat (a user's id counts as their private chat)."""
        user = sender.get("id") if isinstance(sender, dict) else None
        if chat == self.settings.chat or (chat is None and str(user) == self.settings.chat):
            return None
        return f"it came from chat {chat or user}, not the configured chat"

    def _acknowledge(self, update: dict[str, JSONValue], said: str) -> None:
        query = update.get("callback_query")
        if not isinstance(query, dict) or not query.get("id"):
            return
        try:
            self._call("answerCallbackQuery", {"callback_query_id": query["id"], "text": said[:200]})
        except HttpFailed:
            pass  # the spinner on the phone stops by itself; the answer was taken or refused all the same

    def interrupt(self) -> None:
        self.held.end()


def _chat_of(message: JSONValue) -> str | None:
    chat = message.get("chat") if isinstance(message, dict) else None
    found = chat.get("id") if isinstance(chat, dict) else None
    return str(found) if found is not None else None
