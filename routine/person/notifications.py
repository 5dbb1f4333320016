"""What reaches the person outside Obsidian: a message through Apprise (ntfy, Gotify, Matrix,
email, Telegram, a JSON webhook … by URL, `notify:` in routine.yaml).

Each message has a key and is sent once (journal table ``notifications``): an alert when its
note opens (one per cause, as the notes are) and when it resolves, a proposal waiting, a task
assigned to a person, a block's finished note. In quiet hours a message is held and sent when
they end (the daemon's health monitor asks, ``deliver_held``). Sending happens on one
background thread with Apprise's own timeouts: a failure to notify never fails or slows a run;
it is logged and kept (``routine notify list`` counts them). apprise is imported only to send.
"""

from __future__ import annotations

import logging
import queue
import sqlite3
import threading
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

from routine import paths, peers, unitcheck
from routine.config.model import Config
from routine.config.notify import Priority, Topic
from routine.journal.db import connect
from routine.journal.notifications import Delivery, NotificationLog
from routine.vault.notes import obsidian_link
from routine.redact import redact_text, redact_url

log = logging.getLogger("routine.notify")

FLUSH_SECONDS = 10.0  # the longest a command waits, before it exits, for messages still being sent


@dataclass(frozen=True)
class Message:
    topic: Topic
    key: str  # one message per key, ever
    title: str
    body: str
    note: str | None = None  # the vault note it is about: the message carries a link that opens it in Obsidian
    priority: Priority | None = None  # else the topic's
    # A question's answers (issue 45): a reply channel that renders buttons offers these.
    choices: tuple[str, ...] = ()

    @property
    def urgency(self) -> Priority:
        return self.priority or self.topic.priority


@dataclass(frozen=True)
class Result:
    url: str  # as shown (``routine.redact``): the scheme and host, never a token
    ok: bool
    error: str | None = None


def notify(config: Config, message: Message, now: datetime, journal: Path | None = None) -> Delivery | None:
    """Ask for ``message`` to be sent (in the background; held in quiet hours). Never raises: None
    when notifications are off for its topic, or the key was sent before."""
    settings = config.notify
    if not settings.wants(message.topic):
        return None
    where = journal or paths.journal_file()
    message = replace(message, title=redact_text(message.title), body=redact_text(message.body))
    status = Delivery.HELD if settings.is_quiet(_local(config, now).time()) else Delivery.SENDING
    if message.note:
        message = replace(message, body=f"{message.body}\nOpen: {obsidian_link(config.vault, message.note)}")
    try:
        with _log(where) as book:
            if not book.claim(message.key, message.topic.value, message.title, message.body, now, status):
                return None
    except (OSError, sqlite3.Error) as exc:
        log.warning("notification %r not recorded, so not sent: %s", message.title, exc)
        return None
    if status is Delivery.SENDING:
        _OUTBOX.put(settings.urls, message, where)
    else:
        log.info("notification held until the quiet hours end: %s", message.title)
    return status


def deliver_held(config: Config, now: datetime) -> int:
    """Send what quiet hours held, once they are over; how many were sent off."""
    settings = config.notify
    if not settings.urls or settings.is_quiet(_local(config, now).time()):
        return 0
    where = paths.journal_file()
    try:
        with _log(where) as book:
            held = book.held()
            for stored in held:
                book.settle(stored.key, Delivery.SENDING, now)
    except (OSError, sqlite3.Error) as exc:
        log.warning("held notifications not read: %s", exc)
        return 0
    for stored in held:
        _OUTBOX.put(settings.urls, Message(Topic(stored.topic), stored.key, stored.title, stored.body), where)
    return len(held)


def send_now(urls: tuple[str, ...], title: str, body: str) -> list[Result]:
    """Send to each URL now, in this thread (`routine notify test`): what each one said."""
    return [_send_one(url, title, body, Priority.NORMAL) for url in urls]


REACH_SECONDS = 3.0  # `routine doctor`'s connect to a notify URL's host


def check_url(url: str) -> str | None:
    """Why ``url`` cannot carry a message (`routine doctor`), or None: Apprise must know it, and its
    host (where it names one) must accept a connection. Nothing is sent."""
    import socket

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


_KIND = {Priority.HIGH: "warning", Priority.NORMAL: "info", Priority.LOW: "info"}  # Apprise's notify_type


def _send_one(url: str, title: str, body: str, priority: Priority) -> Result:
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


def _refused(url: str) -> str | None:
    """Inside the service: the unit's IP filter dropped the send (its host was named after install)."""
    if unitcheck.running_unit() is None:
        return None
    return unitcheck.refusal(peers.notify_hosts(url))


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


def _local(config: Config, now: datetime) -> datetime:
    return now.astimezone(ZoneInfo(config.zone_name()))


class _log:
    """The journal's notifications table, opened for one use."""

    def __init__(self, where: Path):
        self.where = where

    def __enter__(self) -> NotificationLog:
        self.db = connect(self.where)
        return NotificationLog(self.db)

    def __exit__(self, *exc: object) -> None:
        self.db.close()


class _Outbox:
    """One background sender per process; a command waits for it (``flush``) before it exits."""

    def __init__(self) -> None:
        self.queue: queue.Queue[tuple[tuple[str, ...], Message, Path] | threading.Event] = queue.Queue()
        self.thread: threading.Thread | None = None
        self.lock = threading.Lock()

    def put(self, urls: tuple[str, ...], message: Message, where: Path) -> None:
        with self.lock:
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(target=self._run, name="notify", daemon=True)
                self.thread.start()
        self.queue.put((urls, message, where))

    def flush(self, timeout: float = FLUSH_SECONDS) -> bool:
        """Wait until everything queued before now was sent (or ``timeout``); True if it all went."""
        if self.thread is None or not self.thread.is_alive():
            return self.queue.empty()
        done = threading.Event()
        self.queue.put(done)
        return done.wait(timeout)

    def _run(self) -> None:
        while True:
            item = self.queue.get()
            if isinstance(item, threading.Event):
                item.set()
                continue
            urls, message, where = item
            results = [_send_one(url, message.title, message.body, message.urgency) for url in urls]
            failed = [f"{r.url}: {r.error}" for r in results if not r.ok]
            for line in failed:
                log.warning("notification %r not delivered to %s", message.title, line)
            try:
                with _log(where) as book:
                    book.settle(message.key, Delivery.FAILED if failed else Delivery.SENT,
                                datetime.now(timezone.utc), "; ".join(failed) or None)
            except (OSError, sqlite3.Error) as exc:
                log.warning("notification %r: outcome not recorded: %s", message.title, exc)


_OUTBOX = _Outbox()


def flush(timeout: float = FLUSH_SECONDS) -> bool:
    """Wait for the messages this process queued (tests, and a command about to exit)."""
    return _OUTBOX.flush(timeout)
