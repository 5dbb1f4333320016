"""Chat notes in the running daemon: a person's new message, once the note is quiet, gets one answer.

Listens to the vault watcher like the search index does. A settled change of a note with a
``chat:`` property whose last turn is the person's becomes one job in the work queue (keyed by
the note, so two answers to one note never run at once, and a save while one waits adds
nothing). routine's own append announces its bytes (``vault/atomic.py``), so it is never a
change: no answer to an answer, no loop. Chat notes settle after ``chat.quiet`` (default 3 s)
rather than the usual 0.4 s, since Obsidian saves every few seconds while the person types.
"""

from __future__ import annotations

import logging
from functools import partial

from routine.chat.notes import answer_note, read_chat
from routine.daemon.ports import Jobs
from routine.daemon.work import Work
from routine.errors import RoutineError
from routine.journal import Journal
from routine.person.alerts import raise_alert
from routine.watch.changes import Change

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

    def on_change(self, change: Change) -> None:
        if change.kind == "deleted" or not change.rel.endswith(".md"):
            self.known.discard(change.rel)
            return

        try:
            note = read_chat(self.jobs.live.config.vault, change.rel)
        except OSError:
            return
        if note is None or note.agent is None:
            self.known.discard(change.rel)
            return
        self.known.add(change.rel)
        if note.pending() is None:
            return
        work = Work(key=f"chat:{change.rel}", label=f"answer {change.rel}", run=partial(self.answer, change.rel),
                    models=self.jobs.model_keys([note.agent]))
        if self.jobs.queue.submit(work, coalesce=True):
            log.info("chat note %s: a new message for %s", change.rel, note.agent)

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
