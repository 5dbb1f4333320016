"""Generated sections inside a person's note, fenced by Obsidian comments:

    ## Alignment
    %% routine:begin alignment agent=strategist sha=1a2b3c4d5e6f %%
    ...generated markdown...
    %% routine:end alignment %%

``sha`` is the hash of what routine last wrote there. If the text between the markers no
longer has that hash, the person edited it, and routine never overwrites it (principle 2):
the new text goes to a proposal and a pointer line is put right after the end marker.
Everything outside the markers is the person's; these functions never change a byte of it,
except to add (or remove) routine's own pointer line and, when creating, its own block.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from enum import Enum

from routine.vault.notes import code_fence_ranges, in_ranges, unclosed_fence, wikilink_for
from routine.vault.outline import heading_title
from routine.vault.provenance import BEGIN as _BEGIN
from routine.vault.provenance import END as _END
from routine.vault.provenance import POINTER as _POINTER
from routine.vault.provenance import begin_key as _begin_key
from routine.vault.provenance import begins as _begins
from routine.vault.provenance import defuse_markers, quote_tasks


class SectionOutcome(str, Enum):
    """What ``upsert_section`` did to a generated section (``SectionUpdate.outcome``)."""

    CREATED = "created"
    REPLACED = "replaced"
    UNCHANGED = "unchanged"
    PERSON_EDITED = "person-edited"  # the person's text there stands: nothing written

    def __str__(self) -> str:
        return self.value


_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(?P<title>[^\n]*)$", re.M)  # title: heading_title(m["title"])


def section_key(title: str) -> str:
    """'Alignment' -> 'alignment', 'Top OKRs' -> 'top-okrs': the name inside the markers."""
    key = re.sub(r"\s+", "-", title.strip().lower()).replace("%", "")
    return key or "section"


def _normalised(text: str) -> str:
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def content_sha(text: str) -> str:
    """First 12 hex of sha256 of the text, blind to trailing spaces and outer blank lines
    (editors and sync tools change those without anyone meaning to edit)."""
    return hashlib.sha256(_normalised(text).encode("utf-8", errors="surrogateescape")).hexdigest()[:12]


@dataclass(frozen=True)
class SectionSpan:
    key: str
    start: int            # where the begin marker's line starts
    end: int | None       # just after the end marker's text (before its newline); None: no end marker
    content_start: int    # just after the begin marker's line
    content_end: int      # where the end marker's line starts (or the end of the body)
    content: str          # the text between the markers, as it is now
    sha: str | None       # the hash routine stored in the begin marker
    agent: str | None
    intact: bool          # exactly one begin and its end: safe to replace between them


@dataclass(frozen=True)
class SectionUpdate:
    body: str
    outcome: SectionOutcome
    key: str
    reason: str | None = None  # person-edited: edited | own-heading | no-end-marker | duplicated
    current: str | None = None # the text now in the section, for showing a diff


def find_section(body: str, key: str) -> SectionSpan | None:
    """The generated section ``key`` in ``body``; markers shown inside code blocks are ignored."""
    key = key.lower()
    fences = code_fence_ranges(body)
    begins = [(m, attrs) for m in _BEGIN.finditer(body) if not in_ranges(m.start(), fences)
              for found, attrs in [_begin_key(m)] if found == key]
    if not begins:
        return None
    begin, attrs = begins[0]
    content_start = begin.end() + 1 if body.startswith("\n", begin.end()) else begin.end()
    end = next((m for m in _END.finditer(body, content_start)
                if m["key"].lower() == key and not in_ranges(m.start(), fences)), None)
    if end is None:
        return SectionSpan(key, begin.start(), None, content_start, len(body), body[content_start:],
                           attrs.get("sha"), attrs.get("agent"), intact=False)
    # A second begin before the end means the person copied the block: which one is ours?
    duplicated = any(other.start() < end.start() for other, _ in begins[1:])
    return SectionSpan(key, begin.start(), end.end(), content_start, end.start(),
                       body[content_start:end.start()], attrs.get("sha"), attrs.get("agent"),
                       intact=not duplicated)


def section_of_run(body: str, run_id: str) -> SectionSpan | None:
    """The generated section whose begin marker names run ``run_id`` (the run that wrote it last)."""
    key = next((key for key, _, attrs in _begins(body) if attrs.get("run") == run_id), None)
    return find_section(body, key) if key is not None else None


def _own_heading(body: str, key: str) -> re.Match[str] | None:
    fences = code_fence_ranges(body)
    return next((m for m in _HEADING.finditer(body)
                 if section_key(heading_title(m["title"])) == key and not in_ranges(m.start(), fences)), None)


def _text_under_heading(body: str, heading: re.Match[str]) -> str:
    level = len(heading.group(0).strip().split(None, 1)[0])
    fences = code_fence_ranges(body)
    for later in _HEADING.finditer(body, heading.end()):
        later_level = len(later.group(0).strip().split(None, 1)[0])
        if later_level <= level and not in_ranges(later.start(), fences):
            return body[heading.end():later.start()]
    return body[heading.end():]


def section_content(content: str) -> str:
    """``prepare_content`` for a generated section of a note, where a plan's time blocks stay the
    person's checkboxes to tick (``provenance.quote_tasks``)."""
    return prepare_content(content, in_section=True)


def prepare_content(content: str, in_section: bool = False) -> str:
    """Generated text made safe to put between markers: marker lines the model wrote are
    defused (they would cut the section short), its checkboxes quoted (routine's words are
    never the person's tasks: ``routine.vault.provenance``), an unclosed code fence is closed
    (it would hide our end marker), outer blank lines go, and it ends with one newline."""
    text = content.replace("\r\n", "\n")
    fences = code_fence_ranges(text)
    lines, pos = [], 0
    for line in text.split("\n"):
        if not in_ranges(pos, fences):
            line = defuse_markers(line)
        lines.append(line)
        pos += len(line) + 1
    text = quote_tasks("\n".join(lines).strip("\n"), in_section)
    fence = unclosed_fence(text)
    if fence:
        text += "\n" + fence
    return text + "\n" if text else ""


def _begin_line(key: str, agent: str, sha: str, run: str | None = None, after: str | None = None) -> str:
    agent = re.sub(r"[\s%]+", "-", agent.strip()) or "routine"
    run = re.sub(r"[\s%]+", "-", run.strip()) if run else ""
    # The section's own provenance: who wrote it, in which run (the note's properties list all);
    # ``after``: the generated section just above it, so a deleted neighbour goes back in place.
    return (f"%% routine:begin {key} agent={agent} sha={sha}{f' run={run}' if run else ''}"
            f"{f' after={after}' if after else ''} %%")


def _key_above(body: str, pos: int, key: str) -> str | None:
    """The generated section nearest above ``pos`` (other than ``key``)."""
    above = [k for k, m, _ in _begins(body) if m.start() < pos and k != key]
    return above[-1] if above else None


def _place_for(body: str, key: str) -> int | None:
    """Where a missing section ``key`` belongs: just above the section that was written below
    it (its marker says ``after=key``), heading included; None when nothing says."""
    for _, m, attrs in _begins(body):
        if attrs.get("after", "").lower() == key:
            start = m.start()
            line_start = body.rfind("\n", 0, max(start - 1, 0)) + 1 if start else 0
            line = body[line_start:start].rstrip("\n")
            return line_start if start and _HEADING.fullmatch(line) else start
    return None


def end_line(key: str) -> str:
    return f"%% routine:end {key} %%"


def upsert_section(body: str, title: str, content: str, agent: str, run: str | None = None) -> SectionUpdate:
    """Put ``content`` in the section ``title`` of ``body`` unless the person owns it now.

    A new section goes where it was before, if the section written below it remembers
    (``after=``: the person deleted it so the agent would write it afresh), else at the end."""
    key = section_key(title)
    text = section_content(content)
    span = find_section(body, key)
    place = _place_for(body, key) if span is None else None
    after = _key_above(body, span.start if span else len(body) if place is None else place, key)
    block = f"{_begin_line(key, agent, content_sha(text), run, after)}\n{text}{end_line(key)}"
    if span is None:
        heading = _own_heading(body, key)
        if heading is not None:  # the person wrote this heading; what is under it is theirs
            return SectionUpdate(body, SectionOutcome.PERSON_EDITED, key, "own-heading",
                                 _text_under_heading(body, heading))
        heading_line = f"## {' '.join(title.split())}"
        if place is not None:
            return SectionUpdate(f"{body[:place]}{heading_line}\n{block}\n\n{body[place:]}", SectionOutcome.CREATED,
                                 key)
        if not body:
            return SectionUpdate(f"{heading_line}\n{block}\n", SectionOutcome.CREATED, key)
        joiner = "\n" if body.endswith("\n") else "\n\n"
        return SectionUpdate(f"{body}{joiner}{heading_line}\n{block}\n", SectionOutcome.CREATED, key)
    if not span.intact:  # never guess where the person's text ends
        reason = "no-end-marker" if span.end is None else "duplicated"
        return SectionUpdate(body, SectionOutcome.PERSON_EDITED, key, reason, span.content)
    current_sha = content_sha(span.content)
    if current_sha != span.sha:
        if _normalised(span.content) == _normalised(text):
            # The person's edit already says what we would write: only the stored hash moves.
            return SectionUpdate(body[:span.start] + block + body[span.end:], SectionOutcome.REPLACED, key,
                                 current=span.content)
        return SectionUpdate(body, SectionOutcome.PERSON_EDITED, key, "edited", span.content)
    if _normalised(span.content) == _normalised(text) and span.agent == agent:
        return SectionUpdate(body, SectionOutcome.UNCHANGED, key, current=span.content)
    return SectionUpdate(body[:span.start] + block + body[span.end:], SectionOutcome.REPLACED, key,
                         current=span.content)


def pointer_line(key: str, proposal_link: str) -> str:
    link = proposal_link if proposal_link.startswith("[[") else wikilink_for(proposal_link)
    return (f"> [!info] routine: a newer version of this section is waiting in {link} "
            f"%% routine:proposal {key} %%")


def pointers(body: str, key: str) -> list[re.Match[str]]:
    fences = code_fence_ranges(body)
    return [m for m in _POINTER.finditer(body) if m["key"].lower() == key.lower()
            and not in_ranges(m.start(), fences)]


def _insert_pointer_after(body: str, pos: int, line: str) -> str:
    """Put the pointer on its own line after the line ending at ``pos``, followed by a blank
    line: that ends the callout (text right after it would be read as part of it) and gives
    the pointer one fixed shape, so clearing it restores the note exactly."""
    if pos >= len(body):
        return body + "\n" + line
    return body[:pos] + "\n" + line + "\n" + body[pos:]


def mark_pending_proposal(body: str, key: str, proposal_link: str) -> str:
    """Put (or update) the one pointer line to the proposal for section ``key``.

    It goes right after the end marker, outside the markers, so nothing the person wrote
    inside changes. Without an end marker it goes before the begin marker; for a heading
    the person wrote themselves, right under it.
    """
    key = section_key(key)
    line = pointer_line(key, proposal_link)
    existing = pointers(body, key)
    if existing:  # update the first, drop any copies
        for extra in reversed(existing[1:]):
            body = _remove_line(body, extra)
        first = existing[0]
        return body[:first.start()] + line + body[first.end():]
    span = find_section(body, key)
    if span is not None and span.end is not None:
        return _insert_pointer_after(body, span.end, line)
    if span is not None:
        return body[:span.start] + line + "\n\n" + body[span.start:]
    heading = _own_heading(body, key)
    if heading is not None:
        return _insert_pointer_after(body, heading.end(), line)
    joiner = "" if not body else ("\n" if body.endswith("\n") else "\n\n")
    return f"{body}{joiner}{line}\n"


def _remove_line(body: str, match: re.Match[str]) -> str:
    start, stop = match.start(), match.end()
    if body.startswith("\n", stop):
        stop += 1
        if body.startswith("\n", stop):  # the blank line the pointer brought with it
            stop += 1
    elif start > 0 and body[start - 1] == "\n":
        start -= 1  # the pointer was the last line: take the newline before it instead
    return body[:start] + body[stop:]


def clear_pending_proposal(body: str, key: str) -> str:
    """Remove the pointer line(s) for section ``key`` (a later run wrote the section itself)."""
    for match in reversed(pointers(body, section_key(key))):
        body = _remove_line(body, match)
    return body


def section_region(body: str, title: str) -> tuple[str | None, str]:
    """The text a section holds now: between routine's markers, else under the person's own
    heading of that name. Returns (text, "") or (None, why it has none to speak of)."""
    key = section_key(title)
    span = find_section(body, key)
    if span is not None:
        if not span.intact:
            return None, "its routine markers are damaged (an end marker is missing or the begin marker is doubled)"
        return span.content, ""
    heading = _own_heading(body, key)
    if heading is not None:
        return _text_under_heading(body, heading), ""
    return None, f"the section {title!r} is not in the note"


def apply_approved(body: str, title: str, content: str, agent: str, base: str | None) -> tuple[str | None, str]:
    """Put approved ``content`` in section ``title`` if the region is as it was when proposed
    (its hash is ``base``; None: the section did not exist). Returns (new body, "") or
    (None, why not) — the person's approval never lets routine overwrite a later edit."""
    key = section_key(title)
    text = section_content(content)
    block = f"{_begin_line(key, agent, content_sha(text))}\n{text}{end_line(key)}"
    span = find_section(body, key)
    region, why = section_region(body, title)
    if span is not None and not span.intact:
        return None, why
    if region is None:
        if base is not None:
            return None, f"the section {title!r} is no longer in the note"
        joiner = "" if not body else ("\n" if body.endswith("\n") else "\n\n")
        return f"{body}{joiner}## {' '.join(title.split())}\n{block}\n", ""
    if base is None or content_sha(region) != base:
        return None, f"the section {title!r} changed after this proposal was written"
    if span is not None:
        return body[:span.start] + block + body[span.end:], ""
    heading = _own_heading(body, key)
    if heading is None:  # section_region found the region under this heading
        return None, f"the section {title!r} is not in the note"
    end = heading.end() + len(region)
    rest = body[end:].lstrip("\n")
    return body[:heading.end()] + "\n" + block + ("\n\n" + rest if rest else "\n"), ""
