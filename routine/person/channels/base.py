"""The seam every channel to the person sits behind (borgmatic's one module per monitoring hook is
the model): a ``Channel`` sends an ``Outgoing`` message, and a two-way one also ``receive``s the
person's answers (``Incoming``) on an outbound connection it holds open (no port is opened).

A channel never decides what an answer means: it hands what arrived, with where it came from,
to ``deliver`` (the daemon: ``routine.flows.answers`` checks its token, refuses or applies it)
and, where the channel can say so on the phone, shows the sentence ``deliver`` returns.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Callable

from routine.config.notify import Priority


@dataclass(frozen=True)
class Button:
    """One choice on a message: its label, and what comes back when it is pressed (a token
    routine signed for this message and choice, at most 64 bytes: Telegram's callback limit)."""

    label: str
    data: str


@dataclass(frozen=True)
class Outgoing:
    key: str  # the message's key (one message per key, ever)
    title: str
    body: str
    priority: Priority
    buttons: tuple[Button, ...] = ()  # shown by a two-way channel; a one-way channel sends the text alone
    typed: bool = False  # a typed reply to this message is an answer (a question's free text)


@dataclass(frozen=True)
class Result:
    url: str  # the channel as shown (``routine.redact``): the scheme and host, never a token
    ok: bool
    error: str | None = None
    ref: str | None = None  # the channel's id of the message sent (a typed reply names it)


@dataclass(frozen=True)
class Incoming:
    """What arrived on a two-way channel, as it arrived: data, never code."""

    channel: str  # the channel's name: ntfy, telegram
    cursor: str  # the channel's position after this (ntfy's message id, Telegram's update id)
    data: str = ""  # a button's data (a token), or ""
    text: str = ""  # a reply typed by the person
    in_reply_to: str | None = None  # the channel's id of the message the typed reply answers
    origin: str = ""  # who sent it, as the channel names them (chat 12345)
    foreign: str | None = None  # why the sender is not the person (another chat); None: the person


# What the receiver hands each arrival to; it returns a short sentence the channel may show.
Deliver = Callable[[Incoming], str]
# Told of a failure to read that lasts (a sentence), and of its end (None).
Trouble = Callable[[str | None], None]


class Channel(ABC):
    """One way to reach the person. ``name`` is how logs, the journal and `by` name it."""

    name: str = ""
    two_way: bool = False  # receive() is implemented: answers come back this way

    @abstractmethod
    def send(self, message: Outgoing) -> Result:
        """Send now, in this thread; never raises for a refusal or an unreachable server."""

    def check(self) -> str | None:
        """Why this channel cannot carry a message (`routine doctor`), or None. Nothing is sent."""
        return None

    def receive(self, stop: threading.Event, deliver: Deliver, cursor: str | None,
                trouble: Trouble | None = None) -> None:
        """Hand each answer to ``deliver`` until ``stop`` is set: one blocking read at a time on an
        outbound connection (no polling loop), reconnecting with backoff (``reading.keep_reading``,
        which tells ``trouble`` of a failure that lasts); ``cursor`` is where the last arrival left
        off (None: from now)."""
        raise NotImplementedError(f"the {self.name} channel sends only")

    def interrupt(self) -> None:  # noqa: B027 - a one-way channel has no read to end
        """End a blocking read now (the daemon stops): ``receive`` then returns."""
