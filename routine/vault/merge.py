"""A three-way merge of lines (pure): both sides' edits of a common base, when they touch
different lines. Used when a person's save lands on a note routine is replacing at that moment
(``vault/atomic.py``): their edit is carried onto routine's new version instead of lost."""

from __future__ import annotations

from difflib import SequenceMatcher


def _edits(base: list[bytes], other: list[bytes]) -> list[tuple[int, int, list[bytes]]]:
    matcher = SequenceMatcher(None, base, other, autojunk=False)
    return [(i1, i2, other[j1:j2]) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def merge3(base: bytes, ours: bytes, theirs: bytes) -> bytes | None:
    """``base`` with the edits of both ``ours`` and ``theirs``; None when they touch the same
    lines differently. Two insertions at one place keep ours first, then theirs."""
    if ours == base or ours == theirs:
        return theirs
    if theirs == base:
        return ours
    lines = base.splitlines(keepends=True)
    ours_edits = _edits(lines, ours.splitlines(keepends=True))
    theirs_edits = [e for e in _edits(lines, theirs.splitlines(keepends=True)) if e not in ours_edits]
    merged: list[bytes] = []
    pos = 0
    for start, end, replacement in sorted(ours_edits + theirs_edits, key=lambda e: (e[0], e[1] != e[0])):
        if start < pos:
            return None  # both changed these lines
        merged += lines[pos:start] + replacement
        pos = end
    merged += lines[pos:]
    # A last line without a newline followed by inserted lines would glue two lines together.
    out = b""
    for line in merged:
        if out and not out.endswith(b"\n"):
            out += b"\n"
        out += line
    return out
