"""`routine chats [list|show ID]`: conversations and every message of one, from the journal."""

from __future__ import annotations

import argparse

from routine.config.loader import zone_name_of
from routine.errors import UsageError
from routine.journal import Journal
from routine.journal.chats import ChatMessage, ChatStore, Role
from routine.terminal.output import Clock, print_json, print_table, say

LIST_COLUMNS = ["id", "agent", "origin", "title", "messages", "updated"]


def run(args: argparse.Namespace) -> int:
    journal = Journal()
    try:
        store = ChatStore(journal.db)
        if getattr(args, "chats_command", None) == "show":
            return _show(store, args.chat_id, args.json, Clock.named(zone_name_of(args.config)))
        return _list(store, getattr(args, "limit", 20), args.json, Clock.named(zone_name_of(args.config)))
    finally:
        journal.close()


def _list(store: ChatStore, limit: int, as_json: bool, clock: Clock) -> int:
    chats = store.recent(limit)
    if as_json:
        print_json(chats)
        return 0
    if not chats:
        say(
            'No conversations yet. Try `routine ask strategist "What matters today?"` or `routine chat new strategist`.'
        )
        return 0
    print_table([{**c, "title": c["title"] or c["note"] or "", "updated": clock.show(str(c["updated_at"]))}
                 for c in chats], LIST_COLUMNS, {"updated": clock.label("updated")}, keep=("id",))
    return 0


def _show(store: ChatStore, chat_id: str, as_json: bool, clock: Clock) -> int:
    chat = store.get(chat_id)
    if chat is None:
        raise UsageError(f"There is no conversation {chat_id!r}.", "see `routine chats list` for their ids.")
    if as_json:
        print_json(chat.as_dict())
        return 0
    print(
        f"Conversation {chat.id} with {chat.agent} ({chat.origin.value}" + (f", {chat.note}" if chat.note else "")
        + f"), times in {clock.zone}"
    )
    if chat.summary:
        print(f"Summary so far (covers {chat.folded} messages):\n{_indent(chat.summary)}")
    for m in chat.messages:
        print()
        print(_header(m, clock))
        if m.role is Role.TOOL:
            print(f"  arguments: {m.arguments}")
            print(_indent(f"result: {m.result}"))
        else:
            print(_indent(m.content))
        if m.details.get("sources"):
            print("  sources: " + ", ".join(m.details["sources"]))
        if m.details.get("error"):
            print(f"  error: {m.details['error']}")
    return 0


def _header(m: ChatMessage, clock: Clock) -> str:
    at = clock.show(m.at, "%H:%M:%S")
    if m.role is Role.TOOL:
        return f"[{at}] tool call {m.tool}" + (" (refused)" if m.details.get("refused") else "") + \
               (f", {m.duration_ms} ms" if m.duration_ms is not None else "")
    figures = [f"{m.tokens} tokens" if m.tokens is not None else "", (m.model or "").split("/")[-1],
               f"{m.duration_ms} ms" if m.duration_ms else "",
               f"in {m.tokens_in}/out {m.tokens_out}" if m.tokens_in is not None else ""]
    return f"[{at}] {m.role.value}: " + ", ".join(f for f in figures if f)


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in (text or "").splitlines())
