"""Where a step's output goes: the kinds of write target, declared once, and the target itself.

A target is written in YAML as ``{note: N}`` (a new note), ``{note: N, section: S}`` (a fenced
section of N, replaced) or ``{append: N}`` (an entry at the end of a log note). ``WriteTarget.kind``
is the one place those three optional strings become a ``WriteKind``; everything else asks the
kind. What differs by kind sits beside it: what the model is told, and where an entry goes in
the note (``WriteKind.place``: the writer and an approved proposal add every entry alike); how a
note or a section is written is ``vault/writer.py`` (``_Writer.KINDS``), and how an approved
proposal of it lands ``vault/approvals.py`` (``_LANDS``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from routine.errors import RoutineError


class WriteKind(str, Enum):
    NOTE = "note"        # a new note (or a whole note rewritten)
    SECTION = "section"  # a section of a note, fenced, replaced
    APPEND = "append"    # an entry at the end of a note

    @property
    def instructions(self) -> str:
        """What the model is told about the shape of its answer ({note}, {section} filled in)."""
        return _INSTRUCTIONS[self]

    @property
    def is_entry(self) -> bool:
        """An entry added to a note (``place`` says where; its YAML key is the kind's name), not a
        note or a section written whole. The writer and an approved proposal add every entry alike."""
        return self in _PLACES

    def place(self, body: str, entry: str) -> str:
        """A note's body with ``entry`` added where this kind of entry goes."""
        return _PLACES[self](body, entry)


_INSTRUCTIONS = {
    WriteKind.SECTION: ("Write only the markdown that goes inside the section \"{section}\" of {note}: "
                        "no heading for the section itself, no preamble, no sign-off. "
                        "Cite the notes you draw on with wikilinks such as [[Plans/OKRs]]."),
    WriteKind.NOTE: ("Write the body of the new note {note} in markdown: no preamble, no sign-off. "
                     "Cite the notes you draw on with wikilinks such as [[Plans/OKRs]]."),
    WriteKind.APPEND: ("Write a short markdown entry to append to {note}: no preamble. "
                       "Cite the notes you draw on with wikilinks."),
}


def _at_end(body: str, entry: str) -> str:
    return body + ("" if not body else "\n" if body.endswith("\n") else "\n\n") + entry


# Where each kind of entry goes in a note's body (the writer's and the approval's one rule).
_PLACES: dict[WriteKind, Callable[[str, str], str]] = {WriteKind.APPEND: _at_end}


@dataclass(frozen=True)
class WriteTarget:
    """Where output goes: ``note`` (with ``section``, or alone for a new note) or ``append``."""

    note: str | None = None
    section: str | None = None
    append: str | None = None

    KEYS = ("note", "section", "append")  # as written in YAML (the schema's WRITE_TARGET is made of these)
    DESTS = ("note", "append")            # the keys that name the note written: exactly one per target
    SECTIONED = ("note",)                 # the keys a `section` may go with
    FORMS = "{note: PATH} or {note: PATH, section: NAME} or {append: PATH}"  # for the person, in refusals

    @property
    def kind(self) -> WriteKind:
        entry = next((kind for kind in _PLACES if getattr(self, kind.value)), None)
        if entry is not None:
            return entry
        return WriteKind.SECTION if self.section else WriteKind.NOTE

    @property
    def dest(self) -> str:
        """The note written to (vault-relative, maybe still a template); "" when none is named."""
        return next((value for key in self.DESTS if (value := getattr(self, key))), "")

    def describe(self) -> str:
        if self.kind.is_entry:
            return f"{self.kind.value} to {self.dest}"
        return f"{self.note} § {self.section}" if self.kind is WriteKind.SECTION else f"new note {self.note}"

    def instructions(self) -> str:
        return self.kind.instructions.format(note=self.dest, section=self.section)

    def checked(self) -> str:
        """The note this target writes to, once it is a valid target; else a RoutineError."""
        if sum(bool(getattr(self, key)) for key in self.DESTS) != 1:
            raise RoutineError(f"A write target needs exactly one of {_either(self.DESTS)}.",
                               f"give the step `write:` as {self.FORMS}.")
        if self.section is not None and not any(getattr(self, key) for key in self.SECTIONED):
            raise RoutineError("A `section` write target needs a `note` to put it in.",
                               "write it as `write: {note: ..., section: ...}`.")
        if self.section is not None and not self.section.strip():
            raise RoutineError("A `section` write target has an empty title.", "name the section.")
        return self.dest


def _either(keys: tuple[str, ...]) -> str:
    return " and ".join(f"`{key}`" for key in keys)
