"""`notify:` in routine.yaml as the code uses it: where messages go (Apprise URLs), about what,
and when not (quiet hours). ``Topic`` is the one list of what can notify (the schema's enum and
description, `notify.on`'s default ``all``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import time, timedelta
from enum import Enum
from typing import Any, ClassVar, TypeVar
from urllib.parse import urlsplit

from routine.durations import parse_duration


class Priority(str, Enum):
    """How urgent a message is, in Apprise's words (each service's own scale is mapped from them)."""

    LOW = "low"
    NORMAL = "normal"
    HIGH = "high"

    def __str__(self) -> str:
        return self.value


class Topic(str, Enum):
    """What a message is about: one member and its line in ``_TRAITS``, and `notify.on` (its
    default ``all``, its description in the schema) offers it."""

    ALERTS = "alerts"
    PROPOSALS = "proposals"
    TASKS = "tasks"
    READY = "ready"
    QUESTIONS = "questions"
    REMINDERS = "reminders"
    TRIALS = "trials"

    def __str__(self) -> str:
        return self.value

    @classmethod
    def of(cls, name: str | None, otherwise: Topic) -> Topic:
        """The topic named ``name`` (as the journal keeps it), else ``otherwise``."""
        try:
            return cls(name) if name else otherwise
        except ValueError:
            return otherwise

    @property
    def priority(self) -> Priority:
        """A message's priority unless it says otherwise: an outage or failure high, something
        waiting for the person normal, a note ready to read low."""
        return _TRAITS[self][0]

    @property
    def meaning(self) -> str:
        """What is sent about it, for the person (the schema's description of `notify.on`)."""
        return _TRAITS[self][1]


# topic: (its messages' priority, what is sent)
_TRAITS: dict[Topic, tuple[Priority, str]] = {
    Topic.ALERTS: (Priority.HIGH, "an alert opened, one message per cause, and when it resolves"),
    Topic.PROPOSALS: (Priority.NORMAL, "a proposal waiting for your approval"),
    Topic.TASKS: (Priority.NORMAL, "a project task assigned to a person, and a nudge when it is due"),
    Topic.READY: (Priority.LOW, "the note of a block named in `ready`, with its first lines"),
    Topic.QUESTIONS: (Priority.HIGH, "an agent asks you something and waits for the answer (with its choices)"),
    Topic.REMINDERS: (Priority.HIGH, "a reminder you set, at its time (`routine remind`, `(@2026-11-28 15:00)` on a "
                                     "task, \"remind me at 15:00 to …\" in a chat note)"),
    Topic.TRIALS: (Priority.LOW, "a change to an agent note the daemon tried that was not better (a better one "
                                 "comes as a proposal)"),
}
ALL = "all"  # `notify.on: all` (the default): every topic, those added later too


def topics(on: str | list[str]) -> frozenset[Topic]:
    """`notify.on` as written (the schema checked it): ``all``, or a list of topics."""
    return frozenset(Topic) if on == ALL else frozenset(Topic(t) for t in on)


def _string(description: str, default: str, pattern: str | None = None) -> dict[str, Any]:
    return {"type": "string", "description": description, "default": default, **({"pattern": pattern} if pattern
                                                                                     else {})}


class ChannelSettings:
    """A channel of its own (beside Apprise's URLs): its key under `notify:` (``KEY``), the schema of
    that key (``SCHEMA``: each setting's description and default, the only place they live), and
    the hosts it talks to (the unit's IP filter and `doctor` ask). Declared in ``CHANNELS``; its
    sender and receiver live in ``routine/person/channels/``."""

    KEY: ClassVar[str]
    DESCRIPTION: ClassVar[str]
    SCHEMA: ClassVar[dict[str, dict[str, Any]]]

    @property
    def on(self) -> bool:
        """Configured: messages go this way."""
        raise NotImplementedError

    @property
    def answers(self) -> bool:
        """The person's answers come back this way (routine subscribes)."""
        raise NotImplementedError

    @property
    def servers(self) -> tuple[str, ...]:
        raise NotImplementedError


@dataclass(frozen=True)
class NtfySettings(ChannelSettings):
    """`notify.ntfy`: messages published to a topic with action buttons; answers read from a reply
    topic routine subscribes to (an outbound connection: no port opened)."""

    server: str
    topic: str
    replies: str
    token: str

    KEY: ClassVar[str] = "ntfy"
    DESCRIPTION: ClassVar[str] = ("ntfy with buttons: each proposal carries Approve/Reject buttons that publish "
                                  "your answer to the `replies` topic, which routine subscribes to")
    SCHEMA: ClassVar[dict[str, dict[str, Any]]] = {
        "server": _string("the ntfy server, e.g. https://ntfy.sh or http://ntfy.lan", "https://ntfy.sh",
                          r"^https?://[^\s/]+(/.*)?$"),
        "topic": _string("the topic messages are published to (subscribe to it in the ntfy app); empty: off", "",
                         r"^[-_A-Za-z0-9]{0,64}$"),
        "replies": _string("the topic the buttons publish answers to, which routine subscribes to; a long random "
                           "name (anyone who knows it can post, but only routine's own signed answers are "
                           "applied); empty: no buttons", "", r"^[-_A-Za-z0-9]{0,64}$"),
        "token": _string("an ntfy access token (tk_…) for a server that needs one; empty: none", ""),
    }

    @property
    def on(self) -> bool:
        return bool(self.topic)

    @property
    def answers(self) -> bool:
        return bool(self.topic and self.replies)

    @property
    def servers(self) -> tuple[str, ...]:
        return tuple(h for h in [urlsplit(self.server).hostname] if h and self.on)


@dataclass(frozen=True)
class TelegramSettings(ChannelSettings):
    """`notify.telegram`: a bot's messages with inline buttons; answers (a button, or a reply typed
    to a message) read by long-polling `getUpdates`, from the configured chat only."""

    token: str
    chat: str
    api: str

    KEY: ClassVar[str] = "telegram"
    DESCRIPTION: ClassVar[str] = ("a Telegram bot with buttons: messages to your chat, answers from that chat only "
                                  "(a button, or a reply typed to a message)")
    SCHEMA: ClassVar[dict[str, dict[str, Any]]] = {
        "token": _string("the bot's token from @BotFather (123456:ABC…); empty: off", ""),
        "chat": {**_string("your chat's id (a number; the bot's messages go there and only its answers count)",
                           "", r"^(-?\d+)?$"), "type": ["string", "integer"]},
        "api": _string("the Bot API server", "https://api.telegram.org", r"^https?://[^\s/]+(/.*)?$"),
    }

    @property
    def on(self) -> bool:
        return bool(self.token and self.chat)

    @property
    def answers(self) -> bool:
        return self.on

    @property
    def servers(self) -> tuple[str, ...]:
        return tuple(h for h in [urlsplit(self.api).hostname] if h and self.on)


C = TypeVar("C", bound=ChannelSettings)

# Every channel of its own, by its key under `notify:` (the schema and the loader read it from here).
CHANNELS: dict[str, type[ChannelSettings]] = {c.KEY: c for c in (NtfySettings, TelegramSettings)}


@dataclass(frozen=True)
class NotifySettings:
    urls: tuple[str, ...] = ()
    on: frozenset[Topic] = frozenset()
    ready: tuple[str, ...] = ()  # blocks whose finished note is sent
    quiet: tuple[time, time] | None = None  # (from, to) local time; may wrap past midnight
    remind: timedelta | None = timedelta(days=1)  # a due task is nudged this long before its day; None: never
    channels: tuple[ChannelSettings, ...] = ()  # ntfy, Telegram … (CHANNELS), as read, on or off
    answer_within: timedelta = timedelta(days=3)  # how long a message's buttons stay good

    def wants(self, topic: Topic) -> bool:
        return bool(self.urls or self.active) and topic in self.on

    @property
    def active(self) -> tuple[ChannelSettings, ...]:
        """The channels of their own that are configured (messages go that way)."""
        return tuple(c for c in self.channels if c.on)

    @property
    def answers(self) -> bool:
        """Some channel brings the person's answers back (the daemon then listens)."""
        return any(c.answers for c in self.channels)

    def channel(self, kind: type[C]) -> C | None:
        """The settings of one kind of channel, as read."""
        return next((c for c in self.channels if isinstance(c, kind)), None)

    def is_quiet(self, local: time) -> bool:
        return self.quiet is not None and in_window(self.quiet, local)


def in_window(window: tuple[time, time], local: time) -> bool:
    """``local`` falls in the daily ``window`` (from, to), which may wrap past midnight."""
    start, end = window
    return start <= local < end if start <= end else (local >= start or local < end)


def quiet_hours(text: str) -> tuple[time, time] | None:
    """"22:00-07:00" → (22:00, 07:00); "" → None. The schema checked the form."""
    if not text:
        return None
    first, _, last = text.partition("-")
    return time.fromisoformat(first.strip()), time.fromisoformat(last.strip())


def remind_ahead(text: str) -> timedelta | None:
    """`remind:` as written ("1d", "off") → how long before a due day its nudge comes; None: never."""
    return None if text == "off" else parse_duration(text)
