"""A question to the person as an ``Inbox/`` note (issue 45): its own note, routine's provenance
properties, the question, its choices, its deadline. The person answers in the note by setting
the property ``answer:`` (one of the choices, or free text) or by typing below the line
``## Your answer``; the daemon's vault watcher reads it (``answer_in``) and hands it to
``routine.flows.questions.answer_question``. Once settled, the note says how it was answered.

The answer read here is data: it is given to the resumed step as a value, never as a template.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from routine.jsonvalue import Parsed
from routine.vault.atomic import NoteChanged, atomic_create, atomic_write
from routine.vault.bookkeeping import Provenance, new_note_properties
from routine.vault.frontmatter import FlowList, join_frontmatter, split_frontmatter
from routine.vault.notes import load_note_text, read_note
from routine.vault.provenance import QUESTION_TAG, QUESTIONS_FOLDER, is_question_note

__all__ = ["QUESTIONS_FOLDER", "QuestionNote", "answer_in", "is_question_note", "mark_settled", "write_question"]

FOLDER = QUESTIONS_FOLDER
ID_PROPERTY = "question"  # the question's id, which the watcher looks up in the journal
ANSWER_PROPERTY = "answer"
MARKER = "## Your answer"
QUIET_SECONDS = 3.0  # a question note must be still this long before its answer counts (typing saves often)
MAX_ANSWER_CHARS = 2000  # a typed answer longer than this is cut (it is a reply, not a note)


@dataclass(frozen=True)
class QuestionNote:
    """What the note shows: the journal's question, as the person reads it."""

    id: str
    agent: str
    block: str
    question: str
    choices: tuple[str, ...]
    deadline: str  # local, as the person reads it
    at_deadline: str  # "the answer *x* is taken" / "the block is skipped"


def note_path(qid: str) -> str:
    return f"{FOLDER}/Question {qid}.md"


def write_question(vault: Path, note: QuestionNote, prov: Provenance) -> str:
    """Create the note (never over another); its path."""
    rel = note_path(note.id)
    given: Parsed = {ID_PROPERTY: note.id, ANSWER_PROPERTY: "", "state": "open",
                     "tags": FlowList([QUESTION_TAG])}
    if note.choices:
        given["choices"] = FlowList(list(note.choices))
    properties = new_note_properties(prov, given, rel)
    choices = "".join(f"- {c}\n" for c in note.choices)
    how = ("Set the property `answer:` to one of the choices" if note.choices
           else "Set the property `answer:` to your answer") + f", or type it below *{MARKER[3:]}*, or run " \
        f"`routine answer {note.id} TEXT`."
    body = (f"# {note.question}\n\n{note.agent} asks (block {note.block}); it waits for you until "
            f"{note.deadline}, then {note.at_deadline}.\n\n" + (f"Choices:\n{choices}\n" if choices else "")
            + f"{how}\n\n{MARKER}\n\n")
    (vault / FOLDER).mkdir(parents=True, exist_ok=True)
    atomic_create(vault / rel, join_frontmatter(properties, body))
    return rel


def answer_in(vault: Path, rel: str) -> tuple[str, str] | None:
    """(the question's id, the answer) the person gave in the note, or None (no answer yet, not a
    question note, unreadable)."""
    try:
        note = read_note(vault, rel)
    except (OSError, ValueError):
        return None
    qid = note.frontmatter.get(ID_PROPERTY)
    if not isinstance(qid, str) or str(note.frontmatter.get("state") or "open") != "open":
        return None
    given = note.frontmatter.get(ANSWER_PROPERTY)
    text = str(given).strip() if given is not None and not isinstance(given, (dict, list)) else ""
    if not text:
        _, _, below = note.body.partition(MARKER)
        text = below.strip()
    return (qid, text[:MAX_ANSWER_CHARS]) if text else None


def mark_settled(vault: Path, rel: str, state: str, answer: str | None, origin: str, at: datetime) -> bool:
    """The note says how the question was settled (``state``: answered, expired); False when it is
    gone or changed while being rewritten (it is then left as the person has it)."""
    path = vault / rel
    try:
        current = load_note_text(path)
        if current is None:
            return False
        data, body = split_frontmatter(current.text)
        updates: Parsed = {"state": state, ANSWER_PROPERTY: answer or "", "answered_by": origin,
                           "answered_at": at.isoformat(timespec="minutes")}
        atomic_write(path, current.encode_like(join_frontmatter({**data, **updates}, body)), expected=current.raw)
        return True
    except (OSError, NoteChanged):
        return False
