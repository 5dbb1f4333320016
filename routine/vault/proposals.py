"""Proposal notes in Drafts/: where generated text goes when it may not go into the target.

That happens when the person edited the generated section, when a new note's name is taken,
or when the agent's writes need approval. The proposal says why in one sentence, carries the
text, and, when the person's text is known, a diff against it, so they can take what they like.
"""

from __future__ import annotations

import difflib
import re
from datetime import datetime
from enum import Enum
from pathlib import Path, PurePosixPath

from routine.errors import NoteExists, RoutineError
from routine.jsonvalue import JSONObject
from routine.vault.atomic import atomic_create
from routine.vault.frontmatter import join_frontmatter
from routine.vault.guard import seal
from routine.vault.notes import code_fence_ranges, wikilink_for
from routine.vault.provenance import PROPOSAL_TAG
from routine.vault.scope import resolve
from routine.vault.sections import content_sha


class ProposalStatus(str, Enum):
    """A proposal note's ``status``: open (proposed, or in conflict), or decided (in the archive)."""

    PROPOSED = "proposed"
    CONFLICT = "conflict"  # the target changed since: nothing applied until the person says so again
    APPLIED = "applied"
    REJECTED = "rejected"

    def __str__(self) -> str:
        return self.value


MAX_SAME_NAME = 100
# Characters Obsidian will not take in a note name (links break on them).
_UNSAFE_NAME = re.compile(r'[\\/:*?"<>|#^\[\]%]+')


def iso_time(moment: datetime) -> str:
    """'2026-11-22T07:30:00+01:00': a naive time is taken as local, never written without zone."""
    if moment.tzinfo is None:
        moment = moment.astimezone()
    return moment.isoformat(timespec="seconds")


def source_links(sources: list[str]) -> list[str]:
    links: list[str] = []
    for source in sources:
        link = source if source.startswith("[[") else wikilink_for(source)
        if link not in links:
            links.append(link)
    return links


def note_name(rel: str) -> str:
    base = PurePosixPath(rel).name
    return base[:-3] if base.lower().endswith(".md") else base


def _fence_for(text: str) -> str:
    """A code fence longer than any backtick run inside, so the diff cannot close it early."""
    longest = max((len(run) for run in re.findall(r"`{3,}", text)), default=2)
    return "`" * (longest + 1)


def readable_diff(current: str, proposed: str) -> str:
    lines = difflib.unified_diff(current.strip("\n").splitlines(), proposed.strip("\n").splitlines(),
                                 fromfile="your text", tofile="proposed text", lineterm="")
    return "\n".join(lines)


def proposal_body(reason: str, proposed: str, current: str | None) -> str:
    parts = [reason.strip(), "", "## Proposed text", "", proposed.strip("\n"), ""]
    if current is not None and current.strip() != proposed.strip():
        diff = readable_diff(current, proposed)
        fence = _fence_for(diff)
        parts += ["## Changes from your text", "", f"{fence}diff", diff, fence, ""]
    return "\n".join(parts)


def write_proposal(vault_root: Path, drafts_dir: str, *, target_rel: str, section: str | None,
                   proposed: str, current: str | None, reason: str, agent: str, model: str,
                   run: str, generated: datetime, sources: list[str], kind: str = "section",
                   target_existed: bool | None = None) -> str:
    """Create a new proposal note; returns its vault-relative path. Never replaces a note.

    ``kind`` (section | note | append) and ``base`` (the hash of the target's region as it was,
    or "none") let an approval later tell whether the person changed that region since.
    """
    frontmatter: JSONObject = {"status": ProposalStatus.PROPOSED.value, "target": wikilink_for(target_rel)}
    if section:
        frontmatter["section"] = section
    frontmatter["kind"] = kind
    frontmatter["base"] = content_sha(current) if current is not None else "none"
    if target_existed is not None:  # an approval then never creates a target deleted since (approvals.py)
        frontmatter["target_existed"] = target_existed
    frontmatter.update({
        "agent": agent, "model": model, "run": run, "generated": iso_time(generated),
        "sources": source_links(sources), "tags": [PROPOSAL_TAG],
        "approved": None,  # the person sets true or false
    })
    body = proposal_body(reason, proposed, current)
    stem = _UNSAFE_NAME.sub("-", f"{generated:%Y-%m-%d %H%M} {agent} proposal for {note_name(target_rel)}").strip(" -.")
    folder = drafts_dir.strip().strip("/") or "Drafts"
    for n in range(1, MAX_SAME_NAME + 1):
        rel = f"{folder}/{stem}{'' if n == 1 else f'-{n}'}.md"
        path, rel = resolve(vault_root, rel)  # the drafts folder comes from config: check it too
        try:
            atomic_create(path, join_frontmatter({**frontmatter, "seal": seal(rel, frontmatter)}, body))
            return rel
        except NoteExists:
            continue
    raise RoutineError(f"{MAX_SAME_NAME} proposals named {stem!r} already exist in {folder}/; no new one was written.",
                       f"review and delete old proposals in {folder}/.")


def marked(text: str, claims: list[tuple[str, str]]) -> str:
    """``text`` with each (claim, why) highlighted where the claim first stands outside code
    (``==claim==``) and a footnote saying why, as Obsidian shows them: a held reply in its proposal."""
    notes = []
    for n, (claim, why) in enumerate(claims, 1):
        fences = code_fence_ranges(text)
        at = next((m.start() for m in re.finditer(re.escape(claim), text)
                   if not any(s <= m.start() < e for s, e in fences) and text[max(0, m.start() - 2):m.start()] != "=="),
                  None)
        if at is None:
            continue
        text = text[:at] + f"=={claim}==[^claim{n}]" + text[at + len(claim):]
        notes.append(f"[^claim{n}]: {why}")
    return text.rstrip("\n") + ("\n\n" + "\n".join(notes) if notes else "") + "\n"
