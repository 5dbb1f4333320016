"""The person's answers, read while the daemon runs: one supervised reader per channel that
brings answers back (ntfy's stream, Telegram's long poll: ``routine.person.channels``), each a
blocking read on an outbound connection. What arrives is checked where it arrives
(``flows.answers.take``: cheap, so a flood of forgeries is refused, counted and costs little) and
an answer taken is applied as work in the one queue (``flows.answers.apply``: the approval path),
then confirmed with one short message. Nothing runs when no channel brings answers back; a reload
that changes the channels starts their readers again."""

from __future__ import annotations

import logging
import threading
import time
from functools import partial
from typing import TYPE_CHECKING, Protocol

from routine.config.notify import ChannelSettings, Topic
from routine.daemon.work import Work
from routine.flows.answers import Answer, Context, Refused, apply, take
from routine.host import supervise
from routine.journal import Journal
from routine.journal.answers import AnswerBook
from routine.person.alerts import raise_alert, resolve_alerts
from routine.person.channels import answering
from routine.person.channels.base import Channel, Incoming
from routine.person.notifications import Message, notify

if TYPE_CHECKING:
    from datetime import datetime

    from routine.daemon.live import Live
    from routine.daemon.work import WorkQueue

log = logging.getLogger("routine.notify")

SAY_EVERY = 60.0  # refusals are logged once per reason, then at most this often with a count


class Host(Protocol):
    @property
    def live(self) -> Live: ...
    @property
    def queue(self) -> WorkQueue: ...
    def now_local(self) -> datetime: ...


class Replies:
    def __init__(self, host: Host):
        self.host = host
        self.readers: list[tuple[Channel, threading.Event]] = []
        self.settings: tuple[ChannelSettings, ...] = ()
        self.journal: Journal | None = None
        self.lock = threading.Lock()  # one answer checked at a time (a ticket is spent once)
        self.said: dict[str, tuple[float, int]] = {}  # reason -> (when last logged, refusals since)

    def start(self) -> None:
        notify_settings = self.host.live.config.notify
        self.settings = tuple(c for c in notify_settings.active if c.answers)
        if not self.settings:
            return  # no channel brings answers back: nothing runs, nothing is opened
        self.journal = Journal()
        book = AnswerBook(self.journal.db)
        for channel in answering(notify_settings):
            stop = threading.Event()
            supervise.start(f"answers by {channel.name}", partial(channel.receive, stop, self.deliver,
                                                                  book.cursor(channel.name),
                                                                  partial(self.trouble, channel.name)), stop)
            self.readers.append((channel, stop))
            log.info("reading answers by %s", channel.name)

    def stop(self) -> None:
        for channel, stop in self.readers:
            stop.set()
            channel.interrupt()
        self.readers = []
        with self.lock:
            if self.journal is not None:
                self.journal.close()
                self.journal = None

    def reconfigure(self) -> None:
        """After a reload: the readers again when the channels that answer changed."""
        if tuple(c for c in self.host.live.config.notify.active if c.answers) != self.settings:
            self.stop()
            self.start()

    def trouble(self, name: str, error: str | None) -> None:
        """A reader that cannot read for a while is an alert (one per channel); reading again resolves it."""
        config, now = self.host.live.config, self.host.now_local()
        cause = f"answers-{name}"
        if error is None:
            resolve_alerts(config, now, cause, f"routine reads answers by {name} again.")
            return
        raise_alert(config, now, f"answers by {name} not read", f"Your answers by {name} are not read: {error}. "
                    "Buttons pressed meanwhile are read once it works again.",
                    f"check `notify.{name}` in {config.path} and that the server answers (`routine doctor`).",
                    cause=cause)

    def deliver(self, incoming: Incoming) -> str:
        """One arrival: refused here, or taken and queued; the sentence the phone may show."""
        with self.lock:
            if self.journal is None:
                return "routine is stopping; try again in a moment."
            outcome = take(self.journal.db, incoming, self.host.now_local())
        if isinstance(outcome, Refused):
            self._say(outcome, incoming)
            return outcome.sentence
        answer = outcome.answer
        log.info("answer by %s taken: %s %s", incoming.channel, answer.kind, answer.subject)
        try:
            self.host.queue.submit(Work(key=f"answer:{answer.ticket}", label=f"{answer.kind} {answer.subject}",
                                        run=partial(self.carry_out, answer)))
        except RuntimeError:  # stopping: the ticket is spent, the person decides in Obsidian instead
            return "routine is stopping; decide it in Obsidian."
        return outcome.sentence

    def carry_out(self, answer: Answer) -> None:
        live, journal = self.host.live, Journal()
        try:
            now = self.host.now_local()
            handled = apply(Context(live.config, live.agents, journal, now), answer)
            topic = Topic.of(AnswerBook(journal.db).topic_of(answer.ticket), Topic.PROPOSALS)
        finally:
            journal.close()
        log.info("answer %s %s: %s", answer.kind, answer.subject, handled.sentence)
        notify(live.config, Message(topic, f"answered:{answer.ticket}", f"{answer.kind.value.capitalize()}: "
                                    f"{answer.subject.rsplit('/', 1)[-1]}", handled.sentence), now)

    def _say(self, refused: Refused, incoming: Incoming) -> None:
        """A refusal in the log: the first of its kind at once, then a count at most once a minute."""
        when, since = self.said.get(refused.reason.value, (0.0, 0))
        now = time.monotonic()
        if now - when >= SAY_EVERY:
            more = f" ({since} more refused for this reason since)" if since else ""
            log.warning("answer by %s from %s refused: %s%s", incoming.channel, incoming.origin or "?",
                        refused.sentence, more)
            self.said[refused.reason.value] = (now, 0)
        else:
            self.said[refused.reason.value] = (when, since + 1)
