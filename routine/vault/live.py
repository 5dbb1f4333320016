"""A block of a note that routine keeps current (the dashboard), between its own markers:

    %% routine-live:begin dashboard (kept current by routine; edits inside are replaced) %%
    …
    %% routine-live:end dashboard %%

Only the text between the markers is routine's; everything around it is the person's and is
never changed. The note is rewritten only when the block's text changes (no churn for sync
tools or Obsidian), atomically, and only onto the bytes that were read. A note without the
markers gets the block added at its end.
"""

from __future__ import annotations

from pathlib import Path

from routine.vault.notes import NoteText, code_fence_ranges, in_ranges
from routine.vault.provenance import live_marker
from routine.vault.scope import resolve
from routine.vault.writer import _rewrite

CREATED, REPLACED, UNCHANGED = "created", "replaced", "unchanged"


def _begin(name: str) -> str:
    return f"%% routine-live:begin {name} (kept current by routine; edits inside are replaced) %%"


def _end(name: str) -> str:
    return f"%% routine-live:end {name} %%"


def _span(text: str, name: str) -> tuple[int, int] | None:
    """(start, end) of the block's marker lines, inclusive; None without a begin/end pair."""
    fences = code_fence_ranges(text)
    ends = [m for m in live_marker("end", name).finditer(text) if not in_ranges(m.start(), fences)]
    if not ends:
        return None
    end = ends[0]
    begins = [m for m in live_marker("begin", name).finditer(text, 0, end.start()) if not in_ranges(m.start(), fences)]
    if not begins:
        return None
    return begins[-1].start(), end.end()


def update_live_block(vault_root: Path, rel: str, name: str, content: str, title: str) -> str:
    """Put ``content`` between the ``name`` markers of note ``rel``; created | replaced | unchanged.

    A new note is ``# {title}`` then the block.
    """
    path, tidy = resolve(vault_root, rel)
    block = f"{_begin(name)}\n{content.strip()}\n{_end(name)}"
    outcome = [UNCHANGED]

    def change(current: NoteText | None) -> str | None:
        if current is None:
            outcome[0] = CREATED
            return f"# {title}\n\n{block}\n"
        text = current.text
        span = _span(text, name)
        if span is None:
            new = text.rstrip("\n") + "\n\n" + block + "\n"
        else:
            new = text[:span[0]] + block + text[span[1]:]
        if new == text:
            outcome[0] = UNCHANGED
            return None
        outcome[0] = REPLACED
        return new

    _rewrite(path, tidy, change)
    return outcome[0]
