"""The person's answers in the run journal: the tickets routine minted for messages that carry
choices (``answer_tickets``: one per message, single use, with an end), which channel message
holds which ticket (``answer_refs``: a typed reply names the message), and every answer that
arrived (``answers``: taken or refused, and why; the refused kept to the newest ``KEEP_REFUSED``)
with running counts (``answer_counts``), which `routine notify list` shows."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from datetime import datetime
from enum import Enum

from routine.journal.stamps import utc_seconds
from routine.redact import redact_text

KEEP_REFUSED = 200  # refused answers kept to show; the counts keep every one


class Refusal(str, Enum):
    """Why an answer was not applied (its sentence is ``routine.flows.answers``'s)."""

    FORGED = "forged"  # the token's signature is not routine's
    UNKNOWN = "unknown"  # signed, but no message of this journal carries it
    EXPIRED = "expired"
    REPLAYED = "replayed"  # the message was answered before
    FOREIGN = "foreign"  # from another chat
    EDITED = "edited"  # the proposal was edited after it was sent
    DECIDED = "decided"  # the proposal was decided (or removed) meanwhile
    UNREADABLE = "unreadable"  # no token, and no reply to one of routine's messages
    UNHANDLED = "unhandled"  # no handler for this kind of answer yet

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Ticket:
    id: str
    message: str  # the notification's key
    subject: str  # what the answer is about: a proposal's path, a question's or reminder's id
    choices: tuple[tuple[str, str, str], ...]  # (kind, label, value) per button
    bound: str | None  # the subject's content when sent (a proposal's fingerprint)
    expires: datetime
    used_at: str | None


class AnswerBook:
    def __init__(self, db: sqlite3.Connection):
        self.db = db

    # --- tickets -------------------------------------------------------------------------------

    def mint(self, ticket: Ticket, now: datetime) -> None:
        self.db.execute("INSERT INTO answer_tickets (id, message, subject, choices, bound, minted_at, expires_at)"
                        " VALUES (?,?,?,?,?,?,?)",
                        (ticket.id, ticket.message, ticket.subject, json.dumps(ticket.choices), ticket.bound,
                         utc_seconds(now), utc_seconds(ticket.expires)))

    def ticket(self, ticket_id: str) -> Ticket | None:
        row = self.db.execute("SELECT id, message, subject, choices, bound, expires_at, used_at FROM answer_tickets"
                              " WHERE id=?", (ticket_id,)).fetchone()
        return None if row is None else _ticket(row)

    def for_message(self, key: str) -> Ticket | None:
        row = self.db.execute("SELECT id, message, subject, choices, bound, expires_at, used_at FROM answer_tickets"
                              " WHERE message=? ORDER BY minted_at DESC LIMIT 1", (key,)).fetchone()
        return None if row is None else _ticket(row)

    def redeem(self, ticket_id: str, by: str, now: datetime) -> bool:
        """Spend the ticket; False when it was spent before (a replay), whoever asks first wins."""
        cur = self.db.execute("UPDATE answer_tickets SET used_at=?, used_by=? WHERE id=? AND used_at IS NULL",
                              (utc_seconds(now), by, ticket_id))
        return cur.rowcount == 1

    def refer(self, channel: str, ref: str, ticket_id: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO answer_refs (channel, ref, ticket) VALUES (?,?,?)",
                        (channel, ref, ticket_id))

    def referred(self, channel: str, ref: str) -> str | None:
        row = self.db.execute("SELECT ticket FROM answer_refs WHERE channel=? AND ref=?", (channel, ref)).fetchone()
        return str(row[0]) if row else None

    # --- answers -------------------------------------------------------------------------------

    def record(self, at: datetime, channel: str, cursor: str, origin: str, refusal: Refusal | None,
               detail: str, ticket: str | None = None, kind: str | None = None, subject: str | None = None) -> None:
        """One answer as it came out: taken (``refusal`` None) or refused; counted either way."""
        outcome = "taken" if refusal is None else "refused"
        self.db.execute("INSERT INTO answers (at, channel, cursor, origin, ticket, kind, subject, outcome, reason,"
                        " detail) VALUES (?,?,?,?,?,?,?,?,?,?)",
                        (utc_seconds(at), channel, cursor, redact_text(origin)[:200], ticket, kind, subject, outcome,
                         refusal.value if refusal else None, redact_text(detail)[:500]))
        self.db.execute("INSERT INTO answer_counts (outcome, reason, n) VALUES (?,?,1) ON CONFLICT (outcome, reason)"
                        " DO UPDATE SET n = n + 1", (outcome, refusal.value if refusal else ""))
        if refusal is not None:
            self.db.execute("DELETE FROM answers WHERE outcome='refused' AND id <= (SELECT id FROM answers WHERE"
                            " outcome='refused' ORDER BY id DESC LIMIT 1 OFFSET ?)", (KEEP_REFUSED,))

    def settle(self, ticket: str, detail: str, refusal: Refusal | None = None) -> None:
        """What came of a taken answer once applied (or refused at applying: an edited proposal)."""
        row = self.db.execute("SELECT id FROM answers WHERE ticket=? AND outcome='taken' ORDER BY id DESC LIMIT 1",
                              (ticket,)).fetchone()
        if row is None:
            return
        if refusal is None:
            self.db.execute("UPDATE answers SET detail=? WHERE id=?", (redact_text(detail)[:500], row[0]))
            return
        self.db.execute("UPDATE answers SET outcome='refused', reason=?, detail=? WHERE id=?",
                        (refusal.value, redact_text(detail)[:500], row[0]))
        self.db.execute("UPDATE answer_counts SET n = n - 1 WHERE outcome='taken' AND reason=''")
        self.db.execute("INSERT INTO answer_counts (outcome, reason, n) VALUES ('refused',?,1) ON CONFLICT"
                        " (outcome, reason) DO UPDATE SET n = n + 1", (refusal.value,))

    def topic_of(self, ticket_id: str) -> str | None:
        """The topic of the message a ticket was minted for (its confirmation goes under it too)."""
        row = self.db.execute("SELECT n.topic FROM notifications n JOIN answer_tickets t ON t.message = n.key"
                              " WHERE t.id=?", (ticket_id,)).fetchone()
        return str(row[0]) if row else None

    def cursor(self, channel: str) -> str | None:
        """Where the last answer read from ``channel`` left off (its reader resumes there)."""
        row = self.db.execute("SELECT cursor FROM answers WHERE channel=? ORDER BY id DESC LIMIT 1",
                              (channel,)).fetchone()
        return str(row[0]) if row and row[0] else None

    def counts(self) -> dict[str, int]:
        """taken, and refused by reason (``refused forged``): every answer ever, pruned rows too."""
        rows = self.db.execute("SELECT outcome, reason, n FROM answer_counts WHERE n > 0")
        return {(f"{r[0]} {r[1]}" if r[1] else r[0]): int(r[2]) for r in rows}

    def recent(self, limit: int) -> list[dict[str, str | None]]:
        rows = self.db.execute("SELECT at, channel, origin, kind, subject, outcome, reason, detail FROM answers"
                               " ORDER BY id DESC LIMIT ?", (limit,))
        return [{"at": r[0], "channel": r[1], "origin": r[2], "kind": r[3], "subject": r[4], "outcome": r[5],
                 "reason": r[6], "detail": r[7]} for r in rows]


def _ticket(row: sqlite3.Row | tuple[object, ...]) -> Ticket:
    choices = tuple(tuple(str(part) for part in c) for c in json.loads(str(row[3])))
    return Ticket(str(row[0]), str(row[1]), str(row[2]), choices,  # type: ignore[arg-type]
                  str(row[4]) if row[4] is not None else None, datetime.fromisoformat(str(row[5])),
                  str(row[6]) if row[6] is not None else None)
