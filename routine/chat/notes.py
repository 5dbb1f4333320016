"""A chat note answered: the person's last message, read as the note now stands, gets one answer.

Called by the daemon when a chat note settles after a save (``routine.daemon.chat_notes``). Only
the person's conversation is answered: a note the person made, or `routine chat new` made at their
command, that no agent has written into (``routine.vault.provenance.is_persons_chat``). The
conversation is what the note says: its turns (edited or deleted ones as they are now), its
summary callout and ``summary_covers``. The answer goes in through the vault layer
(``routine.vault.chat_notes.append_answer``): atomic, and redone if the person saved meanwhile.
"""

from __future__ import annotations

import logging
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from routine.chat.conversation import Conversation, History
from routine.chat.fold import Turn
from routine.chat.sessions import answer_logged
from routine.errors import RoutineError, UsageError
from routine.journal.chats import ChatStore, Origin
from routine.journal.timed_reminders import ReminderLog
from routine.schedule.timed_reminders import acknowledged, asked_in_chat
from routine.vault.chat_notes import ChatNote, answer_callout, append_answer, parse_chat
from routine.vault.notes import load_note_text
from routine.vault.provenance import is_persons_chat

if TYPE_CHECKING:
    from routine.config.model import AgentSpec
    from routine.journal import Journal
    from routine.runner.step import Runner


log = logging.getLogger(__name__)


@dataclass(frozen=True)
class NoteAnswer:
    chat: str
    rel: str
    agent: str
    sources: list[str]
    folded: int


def read_chat(vault: Path, rel: str) -> ChatNote | None:
    current = load_note_text(vault / rel)
    return None if current is None else parse_chat(rel, current.text)


def answer_note(runner: Runner, journal: Journal, agents: dict[str, AgentSpec], rel: str) -> NoteAnswer | None:
    """Answer the chat note's pending message; None when it has none (or is no chat note)."""
    vault = runner.config.vault
    note = read_chat(vault, rel)
    if note is None or note.agent is None:
        return None
    pending = note.pending()
    if pending is None:
        return None
    agent = agents.get(note.agent)
    if agent is None:
        raise UsageError(f"The chat note {rel} talks to `{note.agent}`, and there is no such agent.",
                         f"set its `chat:` property to one of: {', '.join(sorted(agents))}.")
    store = ChatStore(journal.db)
    if not is_persons_chat(note.properties, store.made_by_command(rel)):
        raise UsageError(f"The chat note {rel} was written by an agent (it carries routine's marks), so its text is "
                         "not the person's and it is not answered.",
                         f"start a conversation of your own: `routine chat new {agent.name}`, or a note you "
                         "create yourself with a `chat:` property.")
    chat_id = store.for_note(rel) or store.create(agent.name, Origin.NOTE, note.title, rel, at=runner.clock())
    history = History([Turn(t.role, t.text) for t in note.turns[:-1]], note.summary, note.covers)
    conversation = Conversation(runner, agent)
    reminded = _reminders_set(runner, journal, rel, pending.text)
    reply = answer_logged(store, chat_id, conversation, history, pending.text, said_too=reminded)
    callout = answer_callout(agent.name, runner.clock(), reply.text, reply.sources)
    with runner.write_gate():
        append_answer(vault, rel, pending.raw, callout, (reply.summary, reply.covers) if reply.folded else None)
    return NoteAnswer(chat_id, rel, agent.name, reply.sources, reply.folded)


def _reminders_set(runner: Runner, journal: Journal, rel: str, message: str) -> tuple[str, ...]:
    """The reminders the person's message asks for ("remind me at 15:00 to call Priya"), set now if
    the vault watcher has not set them yet (once per message: ``schedule.timed_reminders``), each
    said in one line at the end of the answer, so the person sees it was understood."""
    zone = ZoneInfo(runner.config.zone_name())
    try:
        found = asked_in_chat(ReminderLog(journal.db), rel, message, runner.clock(), zone)
    except (sqlite3.Error, RoutineError) as exc:  # the answer still comes; the watcher's reading logs it too
        log.error("the reminders asked for in %s not read: %s", rel, exc)
        return ()
    return tuple(acknowledged(reminder, zone) for reminder, _new in found)
