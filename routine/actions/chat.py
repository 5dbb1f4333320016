"""`routine chat AGENT [-c] [--note NOTE]`: a conversation in the terminal, answers streamed.
`routine chat new AGENT [TITLE]`: a chat note in the vault, answered by the daemon.

Commands in a conversation: /exit (or Ctrl-D), /reset (a new conversation), /sources (the
notes behind the last answer), /help.
"""

from __future__ import annotations

import argparse
import sys

from routine.actions.ask import Asker, said_rejected, stream_to
from routine.chat.notes import read_chat
from routine.chat.sessions import start_from_note
from routine.config.loader import agent_named, load_agents, load_config
from routine.errors import RoutineError, UsageError
from routine.journal import Journal
from routine.journal.chats import ChatStore, Origin
from routine.runner.step import local_now
from routine.vault import resolve_wikilink
from routine.vault.chat_notes import new_chat_note

HELP = "/exit ends, /reset starts a new conversation, /sources lists the notes behind the last answer."


def run(args: argparse.Namespace) -> int:
    if args.agent == "new":
        return _new(args)
    if args.words:
        raise UsageError(f"Unexpected words after the agent's name: {' '.join(args.words)}.",
                         f'talk to it in the session, or ask once: routine ask {args.agent} "…"')
    asker = Asker(args.config, args.agent, args.model)
    try:
        return _converse(asker, args)
    finally:
        asker.close()


def _converse(asker: Asker, args: argparse.Namespace) -> int:
    session = _from_note(asker, args.note) if args.note else None
    continue_last = bool(args.continue_) and session is None
    name = asker.agent.name
    print(f"Talking with {name[:1].upper()}{name[1:]} ({asker.config.models[asker.agent.model].model}). {HELP}")
    sources: list[str] = []
    while True:
        try:
            line = input("> ")
        except EOFError:
            print()
            break
        except KeyboardInterrupt:
            print("\n(/exit or Ctrl-D ends the conversation)")
            continue
        text = line.strip()
        if not text:
            continue
        if text in ("/exit", "/quit", "/q"):
            break
        if text == "/help":
            print(HELP)
            continue
        if text == "/reset":
            session, continue_last, sources = None, False, []
            print("(a new conversation)")
            continue
        if text == "/sources":
            print("\n".join(sources) if sources else "(no sources for the last answer)")
            continue
        try:
            result = asker.ask(text, session, continue_last, stream_to(sys.stdout))
        except RoutineError as exc:
            print(f"\nroutine: {exc}", file=sys.stderr)
            continue
        except KeyboardInterrupt:
            print("\n(answer interrupted)")
            continue
        print()
        said_rejected(result)
        session, continue_last, sources = result["chat"], False, result.get("sources") or []
    if session:
        print(f"(conversation {session}: `routine chats show {session}`; continue with `routine chat {name} -c`)")
    return 0


def _from_note(asker: Asker, note_arg: str) -> str:
    """A new session that begins with the conversation in a chat note."""
    vault = asker.config.vault
    rel = (
        note_arg
        if (vault / note_arg).is_file()
        else resolve_wikilink(vault, note_arg.removeprefix("[[").removesuffix("]]"))
    )
    note = read_chat(vault, rel) if rel else None
    if note is None:
        raise UsageError(f"There is no note {note_arg!r} in the vault.", "give its path, e.g. Chats/Pricing.md.")
    journal = Journal()
    try:
        return start_from_note(ChatStore(journal.db), asker.agent.name, note, local_now(asker.config))
    finally:
        journal.close()


def _new(args: argparse.Namespace) -> int:
    if not args.words:
        raise UsageError("`routine chat new` needs the agent to talk to.", "e.g. routine chat new strategist Pricing")
    config = load_config(args.config)
    agents, problems = load_agents(config)
    agent = agent_named(agents, problems, args.words[0])
    title = " ".join(args.words[1:]).strip() or None
    now = local_now(config)
    rel = new_chat_note(config.vault, config.layout.chats, agent.name, title, now)
    journal = Journal()
    try:  # recorded as made at the person's command: its messages are the person's (``is_persons_chat``)
        ChatStore(journal.db).create(agent.name, Origin.COMMAND, title, rel, at=now)
    finally:
        journal.close()
    print(f"Created {rel}: write your message at its end and save; {agent.name} answers there while the daemon runs.")
    return 0
