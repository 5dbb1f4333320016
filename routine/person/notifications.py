"""What reaches the person outside Obsidian: a message through each channel `notify:` in
routine.yaml configures (``routine.person.channels``: Apprise's URLs — ntfy, Gotify, Matrix,
email, a JSON webhook … —, and ntfy or Telegram with buttons). A message that asks something
(``Message.asked``: a proposal's Approve/Reject) gets a ticket (``routine.person.tickets``) whose
signed tokens its buttons carry; the answers come back through ``routine.flows.answers``.

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

from routine import paths
from routine.config.model import Config
from routine.config.notify import NotifySettings, Priority, Topic
from routine.errors import RoutineError
from routine.journal.answers import AnswerBook, Ticket
from routine.journal.db import connect
from routine.journal.notifications import Delivery, NotificationLog
from routine.person.channels import channels
from routine.person.channels.apprise import check_url, send_one
from routine.person.channels.base import Button, Channel, Outgoing, Result
from routine.person.tickets import AnswerKind, Asked, Choice, mint, token
from routine.redact import redact_text
from routine.vault.approvals import read_proposal
from routine.vault.notes import obsidian_link

__all__ = ["Result", "check_url", "send_one"]  # Apprise's sender and check live in channels/apprise.py

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
    asked: Asked | None = None  # its choices (buttons, where a channel brings answers back)

    @property
    def urgency(self) -> Priority:
        return self.priority or self.topic.priority


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
    ticket = None
    try:
        with _log(where) as book:
            if not book.claim(message.key, message.topic.value, message.title, message.body, now, status):
                return None
            if message.asked is not None and settings.answers:
                ticket = mint(AnswerBook(book.db), message.key, message.asked, now, settings.answer_within)
    except (OSError, sqlite3.Error) as exc:
        log.warning("notification %r not recorded, so not sent: %s", message.title, exc)
        return None
    if status is Delivery.SENDING:
        _OUTBOX.put(channels(settings), _outgoing(message, ticket), ticket, where)
    else:
        log.info("notification held until the quiet hours end: %s", message.title)
    return status


def deliver_held(config: Config, now: datetime) -> int:
    """Send what quiet hours held, once they are over; how many were sent off."""
    settings = config.notify
    if not (settings.urls or settings.active) or settings.is_quiet(_local(config, now).time()):
        return 0
    where = paths.journal_file()
    try:
        with _log(where) as book:
            held = book.held()
            tickets = {stored.key: AnswerBook(book.db).for_message(stored.key) for stored in held}
            for stored in held:
                book.settle(stored.key, Delivery.SENDING, now)
    except (OSError, sqlite3.Error) as exc:
        log.warning("held notifications not read: %s", exc)
        return 0
    for stored in held:
        message = Message(Topic(stored.topic), stored.key, stored.title, stored.body)
        ticket = tickets.get(stored.key)
        _OUTBOX.put(channels(settings), _outgoing(message, ticket), ticket, where)
    return len(held)


def send_now(settings: NotifySettings, title: str, body: str) -> list[Result]:
    """Send by each channel now, in this thread (`routine notify test`): what each one said."""
    test = Outgoing("test", title, body, Priority.NORMAL)
    return [channel.send(test) for channel in channels(settings)]


def proposal_waiting(config: Config, rel: str, title: str, body: str) -> Message:
    """The message that a proposal waits for the person: Approve and Reject buttons, bound to the
    proposal as it is now (an answer to a proposal edited since is refused)."""
    try:
        proposal = read_proposal(config.vault, rel)
    except (OSError, RoutineError):  # gone or unreadable already: the message goes without a binding
        proposal = None
    choices = (Choice(AnswerKind.APPROVE, "Approve"), Choice(AnswerKind.REJECT, "Reject"))
    asked = Asked(rel, choices, proposal.fingerprint) if proposal else None  # no buttons for what cannot be bound
    # Keyed by its run too: a later proposal at the path an archived one had is another message.
    run = str(proposal.properties.get("run") or "") if proposal else ""
    return Message(Topic.PROPOSALS, f"proposal:{rel}" + (f":{run}" if run else ""), title, body, note=rel,
                   asked=asked)


def _outgoing(message: Message, ticket: Ticket | None) -> Outgoing:
    buttons = () if ticket is None else tuple(Button(label, token(ticket.id, i))
                                              for i, (_, label, _) in enumerate(ticket.choices) if label)
    typed = ticket is not None and any(kind == AnswerKind.ANSWER.value for kind, _, _ in ticket.choices)
    return Outgoing(message.key, message.title, message.body, message.urgency, buttons, typed)


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
        self.queue: queue.Queue[tuple[list[Channel], Outgoing, Ticket | None, Path] | threading.Event] = \
            queue.Queue()
        self.thread: threading.Thread | None = None
        self.lock = threading.Lock()

    def put(self, sending: list[Channel], message: Outgoing, ticket: Ticket | None, where: Path) -> None:
        with self.lock:
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(target=self._run, name="notify", daemon=True)
                self.thread.start()
        self.queue.put((sending, message, ticket, where))

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
            sending, message, ticket, where = item
            results = [(c, c.send(message)) for c in sending]
            failed = [f"{r.url}: {r.error}" for _, r in results if not r.ok]
            for line in failed:
                log.warning("notification %r not delivered to %s", message.title, line)
            try:
                with _log(where) as book:
                    book.settle(message.key, Delivery.FAILED if failed else Delivery.SENT,
                                datetime.now(timezone.utc), "; ".join(failed) or None)
                    for channel, result in results:  # a typed reply names the message it answers
                        if ticket is not None and result.ref and channel.two_way:
                            AnswerBook(book.db).refer(channel.name, result.ref, ticket.id)
            except (OSError, sqlite3.Error) as exc:
                log.warning("notification %r: outcome not recorded: %s", message.title, exc)


_OUTBOX = _Outbox()


def flush(timeout: float = FLUSH_SECONDS) -> bool:
    """Wait for the messages this process queued (tests, and a command about to exit)."""
    return _OUTBOX.flush(timeout)
