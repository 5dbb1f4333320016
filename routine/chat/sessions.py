"""Terminal conversations as journal sessions: `routine ask`, `routine chat`, and the log of
every conversation (a chat note's too): each message, each tool call with its result, in order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from typing import TYPE_CHECKING, Callable

from routine.chat.conversation import Conversation, History, Reply
from routine.chat.fold import Turn
from routine.errors import RoutineError, UsageError
from routine.journal.chats import ChatDetails, ChatMessage, ChatStore, Origin, Role
from routine.journal.lessons import rule_in
from routine.journal.runs import ToolCall, TranscriptEntry
from routine.runner import recall
from routine.vault.provenance import is_persons_chat

if TYPE_CHECKING:
    from routine.config.model import AgentSpec
    from routine.journal import Journal
    from routine.runner.step import Runner
    from routine.vault.chat_notes import ChatNote


@dataclass
class Answered:
    chat: str
    answer: str
    model: str
    sources: list[str] = field(default_factory=list)
    folded: int = 0
    tokens_in: int | None = None
    tokens_out: int | None = None
    duration_ms: int = 0
    rejected: list[str] = field(default_factory=list)  # why each earlier reply was not used

    @property
    def attempt(self) -> int:
        """Which reply was accepted, counting every reply asked for (1: the first)."""
        return len(self.rejected) + 1

    def as_dict(self) -> dict[str, object]:
        return {**self.__dict__, "attempt": self.attempt}


def history_of(store: ChatStore, chat_id: str, tz: tzinfo | None = None) -> History:
    """The session's turns; with ``tz``, each of the person's messages stamped with when it was
    sent, in their time zone, as the new one is (so the model can reason about time)."""
    chat = store.get(chat_id)
    if chat is None:  # deleted since session_for found it
        raise UsageError(f"There is no conversation {chat_id}.", "see `routine chats list`.")
    turns = [Turn(m.role.value, _stamped(m, tz)) for m in chat.messages
             if m.role in (Role.USER, Role.ASSISTANT) and not m.details.get("unanswered")]
    return History(turns, chat.summary, chat.folded)


def _stamped(message: ChatMessage, tz: tzinfo | None) -> str:
    if tz is None or message.role is not Role.USER or message.details.get("from_note") or not message.at:
        return message.content
    sent = datetime.fromisoformat(message.at).astimezone(tz)
    return f"[{sent:%a %Y-%m-%d %H:%M} {sent.tzname()}] {message.content.strip()}"


def session_for(store: ChatStore, agent: str, session: str | None, continue_last: bool, at: datetime) -> str:
    """The session to talk in: the one named, the agent's last one (``-c``), or a new one."""
    if session:
        chat = store.get(session)
        if chat is None:
            raise UsageError(f"There is no conversation {session}.", "see `routine chats list`.")
        if chat.agent != agent:
            raise UsageError(f"Conversation {chat.id} is with {chat.agent}, not {agent}.",
                             f"run `routine chat {chat.agent} --session {chat.id}`.")
        return chat.id
    if continue_last:
        last = store.latest(agent)
        if last is not None:
            return last
    return store.create(agent, Origin.TERMINAL, at=at)


def ask(runner: Runner, journal: Journal, agent: AgentSpec, question: str, session: str | None = None,
        continue_last: bool = False, on_token: Callable[[str], None] | None = None) -> Answered:
    """One message and its answer in a terminal session, both journaled."""
    if not question.strip():
        raise UsageError("The question is empty.", 'ask something, e.g. routine ask strategist "What matters today?"')
    store = ChatStore(journal.db)
    chat_id = session_for(store, agent.name, session, continue_last, runner.clock())
    conversation = Conversation(runner, agent)
    history = history_of(store, chat_id, runner.clock().tzinfo)
    reply = answer_logged(store, chat_id, conversation, history, question, on_token)
    return Answered(chat_id, reply.text, reply.model, reply.sources, reply.folded, reply.tokens_in, reply.tokens_out,
                    reply.duration_ms, reply.rejected)


def answer_logged(store: ChatStore, chat_id: str, conversation: Conversation, history: History, question: str,
                  on_token: Callable[[str], None] | None = None, said_too: tuple[str, ...] = ()) -> Reply:
    """Answer ``question``; the journal gets the message, the tool calls, the summary and the
    answer in order, or the message and what went wrong. ``said_too``: routine's own lines the
    answer ends with (a reminder the message set), after what the agent learned from it."""
    counter = conversation.client.counter(conversation.agent.model)
    try:
        reply = conversation.reply(history, question, on_token=on_token, run_id=chat_id)
    except RoutineError as exc:
        store.add(chat_id, ChatMessage(Role.USER, question, tokens=counter.text(question),
                                       details={"unanswered": True, "error": str(exc)}))
        log_tools(store, chat_id, conversation.tool_log)
        raise
    said = store.add(chat_id, ChatMessage(Role.USER, question, tokens=counter.text(question)))
    for line in (_noted(store, conversation, said, question), *said_too):
        if line:
            reply.text = f"{reply.text.rstrip()}\n\n{line}"
            if on_token is not None:
                on_token(f"\n\n{line}")
    if reply.folded:
        store.add(chat_id, ChatMessage(Role.SUMMARY, reply.summary, tokens=counter.text(reply.summary),
                                       model=reply.model, details={"covers": reply.covers, "folded": reply.folded}))
        store.set_summary(chat_id, reply.summary, reply.covers)
    log_tools(store, chat_id, reply.tool_log)
    store.add(chat_id, ChatMessage(Role.ASSISTANT, reply.text, tokens=counter.text(reply.text), model=reply.model,
                                   duration_ms=reply.duration_ms, tokens_in=reply.tokens_in,
                                   tokens_out=reply.tokens_out,
                                   details={"sources": reply.sources, "counted": reply.counted, "limit": reply.limit,
                                            **({"dropped": reply.dropped} if reply.dropped else {}),
                                            **({"rejected": reply.rejected} if reply.rejected else {})}))
    return reply


def _noted(store: ChatStore, conversation: Conversation, message_id: int, question: str) -> str | None:
    """What the agent learned at once from the person's message (``routine.runner.recall``: its
    memory note is written now, not at its next run), said as the answer's last line; None when the
    message states no rule or its source may not be learned from."""
    runner = conversation.runner
    learned = recall.learn(runner.config.vault, store.db, conversation.agent, runner.clock(),
                           runner.config.layout.chats)
    rule = rule_in(question)
    if rule is None or not any(e.key == f"chat-{message_id}" for e in learned):
        return None
    return f"Noted for next time: {rule}"


def log_tools(store: ChatStore, chat_id: str, transcript: list[TranscriptEntry]) -> None:
    for entry in transcript:
        if entry["type"] != "tool":
            continue
        store.add(
            chat_id,
            ChatMessage(
                Role.TOOL,
                tool=entry.get("name"),
                arguments=entry.get("arguments"),
                result=entry.get("result") if "result" in entry else entry.get("error"),
                duration_ms=entry.get("ms"),
                details=_call_details(entry),
            ),
        )


def _call_details(entry: ToolCall) -> ChatDetails:
    details = ChatDetails(turn=entry["turn"])
    if entry.get("refused"):
        details["refused"] = True
    return details


def start_from_note(store: ChatStore, agent: str, note: ChatNote, at: datetime) -> str:
    """A terminal session that begins with a chat note's conversation (``routine chat --note``):
    only the person's (``is_persons_chat``), since its turns become the person's messages."""
    if not is_persons_chat(note.properties, store.made_by_command(note.rel)):
        raise UsageError(f"The chat note {note.rel} was written by an agent (it carries routine's marks), so its "
                         "text is not yours to continue as a conversation.",
                         f"start one of your own: `routine chat new {agent}`.")
    chat_id = store.create(agent, Origin.TERMINAL, title=note.title, note=None, at=at)
    for turn in note.turns:
        store.add(chat_id, ChatMessage(Role(turn.role), turn.text, details={"from_note": note.rel}))
    if note.summary:
        store.set_summary(chat_id, note.summary, min(note.covers, len(note.turns)))
    return chat_id
