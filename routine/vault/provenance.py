"""Whose text is it: the one place that says which text in the vault is routine's own.

Routine reads the vault back (tasks, assignments, notifications, the graph, search, QA, the
project brief), and what it wrote itself must never read as the person's intent. Routine's text:

- a chat note an agent made or wrote into: never the person's words (``is_persons_chat``);
- its own notes: proposals (tagged ``routine/proposal``, in `Drafts/` and, once decided, in
  `Archive/Proposals/`) and alerts (tagged ``routine/alert``);
- its generated sections in any note, from `%% routine:begin KEY … %%` to `%% routine:end KEY %%`
  (markers included; a section whose end marker is gone runs to the next heading), its
  pointer lines to a waiting proposal (``routine.vault.sections`` writes them), and its live
  blocks (`%% routine-live:begin NAME … %%`, the dashboard's: ``routine.vault.live``);
- any checkbox it writes, which is written as a quotation: ``- \\[ ] text`` (a backslash before
  the bracket; ``quote_tasks``). Obsidian shows "[ ] text", and neither Obsidian's Tasks nor
  Dataview, nor routine, reads it as a task. A note routine creates whole (a task's result, a
  digest) therefore holds no task of routine's: a checkbox there is one the person added.

A person's approval of an entry makes it theirs: it lands with its checkboxes as tasks again
(``unquote_tasks``; the manager's proposed tasks). Everything else is the person's.

Every reader asks here (``person_text``, ``is_routines_note``); `tests/test_provenance.py`
fails when another module decides it for itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import PurePosixPath

from routine.jsonvalue import Parsed
from routine.vault.frontmatter import parse_frontmatter
from routine.vault.notes import code_fence_ranges, in_ranges
from routine.vault.outline import HEADING

ROUTINE_PROPERTY = "routine"  # ``routine: {agent, run, at}``: an agent wrote into the note (``bookkeeping``)
TAG_PREFIX = "routine/"  # a note routine created whole is tagged ``routine/<agent>``
CHAT_TAG = "routine/chat"  # a chat note `routine chat new` made
PROPOSAL_TAG = "routine/proposal"
ALERT_TAG = "routine/alert"
QUESTION_TAG = "routine/question"  # a question an agent asked the person (routine.vault.question_notes)
ROUTINE_NOTE_TAGS = (PROPOSAL_TAG, ALERT_TAG, QUESTION_TAG)
QUESTIONS_FOLDER = "Inbox"
PROPOSALS = "Proposals"  # decided proposals go to <archive>/Proposals/

# The markers of a generated section and of a pointer line (``routine.vault.sections`` writes them).
# They tolerate spaces a person (or their editor) may add: '%%routine : begin  x %%'.
BEGIN = re.compile(r"^[ \t]*%%[ \t]*routine[ \t]*:[ \t]*begin[ \t]+(?P<rest>[^\n]*?)[ \t]*%%[ \t]*\r?$", re.M)
END = re.compile(r"^[ \t]*%%[ \t]*routine[ \t]*:[ \t]*end[ \t]+(?P<key>[^\s%]+)[ \t]*%%[ \t]*\r?$", re.M)
POINTER = re.compile(r"^[^\n]*%%[ \t]*routine[ \t]*:[ \t]*proposal[ \t]+(?P<key>[^\s%]+)[ \t]*%%[ \t]*\r?$", re.M)
ANY_MARKER = re.compile(r"%%[ \t]*routine[ \t]*:[ \t]*(?=(?:begin|end|proposal)\b)")
# A live block (the dashboard's, ``routine.vault.live``): '%% routine-live:begin NAME … %%' to '… end NAME %%'.
_LIVE = re.compile(r"^[ \t]*%%[ \t]*routine-live:(?P<kind>begin|end)[ \t]+(?P<name>[^\s%]+)[^\n]*%%[ \t]*$", re.M)
_ATTR = re.compile(r"(\w+)[ \t]*=[ \t]*([^\s%]+)")

# A list item that is a checkbox, as Obsidian's Tasks reads one (in a quote or callout too, numbered
# or not), and the same item quoted by routine. Linear: each part stops at a different character.
_LEAD = r"(?P<lead>[ \t]*(?:>[ \t]*)*(?:[-*+]|\d{1,9}[.)])[ \t]+)"
_CHECKBOX = re.compile(_LEAD + r"\[(?P<mark>[^\]\n])\]", re.M)
# A time block of a day's plan (`- [ ] 10:00–11:30 Draft …`, as the Planner writes them): the person's
# to tick, so it stays a checkbox; it lies in a generated section, which every reader of routine skips.
_TIME_BLOCK = re.compile(r"[ \t]\d{1,2}[:.]\d{2}\b")
_QUOTED = re.compile(_LEAD + r"\\\[(?P<mark>[^\]\n])\]", re.M)


def archived_proposals(archive: str) -> str:
    """The folder decided proposals go to: ``Archive/Proposals``."""
    return f"{archive.strip('/')}/{PROPOSALS}"


def _tags(value: object) -> list[str]:
    if isinstance(value, str):
        value = re.split(r"[,\s]+", value)
    if not isinstance(value, (list, tuple)):
        return []
    return [str(tag).strip().lstrip("#").lower() for tag in value if tag is not None]


def is_routines_note(rel: str, tags: object = None) -> bool:
    """Is the note at ``rel`` (with its ``tags:``) one of routine's own: a proposal, an archived
    one, an alert?"""
    parts = PurePosixPath(rel).parts
    return any(tag in ROUTINE_NOTE_TAGS for tag in _tags(tags)) or parts[:2] == ("Archive", PROPOSALS)


def is_question_note(rel: str) -> bool:
    """Named as routine names a question to the person (`Inbox/Question q-….md`); what it holds is
    checked against the journal before an answer in it counts."""
    return rel.startswith(f"{QUESTIONS_FOLDER}/Question q-") and rel.endswith(".md") and rel.count("/") == 1


def is_persons_chat(properties: Mapping[str, object], made_by_command: bool) -> bool:
    """Are a chat note's messages the person's words? Only when the person made the note (it
    carries none of routine's marks: no ``routine:`` property, no ``routine/…`` tag) or `routine
    chat new` made it at their command (``made_by_command``: the journal recorded it then; its only
    mark is the ``routine/chat`` tag), and no agent has written into it since (the ``routine:``
    property every agent's write leaves). A note an agent wrote, with a ``chat:`` property and
    "remember …" in it, is never the person telling an agent anything."""
    if ROUTINE_PROPERTY in properties:
        return False
    marks = {tag for tag in _tags(properties.get("tags")) if tag.startswith(TAG_PREFIX)}
    return not marks or (made_by_command and marks == {CHAT_TAG})


def is_routines_text(rel: str, text: str) -> bool:
    """Is the note at ``rel``, whose file text is ``text``, one of routine's own?"""
    split = parse_frontmatter(text.removeprefix("\ufeff").replace("\r\n", "\n"))
    return is_routines_note(rel, split.data.get("tags") if split.readable else None)


def begin_key(match: re.Match[str]) -> tuple[str, Parsed]:
    """A begin marker's section key and its attributes (agent, sha, run, after)."""
    rest = match["rest"].split(None, 1)
    key = rest[0].lower() if rest else ""
    attrs = dict(_ATTR.findall(rest[1])) if len(rest) > 1 else {}
    return key, attrs


def begins(body: str) -> list[tuple[str, re.Match[str], Parsed]]:
    """Every generated section's begin marker, in order (those shown in code blocks are not):
    (key, match, attributes)."""
    fences = code_fence_ranges(body)
    return [(key, m, attrs) for m in _unfenced(BEGIN.finditer(body), fences) for key, attrs in [begin_key(m)]]


def live_marker(kind: str, name: str) -> re.Pattern[str]:
    """The ``begin`` or ``end`` marker line of the live block ``name``."""
    return re.compile(rf"^[ \t]*%%[ \t]*routine-live:{kind}[ \t]+{re.escape(name)}\b[^\n]*%%[ \t]*$", re.M)


def _unfenced(matches: Iterator[re.Match[str]], fences: list[tuple[int, int]]) -> Iterator[re.Match[str]]:
    """The matches that begin outside every code fence (a marker shown in a code block is not one)."""
    return (m for m in matches if not in_ranges(m.span()[0], fences))


def _live_spans(text: str, fences: list[tuple[int, int]]) -> list[tuple[int, int]]:
    spans, opened = [], {}
    for m in _unfenced(_LIVE.finditer(text), fences):
        if m["kind"] == "begin":
            opened[m["name"]] = m.span()[0]
        elif m["name"] in opened:
            spans.append((opened.pop(m["name"]), m.span()[1]))
    return spans


def routine_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of routine's text inside a note's text: its generated sections, markers
    included, and its pointer lines. A section whose end marker is gone runs to the next heading:
    its text is routine's until the person's begins."""
    fences = code_fence_ranges(text)
    spans = [m.span() for m in _unfenced(POINTER.finditer(text), fences)]
    spans += _live_spans(text, fences)
    for key, begin, _ in begins(text):
        start, after = begin.span()
        end = next((m for m in _unfenced(END.finditer(text, after), fences) if m["key"].lower() == key), None)
        if end is None:
            heading = next(_unfenced(HEADING.finditer(text, after), fences), None)
            spans.append((start, heading.span()[0] if heading else len(text)))
        else:
            spans.append((start, end.span()[1]))
    return sorted(spans)


def _blank(text: str) -> str:
    return re.sub(r"[^\n]", "", text)


def person_text(rel: str, text: str) -> str:
    """The note's text with routine's parts blanked: each of their lines left empty, so a line of
    the person's keeps its number (a task is rewritten in place by it). Empty lines for one of
    routine's own notes."""
    if is_routines_text(rel, text):
        return _blank(text)
    out, last = [], 0
    for start, end in routine_spans(text):
        if start < last:
            continue
        out += [text[last:start], _blank(text[start:end])]
        last = end
    out.append(text[last:])
    return "".join(out)


def persons_words(rel: str, text: str) -> str:
    """The person's own writing in a note, to tell a change of theirs from one of routine's: the
    lines of its body's ``person_text`` that are neither blank nor the heading over one of routine's
    sections (a digest routine wrote has none); none in one of routine's notes. Its properties are
    not writing."""
    split = parse_frontmatter(text.removeprefix("\ufeff").replace("\r\n", "\n"))
    if is_routines_note(rel, split.data.get("tags") if split.readable else None):
        return ""
    lines, kept = split.body.split("\n"), person_text(rel, split.body).split("\n")
    heads = {i for i, line in enumerate(kept) if HEADING.match(line)
             and any(BEGIN.match(later) for later in lines[i + 1:i + 3])}
    return "\n".join(line for i, line in enumerate(kept) if line.strip() and i not in heads)


def is_routines_at(text: str, offset: int) -> bool:
    """Is the character at ``offset`` of a note's body routine's (in a generated section)?"""
    return in_ranges(offset, routine_spans(text))


def defuse_markers(text: str) -> str:
    """Marker text a model wrote, made inert (it would cut a section short, or pass for routine's)."""
    return ANY_MARKER.sub("%% routine (quoted): ", text)


def quote_tasks(text: str, in_section: bool = False) -> str:
    """Routine's text with each checkbox written as a quotation (``- [ ] x`` -> ``- \\[ ] x``);
    code blocks as they are, and, in a generated section of a note (``in_section``), a plan's time
    blocks (``- [ ] 10:00–11:30 …``: the person ticks them; never in a proposal or a note of routine's)."""
    fences = code_fence_ranges(text)

    def quoted(m: re.Match[str]) -> str:
        end = text.find("\n", m.end())
        plan_item = (in_section and _TIME_BLOCK.match(text, m.end())
                     and "::" not in text[m.end():end if end >= 0 else None])
        if in_ranges(m.start(), fences) or plan_item:
            return m.group(0)
        return f"{m['lead']}\\[{m['mark']}]"
    return _CHECKBOX.sub(quoted, text)


_ITEM = re.compile(_LEAD + r"(?:\\?\[[^\]\n]\][ \t]+)?")


def list_item_start(line: str) -> int | None:
    """Where a list item's own text starts, after its bullet and any checkbox (the person's or routine's
    quoted one); None for a line that is no list item. For drawing (a canvas card's text), not for tasks."""
    found = _ITEM.match(line)
    return found.end() if found else None


def is_checkbox_line(line: str) -> bool:
    """A checkbox item, the person's or routine's quoted one (``- [ ] …``, ``- \\[ ] …``)."""
    return bool(_CHECKBOX.match(line) or _QUOTED.match(line))


def unquote_tasks(text: str) -> str:
    """The person approved it: routine's quoted checkboxes are tasks again."""
    fences = code_fence_ranges(text)
    return _QUOTED.sub(lambda m: m[0] if in_ranges(m.start(), fences) else f"{m['lead']}[{m['mark']}]", text)
