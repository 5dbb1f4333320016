"""The one way agent output reaches the vault.

Order of business: the scope check first (principle 4), then the kind of target:
``section`` (a generated section inside a note), ``note`` (a whole new note, never a
replacement) or ``append`` (an entry at the end of a log note). Whenever the text may not
go where it was headed, it goes to a proposal in Drafts/ and the result says so.

Every rewrite reads the note, changes only what it must, and replaces it atomically only if
the note still holds the bytes read; if the person saved in between, it starts over.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Callable, ClassVar

from routine.errors import NoteExists, RoutineError, VaultUnwritable
from routine.jsonvalue import Parsed
from routine.vault.atomic import NoteChanged, atomic_create, atomic_write
from routine.vault.bookkeeping import Provenance, new_note_properties, stamped_block
from routine.vault.frontmatter import FrontmatterSplit, join_frontmatter, parse_frontmatter
from routine.vault.guard import Guard
from routine.vault.notes import NoteText, load_note_text, wikilink_for
from routine.vault.proposals import write_proposal
from routine.vault.scope import checked, in_scope
from routine.vault.sections import (
    SectionOutcome,
    SectionUpdate,
    clear_pending_proposal,
    end_line,
    find_section,
    mark_pending_proposal,
    prepare_content,
    section_content,
    section_key,
    upsert_section,
)
from routine.vault.targets import WriteKind, WriteTarget

ATTEMPTS = 3


class Why(str, Enum):
    """Why a write became a proposal (``WriteResult.why``, journaled in ``runs.wrote``): Team
    Health tells the section the person rewrote from the one that asked for approval."""

    PERSON_EDITED = "person-edited"  # the person had rewritten the section since routine wrote it
    PERSON_OWNS = "person-owns"      # their own heading, or markers they damaged
    APPROVAL = "approval"            # the agent's writes need approval, or the target is protected
    HELD = "held"                    # the reply's claims were not supported (or another reason to hold it)


class WriteOutcome(str, Enum):
    """What a write did (``WriteResult.outcome``; journaled as its value in ``runs.wrote``)."""

    CREATED = "created"
    REPLACED = "replaced"
    UNCHANGED = "unchanged"
    APPENDED = "appended"
    PROPOSAL = "proposal"  # written to Drafts/ for the person to decide

    def __str__(self) -> str:  # "created", as the journal and every output write it (also in f-strings)
        return self.value


@dataclass(frozen=True)
class WriteResult:
    rel: str                  # the note written (or, for a proposal, the one it was meant for)
    outcome: WriteOutcome
    proposal_rel: str | None  # the proposal note, when one was written
    message: str              # one sentence for the person
    # A section written (created | replaced): its text as written, and the text it held just
    # before (None: it was not there); what the keep-rate measures (routine/journal/keep.py).
    section_text: str | None = None
    replaced_text: str | None = None
    # A proposal: why (``Why``): the person had edited the section, or approval was asked for.
    why: Why | None = None


def _split(current: NoteText | None) -> FrontmatterSplit:
    return parse_frontmatter(current.text) if current is not None else FrontmatterSplit()


def _stamped(split: FrontmatterSplit, body: str, prov: Provenance | None) -> str:
    """The note's text with a new body; with ``prov``, provenance set in its frontmatter.
    Unreadable frontmatter is kept verbatim: routine will not guess at the person's YAML."""
    return (stamped_block(split, prov) if prov else split.block) + body


def _rewrite(path: Path, rel: str, change: Callable[[NoteText | None], str | None]) -> None:
    """Apply ``change`` (current note -> new text, or None for no write) until it lands on
    the bytes it was computed from."""
    for _ in range(ATTEMPTS):
        current = load_note_text(path)
        new_text = change(current)
        if new_text is None:
            return
        try:
            if current is None:
                atomic_create(path, new_text)
            else:
                atomic_write(path, current.encode_like(new_text), expected=current.raw)
            return
        except (NoteChanged, NoteExists):
            continue
    raise RoutineError(f"{rel} kept changing while routine was writing to it, so nothing was written.",
                       "run the step again once the note is no longer being edited or synced.")


def rewrite_note(path: Path, rel: str, change: Callable[[NoteText | None], str | None]) -> None:
    """A person-style edit of a note (a property, a task line) that lands only on the bytes it
    was computed from, retried if the note changes meanwhile: for commands that edit notes."""
    _rewrite(path, rel, change)


def write_output(vault_root: Path, target: WriteTarget, content: str, prov: Provenance, writes: list[str],
                 drafts_dir: str = "Drafts", approval_required: bool = False, guard: Guard | None = None,
                 proposals: list[str] | tuple[str, ...] = (), held: str | None = None,
                 approval_why: str | None = None) -> WriteResult:
    """Write an agent's output to ``target``, or to a proposal when it may not go there.

    ``proposals``: globs the agent may write only as proposals (a semi-autonomous member's case
    file, ``routine.access``). ``guard`` (default: the default layout) names the notes no agent
    writes directly. ``held``: why the output must not land as it is (unsupported claims): a
    proposal saying so."""
    dest = target.checked()
    vault_root = Path(vault_root)
    guard = guard or Guard(drafts=drafts_dir)
    path, rel = checked(vault_root, [*writes, *proposals], dest, prov.agent, "write")
    proposal_only = bool(proposals) and in_scope(list(proposals), rel)
    writer = _Writer(vault_root, path, rel, target, content, prov, drafts_dir)
    try:
        protected = guard.why(vault_root, rel, prov.agent)
        if protected:
            return writer.for_approval(f"{rel} {protected}, which no agent changes directly.")
        if held:
            return writer.for_approval(held, Why.HELD)
        if approval_required or proposal_only:  # ``approval_why``: when it is not the agent's own rule
            return writer.for_approval(approval_why if approval_required else None)
        return writer.KINDS[target.kind](writer)
    except IsADirectoryError:
        raise RoutineError(f"{rel} is a folder, not a note, so routine wrote nothing there.",
                           "point the step's `write:` at a .md file.") from None
    except OSError as exc:  # read-only, not ours, disk full: one sentence; a shared alert (routine.causes)
        raise VaultUnwritable(rel, exc) from None


@dataclass
class _Writer:
    vault_root: Path
    path: Path
    rel: str
    target: WriteTarget
    content: str
    prov: Provenance
    drafts_dir: str

    KINDS: ClassVar[dict[WriteKind, Callable[[_Writer], WriteResult]]]  # how each kind of target is written

    def _proposal(self, reason: str, current: str | None) -> str:
        return write_proposal(self.vault_root, self.drafts_dir, target_rel=self.rel, section=self.target.section,
                              proposed=prepare_content(self.content), current=current, reason=reason,
                              agent=self.prov.agent, model=self.prov.model, run=self.prov.run,
                              generated=self.prov.generated, sources=self.prov.sources,
                              kind=self.target.kind.value, target_existed=self.path.exists())

    def _result(self, outcome: WriteOutcome, message: str, proposal_rel: str | None = None, why: Why | None = None,
                written: SectionUpdate | None = None) -> WriteResult:
        if written is None:
            return WriteResult(self.rel, outcome, proposal_rel, message, why=why)
        return WriteResult(self.rel, outcome, proposal_rel, message, section_content(self.content), written.current)

    def for_approval(self, why: str | None = None, kind: Why = Why.APPROVAL) -> WriteResult:
        """Approval required (or a protected target): the target is not touched, whatever its state."""
        split = _split(load_note_text(self.path))
        current = None
        if self.target.section:
            span = find_section(split.body, section_key(self.target.section))
            current = span.content if span else None
        elif self.target.note and self.path.exists():
            current = split.body
        who = self.prov.agent[:1].upper() + self.prov.agent[1:]
        reason = why or f"{who}'s writes need your approval."
        proposal = self._proposal(reason, current)
        said = reason.split("\n", 1)[0]  # a held reply's reason goes on with its claims, marked: the note has them
        return self._result(WriteOutcome.PROPOSAL, f"{said.removesuffix('.')}; the text for {self.rel} "
                                        f"is in {wikilink_for(proposal)} for the person to approve.", proposal, kind)

    def new_note(self) -> WriteResult:
        given, body = _model_frontmatter(self.content)
        body = prepare_content(body)
        properties = new_note_properties(self.prov, given, self.rel)
        try:
            atomic_create(self.path, join_frontmatter(properties, body))
            return self._result(WriteOutcome.CREATED, f"Created {self.rel}.")
        except NoteExists:
            pass
        existing = _split(load_note_text(self.path))
        if existing.body.strip() == body.strip():
            return self._result(WriteOutcome.UNCHANGED, f"{self.rel} already holds this text.")
        proposal = self._proposal(f"A note already exists at {wikilink_for(self.rel)}, and routine never "
                                  "replaces a whole note.", existing.body)
        return self._result(WriteOutcome.PROPOSAL, f"{self.rel} already exists and routine never replaces a note; "
                                        f"the new text is in {wikilink_for(proposal)}.", proposal)

    def entry(self) -> WriteResult:
        """An entry, of any kind of entry (``WriteKind.place`` says where it goes)."""
        entry = f"### {self.prov.generated:%H:%M} — {self.prov.agent}\n{prepare_content(self.content)}"

        def add_entry(current: NoteText | None) -> str:
            split = _split(current)
            return _stamped(split, self.target.kind.place(split.body, entry), self.prov)

        _rewrite(self.path, self.rel, add_entry)
        return self._result(WriteOutcome.APPENDED, f"Added an entry to {self.rel}.")

    def section(self) -> WriteResult:
        title = " ".join((self.target.section or "").split())  # write_output chose section() for a named one
        outcome: dict[str, SectionUpdate] = {}

        def put_section(current: NoteText | None) -> str | None:
            split = _split(current)
            update = upsert_section(split.body, title, self.content, self.prov.agent, self.prov.run)
            outcome["update"] = update
            if update.outcome in (SectionOutcome.CREATED, SectionOutcome.REPLACED):
                return _stamped(split, clear_pending_proposal(update.body, update.key), self.prov)
            if update.outcome is SectionOutcome.UNCHANGED:  # the person undid their edit: drop a stale pointer
                cleared = clear_pending_proposal(update.body, update.key)
                return None if cleared == update.body else _stamped(split, cleared, None)
            return None

        _rewrite(self.path, self.rel, put_section)
        update = outcome["update"]
        if update.outcome is SectionOutcome.CREATED:
            return self._result(WriteOutcome.CREATED, f"Wrote {title} in {self.rel}.", written=update)
        if update.outcome is SectionOutcome.REPLACED:
            return self._result(WriteOutcome.REPLACED, f"Updated {title} in {self.rel}.", written=update)
        if update.outcome is SectionOutcome.UNCHANGED:
            return self._result(WriteOutcome.UNCHANGED, f"{title} in {self.rel} was already up to date.")
        assert update.outcome is SectionOutcome.PERSON_EDITED
        return self._kept_persons_text(title, update)

    def _kept_persons_text(self, title: str, update: SectionUpdate) -> WriteResult:
        reason, told = _KEPT[update.reason or "edited"]
        proposal = self._proposal(reason.format(key=update.key, end=end_line(update.key)), update.current)
        link = wikilink_for(proposal)

        def point(current: NoteText | None) -> str | None:
            split = _split(current)
            marked = mark_pending_proposal(split.body, update.key, proposal)
            return None if marked == split.body else _stamped(split, marked, None)

        _rewrite(self.path, self.rel, point)
        why = Why.PERSON_EDITED if update.reason == "edited" else Why.PERSON_OWNS
        return self._result(WriteOutcome.PROPOSAL, told.format(title=title, rel=self.rel, link=link), proposal, why)


_Writer.KINDS = {WriteKind.NOTE: _Writer.new_note, WriteKind.SECTION: _Writer.section,
                 **{kind: _Writer.entry for kind in WriteKind if kind.is_entry}}


# Why the person's text was kept: (sentence in the proposal, sentence in the result).
_KEPT: dict[str | None, tuple[str, str]] = {  # by SectionUpdate.reason (set when the person edited)
    "edited": ("You edited this section after routine wrote it, so routine did not overwrite it.",
               "Your edit of {title} in {rel} was kept; the new version is in {link}."),
    "own-heading": ("This section is text you wrote yourself (it has no routine markers), so routine "
                    "did not change it.",
                    "{title} in {rel} is your own text and was kept; the new version is in {link}."),
    "no-end-marker": ("The section's end marker (`{end}`) is missing, so routine could "
                      "not tell where its text ends and did not change anything.",
                      "{title} in {rel} has lost its end marker, so it was left alone; the new version "
                      "is in {link}."),
    "duplicated": ("The section's begin marker appears more than once, so routine could not tell which "
                   "copy is its own and did not change either.",
                   "{title} appears twice in {rel}, so it was left alone; the new version is in {link}."),
}


def _model_frontmatter(content: str) -> tuple[Parsed, str]:
    """Models sometimes start a new note with their own frontmatter: keep its properties
    (ours win for provenance) instead of leaving a second block in the body."""
    split = parse_frontmatter(content.lstrip("\n").replace("\r\n", "\n"))
    if split.block and split.readable:
        return split.data, split.body
    return {}, content
