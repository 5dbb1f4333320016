"""Tasks: checkbox lines anywhere in a case file, as Obsidian's Tasks and Dataview read them.

    - [ ] Draft the pricing page [assignee:: [[Builder]]] 📅 2026-12-01
    - [/] … (in progress)   - [x] … [result:: [[Pricing page]]] ✅ 2026-11-22   - [-] cancelled

A blocker is a `[blocker:: …]` field on a task line, or a line under a "Blockers" heading.

Only the person's lines are read (``routine.vault.provenance.person_text``): a checkbox in one of
routine's generated sections or notes is a copy, never a task. A checkbox with no text, or a
template's placeholder ("- [ ] ", "- [ ] task 1", "- [ ] <task>"), is not a task either.

Every pattern here is linear in the line (no lazy group before a trailing class, no field
value that may run past a bracket), and what is read is capped: a task line longer than
``MAX_TASK_LINE`` characters is not a task, and a note gives at most ``MAX_TASKS_PER_NOTE``
tasks; either is said once in the log, naming the note and line.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from routine.projects.model import link_target
from routine.vault.files import read_text
from routine.vault.provenance import person_text
from routine.vault.writer import _rewrite
from routine.watch.filters import is_note

if TYPE_CHECKING:
    from routine.vault.notes import NoteText

log = logging.getLogger("routine.projects")

MAX_TASK_LINE = 4000       # characters; a longer line is not read as a task
MAX_TASKS_PER_NOTE = 5000  # tasks read from one note; the rest are not

# The text is taken greedily and its trailing blanks stripped in code (a lazy group before
# `[ \t]*$` is quadratic in a run of blanks); a field's value never crosses a bracket other
# than a whole [[link]], so an unclosed field costs one scan to the next bracket, not the line.
_TASK = re.compile(r"^(?P<indent>[ \t]*)[-*+] \[(?P<mark>.)\] (?P<text>.*)$")
_FIELD = re.compile(r"\[(?P<key>[A-Za-z_][\w-]*)::[ \t]*(?P<value>(?:\[\[[^\[\]]*\]\]|[^\[\]])*)\]")
_DUE = re.compile(r"📅\s*(\d{4}-\d{2}-\d{2})")
_DONE_DATE = re.compile(r"✅\s*\d{4}-\d{2}-\d{2}")
_HEADING = re.compile(r"^#{1,6}[ \t]+(.*)$")
# A Tasks/Dataview task line carrying an assignee: "- [ ] Draft the page [assignee:: [[Builder]]]".
# Linear in the note: nothing crosses a line end (a `\s*` at a line start would scan every blank
# line after it, for every line), and the link's name stops at any bracket.
TASK_ASSIGNEE = re.compile(
    r"^[ \t]*[-*+] \[[ xX/-]\][^\n]*?\[assignee::[ \t]*\[\[([^\[\]|#\n]+)(?:[#|][^\[\]\n]*)?\]\][ \t]*\]", re.MULTILINE
)
# A template's placeholder where a task's text goes: "task 1", "item 2", "<task, starting with a verb>".
_PLACEHOLDER_WORD = re.compile(r"^(?:task|todo|to-do)[ \t]*\d*[.:]?$", re.IGNORECASE)
_ANGLED = re.compile(r"<[^<>\n]*>")
_LETTER = re.compile(r"[^\W\d_]")


class TaskState(str, Enum):
    OPEN = " "
    IN_PROGRESS = "/"
    DONE = "x"
    CANCELLED = "-"

    @classmethod
    def of(cls, mark: str) -> TaskState:
        return {"X": cls.DONE}.get(mark) or next((s for s in cls if s.value == mark), cls.OPEN)


@dataclass(frozen=True)
class Task:
    file: str            # vault-relative note holding the line
    line_no: int         # 0-based
    line: str
    state: TaskState
    text: str            # the description without fields, dates or emoji
    assignee: str | None
    result: str | None   # the linked result note's name
    due: str | None
    blocker: str | None

    @property
    def open(self) -> bool:
        return self.state in (TaskState.OPEN, TaskState.IN_PROGRESS)

    @property
    def key(self) -> str:
        """What identifies the task while its status, result or dates change."""
        return f"{self.file}::{self.text}"


def is_placeholder(text: str) -> bool:
    """Is a task's text (fields and dates taken out) a template's blank: nothing, "task 1", or
    only `<placeholders>` between times and punctuation?"""
    return _PLACEHOLDER_WORD.match(text) is not None or not _LETTER.search(_ANGLED.sub("", text))


def describe(rest: str) -> str:
    text = _FIELD.sub("", rest)
    text = _DUE.sub("", text)
    text = _DONE_DATE.sub("", text)
    return " ".join(text.split())


def parse_line(file: str, line_no: int, line: str) -> Task | None:
    match = _TASK.match(line)
    if not match:
        return None
    rest = match["text"].rstrip(" \t")
    if is_placeholder(describe(rest)):
        return None
    fields = {m["key"].lower(): m["value"].strip() for m in _FIELD.finditer(rest)}
    due = _DUE.search(rest)
    return Task(file=file, line_no=line_no, line=line, state=TaskState.of(match["mark"]), text=describe(rest),
                assignee=link_target(fields["assignee"]) if fields.get("assignee") else None,
                result=link_target(fields["result"]) if fields.get("result") else None,
                due=due.group(1) if due else None,
                blocker=fields.get("blocker") or fields.get("blocked") or None)


def parse_tasks(file: str, text: str) -> tuple[list[Task], list[str]]:
    """The tasks of a note's text, and the lines under its "Blockers" heading."""
    tasks: list[Task] = []
    blockers: list[str] = []
    in_blockers = False
    in_fence = False
    for i, line in enumerate(person_text(file, text).splitlines()):
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
        if in_fence:
            continue
        heading = _HEADING.match(line)
        if heading:
            in_blockers = heading.group(1).rstrip(" \t#").strip().lower() in ("blockers", "blocked", "blocker")
            continue
        if len(line) > MAX_TASK_LINE:
            if _TASK.match(line[:MAX_TASK_LINE]):
                log.warning("%s line %d: a task line of %d characters is over routine's limit of %d, so it is "
                            "not read as a task; shorten it (put the detail in a note it links to)",
                            file, i + 1, len(line), MAX_TASK_LINE)
            continue
        task = parse_line(file, i, line)
        if task is not None and len(tasks) >= MAX_TASKS_PER_NOTE:
            log.warning("%s holds more than %d tasks; those from line %d on are not read; split the note",
                        file, MAX_TASKS_PER_NOTE, i + 1)
            break
        if task is not None:
            tasks.append(task)
            if in_blockers and task.open and not task.blocker:
                blockers.append(task.text)
        elif in_blockers and line.strip().lstrip("-*+ ").strip():
            blockers.append(line.strip().lstrip("-*+ ").strip())
    return tasks, blockers


def case_file_notes(vault: Path, folder: str) -> list[str]:
    base = Path(vault) / folder
    if not base.is_dir():
        return []
    out = []
    for path in sorted(base.rglob("*.md")):
        rel = path.relative_to(vault).as_posix()
        if is_note(rel) and not any(part.startswith(".") for part in rel.split("/")):
            out.append(rel)
    return out


_SEEN: dict[
    str, tuple[tuple[int, int, int], tuple[list[Task], list[str]]]
] = {}  # path -> ((mtime_ns, size, inode), parsed)


def note_tasks(vault: Path, rel: str) -> tuple[list[Task], list[str]]:
    """The tasks and blockers of one note, parsed again only when its mtime or size changed
    (every run asks: membership comes from task lines)."""
    path = Path(vault) / rel
    try:  # a pipe, a device or a loop named like a note has no tasks (and is never read)
        stat = path.stat()
        key = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
        cached = _SEEN.get(str(path))
        if cached is None or cached[0] != key:
            cached = _SEEN[str(path)] = (key, parse_tasks(rel, read_text(path)))
    except OSError:
        return [], []
    return cached[1]


def project_tasks(vault: Path, folder: str) -> tuple[list[Task], list[str]]:
    """Every task and blocker line in a case file."""
    tasks, blockers = [], []
    for rel in case_file_notes(vault, folder):
        try:
            found, blocked = note_tasks(vault, rel)
        except OSError:
            continue
        tasks += found
        blockers += blocked
    return tasks, blockers


def with_mark(line: str, state: TaskState) -> str:
    match = _TASK.match(line)
    if not match:
        return line
    start = match.start("mark")
    return line[:start] + state.value + line[start + 1:]


def with_field(line: str, key: str, value: str) -> str:
    """The line with `[key:: value]` set (replaced when present, else added before the dates)."""
    field = f"[{key}:: {value}]"
    for m in _FIELD.finditer(line):
        if m["key"].lower() == key:
            return line[:m.start()] + field + line[m.end():]
    cut = min([m.start() for m in (_DUE.search(line), _DONE_DATE.search(line)) if m] or [len(line.rstrip())])
    head = line[:cut].rstrip()
    tail = line[cut:].strip()
    return f"{head} {field}" + (f" {tail}" if tail else "")


def without_field(line: str, key: str) -> str:
    out = line
    for m in reversed(list(_FIELD.finditer(line))):
        if m["key"].lower() == key:
            out = out[:m.start()].rstrip() + (" " + out[m.end():].lstrip() if out[m.end():].strip() else "")
    return out


def update_task(vault: Path, task: Task, change: Callable[[str], str]) -> bool:
    """Rewrite the task's line with ``change(line) -> line``; found again by its key if lines
    moved. False when the task is gone (the person deleted or rewrote it). Atomic, and only on
    the bytes read (``routine.vault.writer._rewrite``)."""
    path = Path(vault) / task.file
    found = {}

    def edit(current: NoteText | None) -> str | None:
        if current is None:
            return None
        lines = current.text.split("\n")
        index = _locate(task, person_text(task.file, current.text).split("\n"))
        if index is None:
            return None
        new = change(lines[index])
        found["ok"] = True
        if new == lines[index]:
            return None
        lines[index] = new
        return "\n".join(lines)

    _rewrite(path, task.file, edit)
    return bool(found)


def _locate(task: Task, lines: list[str]) -> int | None:
    """The task's line among the person's ``lines`` (routine's blanked: a copy is never found)."""
    if task.line_no < len(lines):
        same = parse_line(task.file, task.line_no, lines[task.line_no])
        if same is not None and same.text == task.text:
            return task.line_no
    for i, line in enumerate(lines):
        other = parse_line(task.file, i, line)
        if other is not None and other.text == task.text:
            return i
    return None
