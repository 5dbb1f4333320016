"""The person's answers from a channel (a phone's button, a typed reply), taken or refused, then
applied through a registry of handlers by kind (``HANDLERS``: approve and reject go through the
one approval path, ``flows.approval.decide``; a question's answer, a reminder's snooze or done are
registered by their flows with ``register``).

``take`` is cheap and runs where the answer arrives: an answer is refused — never applied, counted
and kept with its sentence for `routine notify list` — when it comes from another chat, its token
is not one routine signed (forged), names no ticket of this journal (unknown), is past its end
(expired) or was answered before (replayed: a ticket is spent by the first answer taken). ``apply``
then runs the handler (the daemon queues it as work); a handler may still refuse, e.g. a proposal
edited after it was sent (its fingerprint is bound to the ticket) or decided meanwhile.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Callable

from routine.config.model import AgentSpec, Config
from routine.flows.approval import decide
from routine.journal.answers import AnswerBook, Refusal, Ticket
from routine.person.channels.base import Incoming
from routine.person.tickets import AnswerKind, read
from routine.vault.approvals import read_proposal
from routine.vault.proposals import ProposalStatus

if TYPE_CHECKING:
    from routine.journal import Journal


@dataclass(frozen=True)
class Answer:
    """An answer taken: what it does, to what, with which value, and where it came from."""

    kind: AnswerKind
    subject: str  # a proposal's path, a question's or reminder's id (from the ticket, never from the phone)
    value: str  # the choice's value, or the text typed (data: never a template)
    bound: str | None  # the subject's content when the message was sent
    by: str  # phone:ntfy, phone:telegram (the decisions' `by`)
    ticket: str


@dataclass(frozen=True)
class Context:
    """What a handler is given."""

    config: Config
    agents: dict[str, AgentSpec]
    journal: Journal
    now: datetime


@dataclass(frozen=True)
class Handled:
    sentence: str  # for the person: the confirmation pushed, and `notify list`
    refusal: Refusal | None = None  # refused at applying (the subject changed, was decided, …)


@dataclass(frozen=True)
class Taken:
    answer: Answer
    sentence: str


@dataclass(frozen=True)
class Refused:
    reason: Refusal
    sentence: str


Handler = Callable[[Context, Answer], Handled]


def _decider(approve: bool) -> Handler:
    def handle(ctx: Context, answer: Answer) -> Handled:
        proposal = read_proposal(ctx.config.vault, answer.subject)
        if proposal is None or proposal.status is not ProposalStatus.PROPOSED:
            state = "is gone" if proposal is None else f"is {proposal.status or 'not open'}"
            return Handled(f"{answer.subject} {state}, so this answer changed nothing.", Refusal.DECIDED)
        if proposal.fingerprint != answer.bound:
            return Handled(f"{answer.subject} was edited after it was sent to you, so this answer was not applied; "
                           "decide it in Obsidian (approved: true or false) or with `routine approve`.",
                           Refusal.EDITED)
        return Handled(decide(ctx.config, ctx.agents, ctx.journal, answer.subject, answer.by, ctx.now,
                              approve).message)

    return handle


# Each kind of answer → what carries it out. ANSWER (a question), SNOOZE and DONE (a reminder) are
# registered by the flows that ask them (``register``); until then such an answer is refused.
HANDLERS: dict[AnswerKind, Handler] = {
    AnswerKind.APPROVE: _decider(True),
    AnswerKind.REJECT: _decider(False),
}


def register(kind: AnswerKind, handler: Handler) -> None:
    """``handler`` carries out the answers of ``kind`` from now on."""
    HANDLERS[kind] = handler


_SENTENCES = {
    Refusal.FORGED: "it carries no token routine signed (forged or mangled)",
    Refusal.UNKNOWN: "its token names no message this routine sent",
    Refusal.EXPIRED: "its buttons expired (notify.answer_within)",
    Refusal.REPLAYED: "that message was answered already (each answers once)",
    Refusal.UNREADABLE: "it is neither a button's answer nor a reply to one of routine's messages",
}


def take(db: sqlite3.Connection, incoming: Incoming, now: datetime) -> Taken | Refused:
    """Check what arrived; the ticket is spent when it is taken. Every outcome is journaled."""
    book = AnswerBook(db)
    found = _ticket_and_choice(book, incoming)
    if incoming.foreign:
        refused = Refused(Refusal.FOREIGN, f"Refused: {incoming.foreign}.")
    elif isinstance(found, Refusal):
        refused = Refused(found, f"Refused: {_SENTENCES[found]}.")
    else:
        ticket, choice = found
        kind, label, value = ticket.choices[choice]
        by = f"phone:{incoming.channel}"
        if ticket.expires <= now:
            refused = Refused(Refusal.EXPIRED, f"Refused: {_SENTENCES[Refusal.EXPIRED]}.")
        elif not book.redeem(ticket.id, by, now):
            refused = Refused(Refusal.REPLAYED, f"Refused: {_SENTENCES[Refusal.REPLAYED]}.")
        else:
            answer = Answer(AnswerKind(kind), ticket.subject, value or (incoming.text if not label else ""),
                            ticket.bound, by, ticket.id)
            sentence = f"Received: {label or 'your answer'} ({ticket.subject})."
            book.record(now, incoming.channel, incoming.cursor, incoming.origin, None, sentence, ticket.id, kind,
                        ticket.subject)
            return Taken(answer, sentence)
    book.record(now, incoming.channel, incoming.cursor, incoming.origin, refused.reason, refused.sentence,
                found[0].id if isinstance(found, tuple) else None)
    return refused


def _ticket_and_choice(book: AnswerBook, incoming: Incoming) -> tuple[Ticket, int] | Refusal:
    if incoming.data:
        signed = read(incoming.data)
        if signed is None:
            return Refusal.FORGED
        ticket = book.ticket(signed.ticket)
        if ticket is None:
            return Refusal.UNKNOWN
        return (ticket, signed.choice) if signed.choice < len(ticket.choices) else Refusal.FORGED
    if incoming.in_reply_to is None:
        return Refusal.UNREADABLE
    ticket_id = book.referred(incoming.channel, incoming.in_reply_to)
    ticket = book.ticket(ticket_id) if ticket_id else None
    if ticket is None:
        return Refusal.UNKNOWN
    words = incoming.text.strip().lower()
    for index, (_, label, _) in enumerate(ticket.choices):
        if label and label.lower() == words:
            return ticket, index
    typed = [i for i, (kind, label, _) in enumerate(ticket.choices) if kind == AnswerKind.ANSWER.value and not label]
    return (ticket, typed[0]) if typed and words else Refusal.UNREADABLE


def apply(ctx: Context, answer: Answer) -> Handled:
    """Carry out a taken answer by its kind's handler; what came of it is journaled beside it."""
    handler = HANDLERS.get(answer.kind)
    handled = handler(ctx, answer) if handler else Handled(
        f"routine cannot carry out a {answer.kind} answer yet; nothing was changed.", Refusal.UNHANDLED)
    AnswerBook(ctx.journal.db).settle(answer.ticket, handled.sentence, handled.refusal)
    return handled
