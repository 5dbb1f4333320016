"""The tokens answers carry: routine mints a ticket for each message that offers choices (one
ticket per message, single use, with an end: `notify.answer_within`), and each button carries
``<ticket>.<choice>.<signature>``: an HMAC of the ticket and the choice with a key kept in the
state dir (``answer.key``, created once, 0600). A button's token is at most 64 bytes (Telegram's
``callback_data``). Reading a token tells a forgery from a real one without the journal; the
journal (``routine.journal.answers``) then says whether the ticket is known, spent or expired."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import Enum

from routine.atomicfile import secret_key
from routine.journal.answers import AnswerBook, Ticket
from routine.paths import state_dir

KEY_FILE = "answer.key"
_TOKEN = re.compile(r"^([A-Za-z0-9_-]{12})\.(\d)\.([A-Za-z0-9_-]{16})$")


class AnswerKind(str, Enum):
    """What an answer does; ``routine.flows.answers`` maps each to its handler."""

    APPROVE = "approve"  # a proposal: apply it
    REJECT = "reject"  # a proposal: put it away
    ANSWER = "answer"  # a question: the choice's value, or the text typed
    SNOOZE = "snooze"  # a reminder: again after the choice's value (15m, 1h, tomorrow)
    DONE = "done"  # a reminder: its task is done

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Choice:
    kind: AnswerKind
    label: str  # the button's words
    value: str = ""  # what the choice says beyond its kind (a snooze's length, a question's option)


@dataclass(frozen=True)
class Asked:
    """What a message asks of the person: its choices, about what, and (a proposal) its content then."""

    subject: str
    choices: tuple[Choice, ...]
    bound: str | None = None
    typed: bool = False  # a typed reply is an answer (ANSWER with the text)


@dataclass(frozen=True)
class Read:
    """A token read and its signature checked: the ticket's id and the choice's position."""

    ticket: str
    choice: int


def _key() -> bytes:
    return secret_key(state_dir() / KEY_FILE)


def _signature(ticket: str, choice: int) -> str:
    mac = hmac.new(_key(), f"{ticket}.{choice}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac[:12]).decode()


def token(ticket: str, choice: int) -> str:
    """The token of one button: ``<ticket>.<choice>.<signature>`` (31 bytes)."""
    return f"{ticket}.{choice}.{_signature(ticket, choice)}"


def read(text: str) -> Read | None:
    """The ticket and choice a token names, if routine signed it; None for anything else."""
    found = _TOKEN.match(text.strip())
    if found is None:
        return None
    ticket, choice = found[1], int(found[2])
    if not hmac.compare_digest(found[3], _signature(ticket, choice)):
        return None
    return Read(ticket, choice)


def mint(book: AnswerBook, message_key: str, asked: Asked, now: datetime, within: timedelta) -> Ticket:
    """A new ticket for the message ``message_key``, kept in the journal."""
    choices = tuple((c.kind.value, c.label, c.value) for c in asked.choices)
    if asked.typed:  # a typed reply: an ANSWER without a button (no label) carries the text
        choices += ((AnswerKind.ANSWER.value, "", ""),)
    made = Ticket(secrets.token_urlsafe(9), message_key, asked.subject, choices, asked.bound, now + within, None)
    book.mint(made, now)
    return made
