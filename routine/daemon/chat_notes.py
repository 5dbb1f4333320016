"""Chat notes in the running daemon: a person's new message, once the note is quiet, gets one answer.

``flows/reactions.py`` reads a settled change of a note (``Chat``); one with a
``chat:`` property whose last turn is the person's becomes one job in the work queue (keyed by
the note, so two answers to one note never run at once, and a save while one waits adds
nothing). routine's own append announces its bytes (``vault/atomic.py``), so it is never a
change: no answer to an answer, no loop. Chat notes settle after ``chat.quiet`` (default 3 s)
rather than the usual 0.4 s, since Obsidian saves every few seconds while the person types.
"""

from __future__ import annotations

import logging
from functools import partial
from typing import TYPE_CHECKING

from routine.chat.notes import answer_note
from routine.daemon.ports import Jobs
from routine.daemon.work import Work
from routine.errors import RoutineError
from routine.flows.reactions import Chat, ChatGone
from routine.journal import Journal
from routine.person.alerts import raise_alert

if TYPE_CHECKING:
    from routine.daemon.subscriptions import Reactions

log = logging.getLogger(__name__)


class ChatNotes:
    def __init__(self, jobs: Jobs):
        self.jobs = jobs
        self.known: set[str] = set()  # chat notes seen outside the chats folder

    def is_chat(self, rel: str) -> bool:
        folder = self.jobs.live.config.layout.chats.strip("/") + "/"
        return rel.startswith(folder) or rel in self.known

    def quiet_for(self, rel: str) -> float | None:
        return self.jobs.live.config.chat_quiet if self.is_chat(rel) else None

    def subscribe(self, reactions: Reactions) -> None:
        reactions.subscribe(self._seen, Chat)
        reactions.subscribe(lambda gone: self.known.discard(gone.rel), ChatGone)

    def _seen(self, chat: Chat) -> None:
        """A chat note changed (``flows/reactions.py`` read it): a message that waits is answered."""
        self.known.add(chat.rel)
        if not chat.pending:
            return
        work = Work(key=f"chat:{chat.rel}", label=f"answer {chat.rel}", run=partial(self.answer, chat.rel),
                    models=self.jobs.model_keys([chat.agent]))
        if self.jobs.queue.submit(work, coalesce=True):
            log.info("chat note %s: a new message for %s", chat.rel, chat.agent)

    def answer(self, rel: str) -> None:
        journal = Journal()
        try:
            runner = self.jobs.make_runner(journal)
            done = answer_note(runner, journal, self.jobs.live.agents, rel)
            if done is not None:
                log.info("%s answered in %s (conversation %s)", done.agent, rel, done.chat)
        except RoutineError as exc:
            log.error("chat note %s not answered: %s", rel, exc)
            raise_alert(self.jobs.live.config, self.jobs.now_local(), "chat not answered",
                        f"The message at the end of [[{rel[:-3]}]] got no answer: {exc.message}",
                        (exc.fix or "") + " Save the note again to ask once more.")
        finally:
            journal.close()
