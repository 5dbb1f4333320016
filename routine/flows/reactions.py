"""What a change of the vault means: ``on_vault_change(view, change)`` -> the reactions it calls for.

Pure: it reads the vault (a note's properties, a task line, a chat note's last turn) and decides;
it queues, writes and sends nothing. The daemon (``daemon/vault_events.py``) watches, hands each
settled change here and applies what comes back: each part of it subscribes to the reactions it
applies, by type (``vault_events.Reactions.subscribe``). A change routine made itself never gets
here: its own writes announce their bytes (``vault/atomic.py``), so the watcher reports no change.

The reactions, in the order they are applied:
- ``Decide``: a proposal in Drafts/ whose ``approved`` the person set;
- ``Answer``: a question note in Inbox/ whose ``answer:`` the person filled in;
- ``Fire``: a trigger whose ``on``, ``path`` glob and ``where`` match (``schedule/triggers.py``);
- ``Index``: the search index reads every change (a PDF too), ``Graph`` the knowledge graph every note's;
- a project's case file: ``Reload`` (a home note: its cadence follows), ``StaleQA`` (an artifact
  edited after its QA pass), ``TellPerson`` (a task line assigned to a person), ``LookForTasks`` (look
  for tasks assigned to agents), ``React`` (the manager reacts to a home note's edit, unless its
  `cadence: {react: off}`: ``projects.model.Project.reacts``);
- ``Chat`` / ``ChatGone``: a chat note, and whether the person's message waits for its answer;
- ``Reminders`` / ``ReminderAsk``: a note's task lines with a reminder stamp, a "remind me" in a chat.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Union

from routine.config.model import AgentSpec, Config
from routine.config.notify import NotifySettings, Topic
from routine.projects.assignees import tasks_for_people
from routine.projects.changed_note import read_changed_note
from routine.projects.model import project_folder_of
from routine.projects.tasks import Task
from routine.schedule.model import Trigger
from routine.schedule.triggers import matching
from routine.vault.approvals import read_proposal
from routine.vault.chat_notes import parse_chat
from routine.vault.files import read_text
from routine.vault.notes import load_note_text
from routine.vault.proposals import ProposalStatus
from routine.vault.question_notes import answer_in, is_question_note
from routine.watch.changes import Change

log = logging.getLogger("routine.daemon.vault_events")  # its lines are the daemon's

TITLE_CHARS = 160  # a person's task in a message's title
ASK_WORDS = ("remind me",)  # a chat message without these is not read for a reminder
STAMPS = ("(@", "⏰")  # a note without these (and no reminder of its lines waiting) is not read


@dataclass(frozen=True)
class View:
    """What a change is judged against: the configuration in force, and what the daemon remembers
    of earlier changes (chat notes seen outside the chats folder, notes holding a waiting reminder)."""

    config: Config
    agents: Mapping[str, AgentSpec]
    triggers: Sequence[Trigger]
    chats: frozenset[str] = frozenset()
    reminder_notes: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Decide:
    rel: str  # a proposal the person approved or rejected


@dataclass(frozen=True)
class Answer:
    rel: str  # the question note
    question: str  # the question's id
    answer: str


@dataclass(frozen=True)
class Fire:
    trigger: Trigger
    change: Change


@dataclass(frozen=True)
class Index:
    change: Change  # for the search index


@dataclass(frozen=True)
class Graph:
    change: Change  # for the knowledge graph


@dataclass(frozen=True)
class Reload:
    rel: str  # a project's home note: its cadence follows the edit


@dataclass(frozen=True)
class StaleQA:
    rel: str  # an artifact edited after it passed QA: `qa: needed` again


@dataclass(frozen=True)
class TellPerson:
    rel: str  # the note holding the task line
    key: str  # the message's key: once per task and person
    title: str
    body: str


@dataclass(frozen=True)
class LookForTasks:
    folder: str | None  # the project (or a loose task note's folder) whose agents' tasks are looked at


@dataclass(frozen=True)
class React:
    project: str  # the project's name
    slug: str
    manager: str  # the manager agent's name
    rel: str
    kind: str


@dataclass(frozen=True)
class Chat:
    rel: str
    agent: str
    pending: bool  # the person's message waits for its answer


@dataclass(frozen=True)
class ChatGone:
    rel: str  # no chat note (any more)


@dataclass(frozen=True)
class Reminders:
    rel: str
    text: str | None  # None: the note is gone, its reminders end


@dataclass(frozen=True)
class ReminderAsk:
    rel: str
    text: str  # a note that may be a chat whose new message asks for a reminder


Reaction = Union[Decide, Answer, Fire, Index, Graph, Reload, StaleQA, TellPerson, LookForTasks, React, Chat, ChatGone,
                 Reminders, ReminderAsk]


def on_vault_change(view: View, change: Change) -> list[Reaction]:
    """The reactions ``change`` calls for, in the order they are to be applied. A part that fails
    (a bug, a note no reader expected) is logged and the others still decide."""
    if not change.note:  # a PDF: only the search index reads it
        return [Index(change)]
    out: list[Reaction] = []
    for part in (_approvals, _triggers, _index, case_file, _chats, _graph, _reminders):
        try:
            out += part(view, change)
        except Exception:
            log.exception("what %s means for %s was not decided", change.rel, part.__name__.strip("_"))
    return out


def _index(view: View, change: Change) -> list[Reaction]:
    return [Index(change)]


def _graph(view: View, change: Change) -> list[Reaction]:
    return [Graph(change)]


def _approvals(view: View, change: Change) -> list[Reaction]:
    vault, rel = view.config.vault, change.rel
    out: list[Reaction] = []
    drafts = view.config.layout.drafts.strip("/") + "/"
    if change.kind in ("created", "modified", "moved") and rel.startswith(drafts):
        try:
            proposal = read_proposal(vault, rel)
        except (OSError, ValueError):
            proposal = None
        if proposal is not None and proposal.status is ProposalStatus.PROPOSED and proposal.approved is not None:
            out.append(Decide(rel))
    if change.kind == "modified" and is_question_note(rel):
        found = answer_in(vault, rel)
        if found is not None:
            out.append(Answer(rel, found[0], found[1]))
    return out


def _triggers(view: View, change: Change) -> list[Reaction]:
    return [Fire(t, change) for t in matching(view.config.vault, view.triggers, change.kind, change.rel)]


def case_file(view: View, change: Change) -> list[Reaction]:
    """A project's case file changed (or a loose note an agent's `tasks:` names): what the note is to
    the projects is read once (``projects.changed_note``), and decided from that value alone."""
    note = read_changed_note(view.config, view.agents, change)
    out: list[Reaction] = [Reload(note.rel)] if note.home else []
    if note.stale_qa:
        out.append(StaleQA(note.rel))
    out += _told(view.config.notify, note.rel, note.folder, note.people_tasks)
    out += [LookForTasks(folder) for folder in note.look_in]
    if note.project is not None and note.manager is not None:  # a home note whose manager reacts
        out.append(React(note.project.name, note.project.slug, note.manager.name, note.rel, change.kind))
    return out


def persons_tasks(config: Config, rel: str) -> list[TellPerson]:
    """Each open task of ``rel`` assigned to a person (``projects.assignees.tasks_for_people``), as a
    message for them (when `notify:` wants tasks)."""
    return _told(config.notify, rel, project_folder_of(rel), tasks_for_people(config.vault, rel))


def _told(notify: NotifySettings, rel: str, folder: str | None, tasks: Sequence[tuple[str, Task]]) -> list[TellPerson]:
    """A message for each person a task of ``rel`` is assigned to, when `notify:` wants tasks."""
    if not notify.wants(Topic.TASKS):
        return []
    out: list[TellPerson] = []
    for person, task in tasks:
        digest = hashlib.sha1(f"{person}|{task.text}".encode()).hexdigest()[:16]
        text = task.text if len(task.text) <= TITLE_CHARS else task.text[:TITLE_CHARS] + "…"
        due = f" (due {task.due})" if task.due else ""
        out.append(TellPerson(rel, f"task:{rel}:{digest}", f"Task for {person}: {text}",
                              f"In {rel}, project {folder or rel}{due}."))
    return out


def _chats(view: View, change: Change) -> list[Reaction]:
    rel = change.rel
    gone: list[Reaction] = [ChatGone(rel)] if rel in view.chats else []
    if change.kind == "deleted" or not rel.endswith(".md"):
        return gone
    try:
        current = load_note_text(view.config.vault / rel)
    except OSError:
        return []
    note = None if current is None else parse_chat(rel, current.text)
    if note is None or note.agent is None:
        return gone
    return [Chat(rel, note.agent, note.pending() is not None)]


def _reminders(view: View, change: Change) -> list[Reaction]:
    """A note's task lines add or cancel reminders; a chat note's new message may ask for one."""
    rel = change.rel
    if not rel.endswith(".md"):
        return []
    out: list[Reaction] = []
    if change.kind == "moved" and change.src and change.src in view.reminder_notes:
        out.append(Reminders(change.src, None))
    if change.kind == "deleted":
        return out + ([Reminders(rel, None)] if rel in view.reminder_notes else [])
    try:
        text = read_text(view.config.vault / rel)
    except OSError:
        return out
    if any(stamp in text for stamp in STAMPS) or rel in view.reminder_notes:
        out.append(Reminders(rel, text))
    if any(words in text.lower() for words in ASK_WORDS):
        out.append(ReminderAsk(rel, text))
    return out
