"""Keep-rate (pure, no journal): how much of a generated section's text is still in the note.

``kept_share(written, now)``: the share of the written text's characters that the text now still
holds, in order. Lines are matched first (a line the person left alone counts whole); the lines of
a region the person changed are then compared character by character, so a word changed in a
long line costs that word, not the line. Text the person added costs nothing: this measures what
of ours they kept, not how much they wrote. A section that is gone keeps 0.
"""

from __future__ import annotations

from difflib import SequenceMatcher
from pathlib import Path

from routine.errors import RoutineError
from routine.vault.frontmatter import parse_frontmatter
from routine.vault.notes import load_note_text
from routine.vault.sections import find_section, section_key, section_region

# A changed region longer than this (characters, either side) is not compared character by
# character (difflib is quadratic there): its lines simply count as not kept.
MAX_CHAR_DIFF = 20_000
# Within a changed region, runs of fewer characters in common are chance (a space, an "e"), not text kept.
MIN_RUN = 4


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.replace("\r\n", "\n").strip("\n").split("\n") if line.strip()]


def kept_share(written: str, now: str | None) -> float:
    """0.0–1.0: how much of ``written`` ``now`` still holds (``now`` None: the section is gone)."""
    ours = _lines(written)
    total = sum(len(line) for line in ours)
    if not total:
        return 1.0
    if now is None:
        return 0.0
    theirs = _lines(now)
    kept = 0
    matcher = SequenceMatcher(None, ours, theirs, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            kept += sum(len(line) for line in ours[i1:i2])
        elif op == "replace":
            before, after = "\n".join(ours[i1:i2]), "\n".join(theirs[j1:j2])
            if len(before) <= MAX_CHAR_DIFF and len(after) <= MAX_CHAR_DIFF:
                chars = SequenceMatcher(None, before, after, autojunk=False)
                same = sum(b.size for b in chars.get_matching_blocks() if b.size >= MIN_RUN)
                kept += min(same, sum(len(x) for x in ours[i1:i2]))
    return min(1.0, kept / total)


def section_now(vault: Path, rel: str, title: str) -> str | None:
    """The text of section ``title`` in note ``rel`` as it is now: between routine's markers
    (damaged markers too: what follows the begin marker), else under the person's own heading of
    that name; None when the note or the section is gone."""
    try:
        current = load_note_text(Path(vault) / rel)
    except (OSError, UnicodeDecodeError, RoutineError):  # not a readable note any more: nothing of it is kept
        return None
    if current is None:
        return None
    body = parse_frontmatter(current.text).body
    span = find_section(body, section_key(title))
    if span is not None:
        return span.content
    return section_region(body, title)[0]
