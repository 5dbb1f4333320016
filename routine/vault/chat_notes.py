"""Chat notes: a conversation with an agent kept in the vault, as the person sees it.

A note with a ``chat: AGENT`` property is a conversation. The person writes at the end and
saves; routine appends the agent's answer as a callout naming the agent, its sources linked:

    > [!agent] Strategist · 20:15
    > Focus on KR 1.1 first ([[Plans/OKRs]]).
    > *Sources:* [[Plans/OKRs]] · [[Daily/2026-11-22]]

Text outside those callouts is the person's; each stretch of it between two answers is one
message, read as it stands now (edits and deletions count). When a conversation outgrows the
model's window, its oldest turns are folded into a ``> [!summary] Summary so far`` callout at
the top, and the ``summary_covers`` property says how many messages it covers.

The answer lands through the same atomic rewrite as every note write: if the person saves
while routine writes, it reads again and puts the answer after the message it answers.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from routine.errors import NoteExists
from routine.vault.atomic import atomic_create
from routine.vault.frontmatter import (
    join_frontmatter,
    parse_frontmatter,
    update_frontmatter,
)
from routine.vault.notes import NoteText, wikilink_for
from routine.vault.outline import strip_comments
from routine.vault.provenance import defuse_markers, quote_tasks
from routine.vault.writer import _rewrite

CHAT_PROPERTY = "chat"
COVERS_PROPERTY = "summary_covers"
ANSWER_TYPE = "agent"
_ANSWER_HEAD = re.compile(r"^>\s*\[!agent\][+-]?[ \t]*(?P<title>.*)$")
_SUMMARY_HEAD = re.compile(r"^>\s*\[!summary\][+-]?[ \t]*Summary so far")
_SOURCES = "*Sources:*"
SUMMARY_TITLE = "> [!summary] Summary so far"


@dataclass(frozen=True)
class Turn:
    role: str   # "user" (the person's text) or "assistant" (an answer callout)
    text: str   # as the model sees it: comments out, callout markers off, the sources line off
    raw: str    # exactly as in the note
    end: int    # where it ends in the body


@dataclass
class ChatNote:
    rel: str
    agent: str | None
    title: str
    turns: list[Turn] = field(default_factory=list)
    summary: str = ""
    covers: int = 0  # how many of ``turns`` the summary stands for
    properties: Mapping[str, object] = field(default_factory=dict)  # as read: whose note it is (``is_persons_chat``)

    def pending(self) -> Turn | None:
        """The person's message that has no answer yet: the last turn, when it is theirs."""
        if self.turns and self.turns[-1].role == "user":
            return self.turns[-1]
        return None


def chat_agent(frontmatter: Mapping[str, object]) -> str | None:
    value = frontmatter.get(CHAT_PROPERTY)
    if isinstance(value, str) and value.strip():
        return value.strip().removeprefix("[[").removesuffix("]]").split("|")[0].split("/")[-1].strip().lower()
    return None


def parse_chat(rel: str, text: str) -> ChatNote:
    split = parse_frontmatter(text)
    note = ChatNote(rel=rel, agent=chat_agent(split.data), title=str(split.data.get("title") or Path(rel).stem),
                    properties=dict(split.data))
    try:
        note.covers = max(0, int(split.data.get(COVERS_PROPERTY) or 0))
    except (TypeError, ValueError):
        note.covers = 0
    _read_body(split.body, note)
    if not note.summary:  # the person deleted the summary: the turns it stood for count again
        note.covers = 0
    return note


def _read_body(body: str, note: ChatNote) -> None:
    lines = body.splitlines(keepends=True)
    pos, i = 0, 0
    person: list[str] = []

    def flush(end: int) -> None:
        raw = "".join(person)
        text = strip_comments(raw).strip()
        if text:
            note.turns.append(Turn("user", text, raw, end))
        person.clear()

    while i < len(lines):
        line = lines[i]
        head = _ANSWER_HEAD.match(line.rstrip("\n"))
        summary = _SUMMARY_HEAD.match(line.rstrip("\n"))
        if head or summary:
            flush(pos)
            block, j = [line], i + 1
            while j < len(lines) and lines[j].startswith(">"):
                block.append(lines[j])
                j += 1
            raw = "".join(block)
            inner = _callout_text(block[1:])
            pos += len(raw)
            if summary and not note.summary and not note.turns:
                note.summary = inner
            elif head:
                note.turns.append(Turn("assistant", inner, raw, pos))
            i = j
            continue
        person.append(line)
        pos += len(line)
        i += 1
    flush(pos)


def _callout_text(lines: list[str]) -> str:
    out = []
    for line in lines:
        text = line.rstrip("\n")
        text = text[1:]
        text = text.removeprefix(" ")
        if text.strip().startswith(_SOURCES):
            continue
        out.append(text)
    return "\n".join(out).strip()


def answer_callout(agent: str, when: datetime, text: str, sources: list[str]) -> str:
    """The answer as the note shows it: a callout naming the agent, its sources linked."""
    title = f"{agent[:1].upper()}{agent[1:]} · {when:%H:%M}"
    body = quote_tasks(defuse_markers(text.strip())).splitlines() or [""]  # routine's words, quoted
    lines = [f"> [!{ANSWER_TYPE}] {title}"] + [f"> {line}".rstrip() for line in body]
    links = list(dict.fromkeys(wikilink_for(s) for s in sources if s))
    if links:
        lines += [">", f"> {_SOURCES} " + " · ".join(links)]
    return "\n".join(lines) + "\n"


def _summary_callout(summary: str) -> str:
    return "\n".join([SUMMARY_TITLE] + [f"> {line}".rstrip() for line in summary.strip().splitlines()]) + "\n"


def append_answer(vault: Path, rel: str, question_raw: str, callout: str,
                  summary: tuple[str, int] | None = None) -> None:
    """Put ``callout`` right after the message it answers (``question_raw``, as read), else at the
    end; with ``summary`` (text, messages covered), the summary callout at the top is replaced.
    Lands only on the bytes it was computed from (a save meanwhile: read again, redo)."""

    def change(current: NoteText | None) -> str | None:
        if current is None:
            return None  # the person deleted the note meanwhile: nothing to answer into
        split = parse_frontmatter(current.text)
        body = split.body
        at = body.rfind(question_raw) if question_raw else -1
        cut = len(body) if at < 0 else at + len(question_raw)
        before, after = body[:cut], body[cut:]
        if before and not before.endswith("\n"):
            before += "\n"
        before = before + ("" if before.endswith("\n\n") or not before else "\n") + callout
        # A blank line after the callout: what the person types next is not read as part of it.
        body = before + "\n" + (after.lstrip("\n") if after.strip() else "")
        block = split.block
        if summary is not None:
            body = _with_summary(body, summary[0])
            block = update_frontmatter(split, {COVERS_PROPERTY: summary[1]})
        return block + body

    _rewrite(vault / rel, rel, change)


def _with_summary(body: str, summary: str) -> str:
    lines = body.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if _SUMMARY_HEAD.match(line.rstrip("\n"))), None)
    if start is not None:
        end = start + 1
        while end < len(lines) and lines[end].startswith(">"):
            end += 1
        return "".join(lines[:start]) + _summary_callout(summary) + "".join(lines[end:])
    lead = len(body) - len(body.lstrip("\n"))
    return body[:lead] + _summary_callout(summary) + "\n" + body[lead:]


def new_chat_note(vault: Path, folder: str, agent: str, title: str | None, now: datetime) -> str:
    """Create ``folder/<title>.md`` as a conversation with ``agent``; never replaces a note."""
    name = re.sub(r'[\\/:*?"<>|#^\[\]]+', "-", title or f"{now:%Y-%m-%d %H%M} {agent.title()}").strip(" -.")[:100]
    properties = {CHAT_PROPERTY: agent, "title": title or name, "created": now.strftime("%Y-%m-%dT%H:%M"),
                  "tags": ["routine/chat"]}
    body = (f"%% A conversation with {agent.title()}. Write your message below and save: the answer "
            f"appears under it. Edit or delete earlier turns freely; the next answer reads the note as it is. %%\n\n")
    for n in range(1, 100):
        rel = f"{folder.strip('/')}/{name}{'' if n == 1 else f' {n}'}.md"
        try:
            atomic_create(vault / rel, join_frontmatter(properties, body))
            return rel
        except NoteExists:
            continue
    raise NoteExists(f"Too many chat notes named {name} in {folder}.", "give the chat a title.")
