"""Questions a block's step asked the person (table ``questions``, migration ``034_questions``).

A question is ``open`` until it is answered (by the person, or by its default at the deadline) or
``expired`` (the deadline passed with no default). The transition out of ``open`` is one
``UPDATE … WHERE state='open'``: of two answers racing (the phone and the note), one wins and
the other is refused. ``resumed_at`` says the waiting block run was picked up with the answer; an
answer given while no daemon ran is resumed by the daemon at its start (``unresumed``).
"""

from __future__ import annotations

import json
import secrets
import sqlite3
from dataclasses import dataclass
from datetime import datetime
from enum import Enum

from routine.journal.stamps import utc_seconds
from routine.jsonvalue import Parsed


class QuestionState(str, Enum):
    OPEN = "open"
    ANSWERED = "answered"
    EXPIRED = "expired"  # the deadline passed and there was no default: the run ended `skipped: no answer`

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Question:
    id: str
    run: str  # the block run that waits
    step_run: str  # the step run that asked
    block: str
    step: int
    agent: str
    question: str
    choices: tuple[str, ...]
    deadline: datetime  # aware
    default: str | None
    note: str | None
    state: QuestionState
    answer: str | None = None
    origin: str | None = None
    asked_at: datetime | None = None
    answered_at: datetime | None = None
    resumed_at: datetime | None = None

    @classmethod
    def from_row(cls, row: sqlite3.Row | Parsed) -> "Question":
        r = dict(row)
        return cls(id=r["id"], run=r["run"], step_run=r["step_run"], block=r["block"], step=int(r["step"]),
                   agent=r["agent"], question=r["question"], choices=tuple(json.loads(r["choices"] or "[]")),
                   deadline=datetime.fromisoformat(r["deadline"]), default=r["default_answer"], note=r["note"],
                   state=QuestionState(r["state"]), answer=r["answer"], origin=r["origin"],
                   asked_at=_when(r["asked_at"]), answered_at=_when(r["answered_at"]),
                   resumed_at=_when(r["resumed_at"]))

    def as_dict(self) -> dict[str, object]:
        """As `routine status --json` and `routine answer --json` show it."""
        return {"id": self.id, "run": self.run, "block": self.block, "step": self.step, "agent": self.agent,
                "question": self.question, "choices": list(self.choices), "deadline": self.deadline.isoformat(),
                "default": self.default, "note": self.note, "state": self.state.value, "answer": self.answer,
                "origin": self.origin}


def _when(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text) if text else None


def new_question_id() -> str:
    """Short enough to type on a phone or a terminal: q-7f3a9c."""
    return f"q-{secrets.token_hex(3)}"


class Questions:
    def __init__(self, db: sqlite3.Connection):
        self.db = db

    def add(self, *, run: str, step_run: str, block: str, step: int, agent: str, question: str,
            choices: tuple[str, ...], deadline: datetime, default: str | None, now: datetime) -> str:
        for _ in range(5):
            qid = new_question_id()
            try:
                self.db.execute(
                    "INSERT INTO questions (id, run, step_run, block, step, agent, question, choices, deadline,"
                    " default_answer, state, asked_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                    (qid, run, step_run, block, step, agent, question, json.dumps(list(choices), ensure_ascii=False),
                     utc_seconds(deadline), default, QuestionState.OPEN.value, utc_seconds(now)))
                return qid
            except sqlite3.IntegrityError:
                continue
        raise RuntimeError("no free question id after five draws")

    def set_note(self, qid: str, note: str) -> None:
        self.db.execute("UPDATE questions SET note=? WHERE id=?", (note, qid))

    def get(self, qid: str) -> Question | None:
        row = self.db.execute("SELECT * FROM questions WHERE id=?", (qid.strip(),)).fetchone()
        return Question.from_row(row) if row else None

    def of_note(self, note: str) -> Question | None:
        row = self.db.execute("SELECT * FROM questions WHERE note=? ORDER BY asked_at DESC LIMIT 1", (note,)).fetchone()
        return Question.from_row(row) if row else None

    def open(self) -> list[Question]:
        """Every question still waiting for the person, the soonest deadline first."""
        rows = self.db.execute("SELECT * FROM questions WHERE state='open' ORDER BY deadline, id")
        return [Question.from_row(r) for r in rows]

    def unresumed(self) -> list[Question]:
        """Answered, but the block run has not been picked up yet (answered while no daemon ran)."""
        rows = self.db.execute("SELECT * FROM questions WHERE state='answered' AND resumed_at IS NULL"
                               " ORDER BY answered_at")
        return [Question.from_row(r) for r in rows]

    def answered_for(self, run: str) -> Question | None:
        """The latest answered question of block run ``run`` (what its steps from that one on are given)."""
        row = self.db.execute("SELECT * FROM questions WHERE run=? AND state='answered' ORDER BY answered_at DESC"
                              " LIMIT 1", (run,)).fetchone()
        return Question.from_row(row) if row else None

    def settle(self, qid: str, state: QuestionState, answer: str | None, origin: str, now: datetime) -> bool:
        """Out of ``open``, once: False when it was not open any more (another answer came first)."""
        cur = self.db.execute("UPDATE questions SET state=?, answer=?, origin=?, answered_at=?"
                              " WHERE id=? AND state='open'", (state.value, answer, origin, utc_seconds(now), qid))
        return cur.rowcount == 1

    def resumed(self, qid: str, now: datetime) -> bool:
        """Mark the block run picked up; False when another thread picked it up first."""
        cur = self.db.execute("UPDATE questions SET resumed_at=? WHERE id=? AND resumed_at IS NULL",
                              (utc_seconds(now), qid))
        return cur.rowcount == 1
