"""Chat sessions in the run journal: a conversation and each of its messages, in order.

A session is a terminal conversation (`routine chat`, `routine ask`) or a chat note in the vault
(then the note is the truth and the journal its log). Every message keeps its role, tokens, model
and timings; every tool call its arguments and result.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from typing import TYPE_CHECKING, Any, TypedDict

from routine.journal.stamps import utc_millis

if TYPE_CHECKING:
    from routine.vault.context_items import Dropped


class Role(str, Enum):
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"
    SUMMARY = "summary"  # the running summary, after the oldest turns were folded into it


class Origin(str, Enum):
    TERMINAL = "terminal"
    NOTE = "note"
    COMMAND = "new"  # a chat note `routine chat new` made at the person's command (recorded as it is made)


class ChatDetails(TypedDict, total=False):
    """What a chat message keeps besides its text (the ``details`` column, JSON)."""

    sources: list[str]          # an answer: the notes placed in its context
    counted: int                # an answer: its first request's tokens, as counted
    limit: int                  # an answer: the context window it was counted against
    dropped: list[Dropped]      # an answer: the context left out, with reasons
    rejected: list[str]         # an answer: why earlier replies were not used
    covers: int                 # a summary: the turns it stands for
    folded: int                 # a summary: the turns folded into it for this answer
    unanswered: bool            # a question the model did not answer
    error: str                  # why it was not answered
    turn: int                   # a tool call: the loop's turn
    refused: bool               # a tool call refused
    from_note: str              # a turn taken from a chat note (its path)


@dataclass
class ChatMessage:
    role: Role
    content: str = ""
    tokens: int | None = None
    model: str | None = None
    duration_ms: int | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    tool: str | None = None
    arguments: object = None
    result: str | None = None
    details: ChatDetails = field(default_factory=lambda: ChatDetails())
    at: str = ""

    def as_dict(self) -> dict[str, object]:
        return {k: (v.value if isinstance(v, Enum) else v) for k, v in self.__dict__.items()
                if v not in (None, {}, "") or k in ("role", "content")}


@dataclass
class Chat:
    id: str
    agent: str
    origin: Origin
    title: str | None
    note: str | None
    created_at: str
    updated_at: str
    summary: str = ""
    folded: int = 0
    messages: list[ChatMessage] = field(default_factory=list)

    def as_dict(self, with_messages: bool = True) -> dict[str, object]:
        out: dict[str, object] = {"id": self.id, "agent": self.agent, "origin": self.origin.value, "title": self.title,
               "note": self.note, "created_at": self.created_at, "updated_at": self.updated_at,
               "summary": self.summary, "folded": self.folded}
        if with_messages:
            out["messages"] = [m.as_dict() for m in self.messages]
        return out


def new_chat_id(now: datetime | None = None) -> str:
    now = now or datetime.now().astimezone()
    return f"c{now.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"


class ChatStore:
    def __init__(self, db: sqlite3.Connection):
        self.db = db

    def create(self, agent: str, origin: Origin, title: str | None = None, note: str | None = None,
               at: datetime | None = None) -> str:
        """A new conversation; its id names ``at``, the person's local time (the machine's when not given)."""
        chat_id, now = new_chat_id(at), utc_millis()
        self.db.execute("INSERT INTO chats (id, agent, origin, title, note, created_at, updated_at)"
                        " VALUES (?,?,?,?,?,?,?)", (chat_id, agent, origin.value, title, note, now, now))
        return chat_id

    def for_note(self, rel: str) -> str | None:
        row = self.db.execute("SELECT id FROM chats WHERE note=? ORDER BY created_at DESC LIMIT 1", (rel,)).fetchone()
        return row[0] if row else None

    def made_by_command(self, rel: str) -> bool:
        """Did `routine chat new` make the chat note at ``rel`` (``Origin.COMMAND``)? A note answered
        before that was recorded (``Origin.NOTE``, a version that did not record it) counts too."""
        return self.db.execute("SELECT 1 FROM chats WHERE note=? AND origin IN (?, ?) LIMIT 1",
                               (rel, Origin.COMMAND.value, Origin.NOTE.value)).fetchone() is not None

    def latest(self, agent: str, origin: Origin = Origin.TERMINAL) -> str | None:
        row = self.db.execute("SELECT id FROM chats WHERE agent=? AND origin=? ORDER BY updated_at DESC, id DESC"
                              " LIMIT 1", (agent, origin.value)).fetchone()
        return row[0] if row else None

    def add(self, chat_id: str, message: ChatMessage) -> int:
        """Journal ``message``; its id (a memory entry learned from it is keyed by it)."""
        now = utc_millis()
        args = message.arguments
        cursor = self.db.execute(
            "INSERT INTO chat_messages (chat, at, role, content, tokens, model, duration_ms, tokens_in, tokens_out,"
            " tool, arguments, result, details) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (chat_id, now, Role(message.role).value, message.content or "", message.tokens, message.model,
             message.duration_ms, message.tokens_in, message.tokens_out, message.tool,
             None if args is None else json.dumps(args, ensure_ascii=False, default=str), message.result,
             json.dumps(message.details, ensure_ascii=False, default=str) if message.details else None))
        self.db.execute("UPDATE chats SET updated_at=? WHERE id=?", (now, chat_id))
        return int(cursor.lastrowid or 0)

    def set_summary(self, chat_id: str, summary: str, folded: int) -> None:
        self.db.execute("UPDATE chats SET summary=?, folded=? WHERE id=?", (summary, folded, chat_id))

    def get(self, chat_id: str) -> Chat | None:
        row = self.db.execute("SELECT * FROM chats WHERE id=?", (chat_id,)).fetchone()
        if row is None:  # a unique prefix, as with run ids
            rows = self.db.execute("SELECT * FROM chats WHERE id LIKE ? LIMIT 2", (chat_id + "%",)).fetchall()
            row = rows[0] if len(rows) == 1 else None
        if row is None:
            return None
        chat = _chat(row)
        chat.messages = [_message(r) for r in self.db.execute(
            "SELECT * FROM chat_messages WHERE chat=? ORDER BY id", (chat.id,))]
        return chat

    def recent(self, limit: int = 20) -> list[dict[str, object]]:
        rows = self.db.execute(
            "SELECT c.*, (SELECT COUNT(*) FROM chat_messages m WHERE m.chat=c.id AND m.role IN ('user','assistant'))"
            " AS messages FROM chats c ORDER BY updated_at DESC, id DESC LIMIT ?", (limit,))
        return [{**_chat(r).as_dict(with_messages=False), "messages": r["messages"]} for r in rows]


def _chat(row: sqlite3.Row) -> Chat:
    return Chat(id=row["id"], agent=row["agent"], origin=Origin(row["origin"]), title=row["title"], note=row["note"],
                created_at=row["created_at"], updated_at=row["updated_at"], summary=row["summary"] or "",
                folded=row["folded"] or 0)


def _message(row: sqlite3.Row) -> ChatMessage:
    def loads(value: str | None) -> Any:  # the JSON stored, or the text when it is not JSON
        if value is None:
            return None
        try:
            return json.loads(value)
        except ValueError:
            return value

    return ChatMessage(role=Role(row["role"]), content=row["content"], tokens=row["tokens"], model=row["model"],
                       duration_ms=row["duration_ms"], tokens_in=row["tokens_in"], tokens_out=row["tokens_out"],
                       tool=row["tool"], arguments=loads(row["arguments"]), result=row["result"],
                       details=loads(row["details"]) or ChatDetails(), at=row["at"])
