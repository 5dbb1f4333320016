"""Apprise as one channel: any of its URLs (ntfy, Gotify, Matrix, email, Telegram, a JSON
webhook …, `notify.urls`), one way. apprise is imported only to send or check."""

from __future__ import annotations

import logging
import socket

from routine.config.notify import Priority
from routine.host import peers, unitcheck
from routine.person.channels.base import Channel, Outgoing, Result
from routine.redact import redact_text, redact_url

REACH_SECONDS = 3.0  # `routine doctor`'s connect to a notify URL's host

_KIND = {Priority.HIGH: "warning", Priority.NORMAL: "info", Priority.LOW: "info"}  # Apprise's notify_type


class AppriseChannel(Channel):
    name = "apprise"

    def __init__(self, url: str):
        self.url = url

    def send(self, message: Outgoing) -> Result:
        return send_one(self.url, message.title, message.body, message.priority)

    def check(self) -> str | None:
        return check_url(self.url)


def send_one(url: str, title: str, body: str, priority: Priority) -> Result:
    import apprise

    sender = apprise.Apprise()
    if not sender.add(at_priority(url, priority)):
        return Result(redact_url(url), False, "not an Apprise URL this version knows")
    try:
        # apprise.LogCapture has no annotations (apprise 1.9); it yields an io.StringIO.
        with apprise.LogCapture(level=logging.WARNING, fmt="%(message)s") as said:  # type: ignore[no-untyped-call]
            ok = sender.notify(title=title, body=body, notify_type=_KIND[priority])
    except Exception as exc:  # a plugin's own bug must not take the sender thread down
        return Result(redact_url(url), False, redact_text(f"{type(exc).__name__}: {exc}"))
    if ok:
        return Result(redact_url(url), True)
    said_last = redact_text(_first_line(said.getvalue()))
    return Result(redact_url(url), False, _refused(url) or said_last or "refused or unreachable")


def check_url(url: str) -> str | None:
    """Why ``url`` cannot carry a message (`routine doctor`), or None: Apprise must know it, and its
    host (where it names one) must accept a connection. Nothing is sent."""
    import apprise

    said = logging.getLogger("apprise")
    level, said.level = said.level, logging.CRITICAL  # its complaint is said below, in one sentence
    try:
        plugin = apprise.Apprise.instantiate(url)
    finally:
        said.setLevel(level)
    if not plugin:
        return f"{redact_url(url)} is not an Apprise URL this version knows"
    host = getattr(plugin, "host", None)
    if not isinstance(host, str) or not host:  # mail, a local socket: nothing to reach beforehand
        return None
    port = getattr(plugin, "port", None) or (443 if getattr(plugin, "secure", False) else 80)
    try:
        socket.create_connection((host, int(port)), timeout=REACH_SECONDS).close()
    except OSError as exc:
        return redact_text(f"{redact_url(url)} cannot be reached at {redact_url(f'x://{host}:{port}')[4:]} "
                           f"({exc.strerror or exc})")
    return None


def at_priority(url: str, priority: Priority) -> str:
    """``url`` with Apprise's ``priority=`` for a service that has priorities (ntfy, Gotify,
    Pushover, …: each maps low/normal/high onto its own scale); a priority the person wrote in the
    URL stays theirs, and a service without priorities gets the URL as it is."""
    import apprise

    plugin = apprise.Apprise.instantiate(url)
    if plugin is None or "priority" not in getattr(plugin, "template_args", {}) or "priority=" in url:
        return url
    return f"{url}{'&' if '?' in url else '?'}priority={priority.value}"


def _refused(url: str) -> str | None:
    """Inside the service: the unit's IP filter dropped the send (its host was named after install)."""
    if unitcheck.running_unit() is None:
        return None
    return unitcheck.refusal(peers.notify_hosts(url))


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""
