"""Approved proposals land; rejected ones are put away. The vault side of the approval queue.

A proposal note (``routine.vault.proposals``) carries ``status: proposed``, its ``target``,
``section``, ``kind`` (section | note | append), ``base`` (the hash of the target's region when
it was written) and ``approved`` (empty until the person decides). On approval the text under
"Proposed text" — as the person left it, edits included — is applied to the target as it is
*now*: if that region changed since, nothing is written and the proposal says ``status:
conflict`` and why. Decided proposals move to ``Archive/Proposals/``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Callable

from routine.errors import NoteExists, RoutineError
from routine.jsonvalue import Parsed
from routine.vault.atomic import NoteChanged, atomic_create, atomic_write, remove_note
from routine.vault.bookkeeping import PROPERTY, Provenance, new_note_properties, stamped_block
from routine.vault.bookkeeping import stamp as stamp_of
from routine.vault.files import vault_files
from routine.vault.frontmatter import FrontmatterSplit, join_frontmatter, parse_frontmatter, update_frontmatter
from routine.vault.guard import Guard, seal, sealed_by_routine
from routine.vault.notes import NoteText, load_note_text, note_text, wikilink_for
from routine.vault.proposals import ProposalStatus, iso_time, note_name
from routine.vault.provenance import PROPOSAL_TAG, archived_proposals, unquote_tasks
from routine.vault.scope import checked, resolve
from routine.vault.sections import (
    apply_approved,
    clear_pending_proposal,
    content_sha,
    find_section,
    pointers,
    prepare_content,
    section_key,
    section_region,
)
from routine.vault.targets import WriteKind
from routine.vault.writer import _model_frontmatter, _rewrite

# A proposal's `kind` for a change to a schedule file (outside the vault; routine.schedule.edit
# writes and applies it, routine.flows.approval dispatches on it): its `target` is that file.
SCHEDULE_KIND = "schedule"
# A proposal's `kind` for a call to an MCP server's tool that may change things (routine.tools.mcp_tools
# writes it, routine.flows.approval runs it once approved): its `section` is the sealed `server/tool`.
MCP_KIND = "mcp"
_PROPOSED = re.compile(r"^## Proposed text[ \t]*\n(.*?)(?=^## Changes from your text[ \t]*$|\Z)", re.M | re.S)



@dataclass(frozen=True)
class Proposal:
    rel: str
    properties: Parsed
    text: str            # the proposed text, as the person left it
    raw: bytes           # the note's bytes when read (to notice an edit while deciding)

    @property
    def status(self) -> ProposalStatus | None:
        """Where the proposal stands; None when its ``status`` is missing or not one routine writes."""
        try:
            return ProposalStatus(str(self.properties.get("status") or ""))
        except ValueError:
            return None

    @property
    def approved(self) -> bool | None:
        value = self.properties.get("approved")
        if isinstance(value, str):  # a person may type yes/no in the property by hand
            value = {"true": True, "yes": True, "false": False, "no": False}.get(value.strip().lower())
        return value if isinstance(value, bool) else None

    @property
    def target_rel(self) -> str | None:
        link = str(self.properties.get("target") or "").strip().removeprefix("[[").removesuffix("]]")
        link = link.split("|", 1)[0].split("#", 1)[0].strip()
        if not link:
            return None
        outside = self.properties.get("kind") in (SCHEDULE_KIND, MCP_KIND)  # a schedule file, an MCP server
        return link if link.lower().endswith(".md") or outside else link + ".md"

    @property
    def section(self) -> str | None:
        section = self.properties.get("section")
        return str(section) if section else None

    def section_named(self) -> str:
        """The section a section proposal replaces; an error when the person deleted its name."""
        if self.section is None:
            raise RoutineError(f"{self.rel} is a section proposal that names no section, so it cannot be applied.",
                               "reject it, or put the section's name back in its `section` property.")
        return self.section

    @property
    def kind(self) -> WriteKind:
        """What the proposal replaces or adds; a kind routine does not write (typed by hand) is
        refused in one sentence, never applied as another kind."""
        given = str(self.properties.get("kind") or (WriteKind.SECTION if self.section else WriteKind.NOTE))
        try:
            return WriteKind(given)
        except ValueError:
            raise RoutineError(
                f"{self.rel} says `kind: {given}`, which is not a kind of write routine applies, so nothing was "
                "applied.", f"set its `kind` to one of {', '.join(k.value for k in WriteKind)}, or reject it."
            ) from None

    @property
    def base(self) -> str | None:
        base = self.properties.get("base")
        return None if base in (None, "none") else str(base)

    @property
    def target_existed(self) -> bool:
        """Was the target there when the proposal was written? Said by ``target_existed`` (newer
        proposals); else a ``base`` (the hash of what was there) says it was."""
        given = self.properties.get("target_existed")
        return bool(given) if isinstance(given, bool) else self.base is not None

    @property
    def agent(self) -> str:
        return str(self.properties.get("agent") or "")

    @property
    def fingerprint(self) -> str:
        """What the person is asked to approve, as one hash: the proposed text, its target, section
        and kind. A phone's answer is bound to it: one for a proposal edited since is refused."""
        what = "\x1f".join([self.text, str(self.properties.get("target") or ""), self.section or "",
                            str(self.properties.get("kind") or "")])
        return content_sha(what)

    @property
    def made_by_routine(self) -> bool:
        """Its seal is valid: routine wrote it here, not an agent through a note in Drafts/."""
        return sealed_by_routine(self.rel, self.properties)


def read_proposal(vault: Path, rel: str) -> Proposal | None:
    """The proposal at ``rel``; None when the note is not one of routine's proposals."""
    path, rel = resolve(vault, rel)
    current = load_note_text(path)
    if current is None:
        return None
    split = parse_frontmatter(current.text)
    props = split.data if split.readable else {}
    if PROPOSAL_TAG not in (props.get("tags") or []) or "target" not in props:
        return None
    match = _PROPOSED.search(split.body)
    return Proposal(rel, props, match.group(1).strip("\n") + "\n" if match else "", current.raw)


@dataclass(frozen=True)
class Applied:
    ok: bool
    message: str                 # one sentence for the person and the journal
    replaced: str | None = None  # the text the approval replaced, kept in the archived proposal
    gone: bool = False           # the target was deleted (or renamed out of reach): never created again
    target: str | None = None    # applied: the note it landed in (a renamed target followed)


def apply(vault: Path, proposal: Proposal, writes: list[str], now: datetime, guard: Guard | None = None,
          force: bool = False) -> Applied:
    """Apply an approved proposal to its target, within the proposing agent's write scope.

    A protected target (an agent note, routine's own notes) gets the text the person approved
    but no provenance properties: ``agent:`` there would rename the agent. ``force``: apply over
    the target's region as it is now (the person said so, knowing of the conflict)."""
    target = proposal.target_rel
    if not target:
        return Applied(False, "the proposal names no target note")
    path, target = checked(vault, writes, target, proposal.agent or "the agent", "write")
    followed = ""
    if proposal.target_existed and load_note_text(path) is None:  # deleted, or renamed (Obsidian, a sync)
        renamed = find_renamed(vault, proposal)
        if renamed is None:
            return Applied(
                False,
                f"{wikilink_for(target)} no longer exists (deleted, or renamed to a note that does not "
                "hold this proposal's section or text), so nothing was applied and it was not "
                "created again",
                gone=True,
            )
        followed = f" (it was renamed from {wikilink_for(target)})"
        path, target = checked(vault, writes, renamed, proposal.agent or "the agent", "write")
    stamp = (guard or Guard()).why(vault, target) is None
    for _ in range(3):
        current = load_note_text(path)
        if force:
            proposal = replace(proposal, properties={**proposal.properties, "base": _current_base(vault, proposal)})
        try:
            applied = replace(_apply_once(path, target, proposal, current, now, stamp), target=target)
            return replace(applied, message=applied.message.rstrip(".") + followed + ".") if followed else applied
        except (NoteChanged, NoteExists):
            continue  # the person saved the target meanwhile: look again
    raise RoutineError(f"{target} kept changing while routine applied a proposal to it; nothing was written.",
                       "set `approved: true` again once the note is no longer being edited.")


def find_renamed(vault: Path, proposal: Proposal) -> str | None:
    """The one note that now holds a missing target's proposal: its pointer line to this
    proposal, or the region (section) or text (note, append) whose hash is the proposal's
    ``base``. None when no note, or more than one, does."""
    key = section_key(proposal.section_named()) if proposal.kind == WriteKind.SECTION else None
    name = note_name(proposal.rel)
    found = []
    for rel in vault_files(vault):
        if not rel.endswith(".md") or rel == proposal.rel:
            continue
        current = load_note_text(vault / rel)
        if current is None:
            continue
        body = parse_frontmatter(current.text).body
        if key is not None and pointers(body, key) and name in body:
            held = True  # the pointer line to this very proposal
        elif key is not None:
            span = find_section(body, key) if proposal.base is not None else None
            held = span is not None and span.intact and content_sha(span.content) == proposal.base
        else:
            held = proposal.base is not None and content_sha(body) == proposal.base
        if held:
            found.append(rel)
        if len(found) > 1:
            return None
    return found[0] if found else None


def _provenance(proposal: Proposal, now: datetime) -> Provenance:
    props = proposal.properties
    return Provenance(agent=proposal.agent, model=str(props.get("model") or ""), run=str(props.get("run") or ""),
                      generated=now, sources=[str(s) for s in props.get("sources") or []])


def _approved(text: str) -> str:
    """An approved entry (the manager's `propose_tasks` is one), made safe, is the person's: its
    checkboxes are tasks (``routine.vault.provenance``). An approved section or note stays routine's
    text, its checkboxes quoted, as it would be had the agent written it directly."""
    return unquote_tasks(prepare_content(text))


@dataclass(frozen=True)
class _Landing:
    """An approved proposal about to land on its target as the target is now."""
    proposal: Proposal
    path: Path                 # the target's file
    target: str                # the target, vault-relative
    link: str                  # the target as a wikilink, for the sentence
    current: NoteText | None   # the target now (None: not there)
    body: str                  # the target's body now
    now: datetime
    stamp: bool                # provenance properties go on the target


@dataclass(frozen=True)
class _Body:
    """The target's new body, the sentence saying so, the text it replaced (kept in the archive)."""
    text: str
    message: str
    replaced: str | None = None


def _entry(landing: _Landing) -> Applied | _Body:
    proposal = landing.proposal
    entry = f"### {landing.now:%H:%M} — {proposal.agent} (approved)\n{_approved(proposal.text)}"
    return _Body(proposal.kind.place(landing.body, entry), f"Added the approved entry to {landing.link}.")


def _section(landing: _Landing) -> Applied | _Body:
    proposal, body = landing.proposal, landing.body
    if landing.current is None and proposal.base is not None:
        return Applied(False, f"{landing.link} no longer exists")
    section = proposal.section_named()
    replaced = section_region(body, section)[0]
    approved_body, why = apply_approved(body, section, proposal.text, proposal.agent, proposal.base)
    if approved_body is None:
        return Applied(False, why)
    return _Body(clear_pending_proposal(approved_body, section_key(section)),
                 f"Applied the approved {section} to {landing.link}.", replaced)


def _note(landing: _Landing) -> Applied | _Body:
    proposal, link = landing.proposal, landing.link
    if landing.current is None:
        if proposal.base is not None:
            return Applied(False, f"{link} was deleted after this proposal was written")

        given, text = _model_frontmatter(proposal.text)  # a template's own properties (an artifact's type, owner)
        stamped = new_note_properties(_provenance(proposal, landing.now), given, landing.target) if landing.stamp \
            else given
        atomic_create(landing.path, join_frontmatter(stamped, prepare_content(text)))
        return Applied(True, f"Created {link} from the approved proposal.")
    if proposal.base is None or content_sha(landing.body) != proposal.base:
        return Applied(False, f"{link} changed after this proposal was written")
    return _Body(prepare_content(proposal.text),
                 f"Replaced the text of {link} with the approved proposal (the old text is kept in the archived "
                 "proposal).", landing.body)


# How each kind of write target's approved proposal lands, as `writer._Writer.KINDS` says how it
# is written: a kind without its entry here is refused at import, never applied as another kind.
_LANDS: dict[WriteKind, Callable[[_Landing], Applied | _Body]] = {
    WriteKind.NOTE: _note, WriteKind.SECTION: _section, **{kind: _entry for kind in WriteKind if kind.is_entry}}
if set(_LANDS) != set(WriteKind):
    raise ImportError(f"approvals: no way to land {sorted(set(WriteKind) - set(_LANDS))} (add it to _LANDS)")


def _apply_once(path: Path, target: str, proposal: Proposal, current: NoteText | None, now: datetime,
                stamp: bool = True) -> Applied:
    split = parse_frontmatter(current.text) if current is not None else FrontmatterSplit()
    landed = _LANDS[proposal.kind](_Landing(proposal, path, target, wikilink_for(target), current, split.body, now,
                                            stamp))
    if isinstance(landed, Applied):
        return landed
    if current is None:
        properties = {PROPERTY: stamp_of(_provenance(proposal, now))} if stamp else {}
        atomic_create(path, join_frontmatter(properties, landed.text))
    else:
        block = stamped_block(split, _provenance(proposal, now)) if split.readable and stamp else split.block
        atomic_write(path, current.encode_like(block + landed.text), expected=current.raw)
    replaced = landed.replaced
    return Applied(True, landed.message, replaced=replaced if replaced and replaced.strip() else None)


def archive(vault: Path, proposal: Proposal, archive_dir: str, status: ProposalStatus, decided_by: str, now: datetime,
            replaced: str | None = None) -> str:
    """Move the decided proposal to ``Archive/Proposals/`` with how and when it was decided."""
    current = load_note_text(vault / proposal.rel)
    # Deleted while it was being decided: archive what the decision was made on.
    split = parse_frontmatter((current or note_text(proposal.raw)).text)
    block = update_frontmatter(split, {"status": status.value, "decided": iso_time(now), "decided_by": decided_by})
    body = split.body
    if replaced:
        body = (body.rstrip("\n") + "\n\n## Replaced text\n\nWhat the target said before this proposal was applied:\n\n"
                + replaced.strip("\n") + "\n")
    folder = archived_proposals(archive_dir)
    stem = note_name(proposal.rel)
    for n in range(1, 100):
        rel = f"{folder}/{stem}{'' if n == 1 else f' {n}'}.md"
        path, rel = resolve(vault, rel)
        try:
            atomic_create(path, block + body)
            break
        except NoteExists:
            continue
    else:
        raise RoutineError(f"Could not archive {proposal.rel}: too many archived proposals of that name.",
                           f"tidy {folder}/.")
    if current is not None:
        remove_note(vault / proposal.rel)
    return rel


def mark_conflict(vault: Path, proposal: Proposal, why: str, now: datetime) -> None:
    """Nothing was applied: say so in the proposal, which stays where the person sees it.

    Its ``base`` becomes the target's region as it is now, so approving again means "apply
    over the current text" (which is then kept in the archived proposal)."""
    base = _current_base(vault, proposal)
    callout = (f"> [!warning] routine did not apply this proposal ({now:%Y-%m-%d %H:%M}): {why}, so applying it "
               "would overwrite that edit. Nothing was changed.\n> Copy what you want from it by hand, or set "
               "`status: proposed` and `approved: true` again to apply it over the current text.\n\n")

    def marked(current: NoteText | None) -> str | None:
        if current is None:  # the person deleted the proposal meanwhile: nothing to mark
            return None
        split = parse_frontmatter(current.text)
        props = {**split.data, "base": base}
        block = update_frontmatter(split, {"status": ProposalStatus.CONFLICT.value, "conflict": why, "approved": None,
                                           "base": base, "seal": seal(proposal.rel, props)})
        return block + callout + split.body.lstrip("\n")

    _rewrite(vault / proposal.rel, proposal.rel, marked)


def clear_pointer(vault: Path, proposal: Proposal) -> None:
    """A rejected section proposal's pointer line in its target goes too."""
    section = proposal.section
    if not proposal.target_rel or section is None or proposal.properties.get("kind") not in (None, WriteKind.SECTION):
        return  # without its section's name the pointer cannot be told apart; the section's next run clears it
    path, rel = resolve(vault, proposal.target_rel)

    def cleared(current: NoteText | None) -> str | None:
        if current is None:
            return None
        split = parse_frontmatter(current.text)
        body = clear_pending_proposal(split.body, section_key(section))
        return None if body == split.body else split.block + body

    try:
        _rewrite(path, rel, cleared)
    except RoutineError:
        pass  # the person keeps editing it; the stale pointer goes at the section's next run


def _current_base(vault: Path, proposal: Proposal) -> str:
    target = proposal.target_rel
    current = load_note_text(resolve(vault, target)[0]) if target else None
    if current is None:
        return "none"
    split = parse_frontmatter(current.text)
    if proposal.kind == WriteKind.SECTION:
        region = section_region(split.body, proposal.section_named())[0]
        return content_sha(region) if region is not None else "none"
    return content_sha(split.body)
