"""ntfy as a two-way channel (https://docs.ntfy.sh/publish/, /subscribe/api/): a message is
published as JSON to the server's root with up to three ``http`` action buttons; each button
makes the phone publish the button's token to the reply topic, which routine reads over its own
outbound connection (``GET /<replies>/json``, a stream of JSON lines: ``open``, ``keepalive``,
``message``), resumed with ``since=`` the last message id read. Nothing but the token is taken
from a reply; anyone may post to a topic, and only routine's signed tokens are applied."""

from __future__ import annotations

import json
import threading
from typing import Callable
from urllib.parse import quote

from routine.config.notify import NtfySettings, Priority
from routine.person.channels.base import Channel, Deliver, Incoming, Outgoing, Result, Trouble
from routine.person.channels.http import Held, HttpFailed, request
from routine.person.channels.reading import keep_reading
from routine.redact import redact_url

ACTIONS = 3  # ntfy shows at most three buttons
KEEPALIVE_SECONDS = 45  # ntfy's default keepalive; a read waits a few of them before the line is taken as dead
CACHE = "12h"  # ntfy's default cache duration: how far back a first read looks
_PRIORITY = {Priority.LOW: 2, Priority.NORMAL: 3, Priority.HIGH: 4}


class NtfyChannel(Channel):
    name = "ntfy"
    two_way = True

    def __init__(self, settings: NtfySettings):
        self.settings = settings
        self.server = settings.server.rstrip("/")
        self.held = Held()

    @property
    def _auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.settings.token}"} if self.settings.token else {}

    def send(self, message: Outgoing) -> Result:
        body: dict[str, object] = {"topic": self.settings.topic, "title": message.title, "message": message.body,
                                   "priority": _PRIORITY[message.priority]}
        if message.buttons and self.settings.replies:
            body["actions"] = [{"action": "http", "label": b.label, "url": f"{self.server}/{self.settings.replies}",
                                "method": "POST", "body": b.data, "clear": True,
                                **({"headers": self._auth} if self._auth else {})}
                               for b in message.buttons[:ACTIONS]]
        try:
            answer = request("POST", self.server + "/", body, self._auth)  # type: ignore[arg-type]
        except HttpFailed as exc:
            return Result(redact_url(self.server), False, str(exc))
        ref = answer.get("id") if isinstance(answer, dict) else None
        return Result(redact_url(self.server), True, ref=str(ref) if ref else None)

    def check(self) -> str | None:
        """The server answers (a poll of the reply topic, nothing sent)."""
        topic = self.settings.replies or self.settings.topic
        try:
            request("GET", f"{self.server}/{quote(topic)}/json?poll=1&since=1s", headers=self._auth, timeout=5.0)
        except HttpFailed as exc:
            return str(exc)
        return None

    def receive(self, stop: threading.Event, deliver: Deliver, cursor: str | None,
                trouble: Trouble | None = None) -> None:
        # ntfy's message id read last; none yet: what its cache holds (12 h by default), so an answer
        # given while the daemon was down is read when it starts (one already taken is refused, counted).
        since = [cursor or CACHE]

        def read(connected: Callable[[], None]) -> None:
            url = f"{self.server}/{quote(self.settings.replies)}/json?since={quote(since[0])}"
            for line in self.held.lines(url, timeout=3 * KEEPALIVE_SECONDS, headers=self._auth, opened=connected):
                incoming = _incoming(line)
                if incoming is not None:
                    since[0] = incoming.cursor
                    deliver(incoming)

        keep_reading(self.name, stop, read, trouble)

    def interrupt(self) -> None:
        self.held.end()


def _incoming(line: bytes) -> Incoming | None:
    """A ``message`` event of the stream as an answer; other events (open, keepalive) are None."""
    try:
        event = json.loads(line)
    except ValueError:
        return None
    if not isinstance(event, dict) or event.get("event") != "message" or not event.get("id"):
        return None
    return Incoming("ntfy", str(event["id"]), data=str(event.get("message") or "")[:200].strip(), origin="ntfy")
