"""Which files in the vault are the person's notes, as far as watching is concerned.

Ignored: anything under a hidden folder or with a hidden name (`.obsidian/`, `.trash/`,
`.git/`, our own `.name.routine-tmp-…` temp files, editors' `.swp` files), editors' backup
and temp files (`note.md~`, `note.md.tmp`, `#note.md#`), and the conflict copies sync tools
leave beside a note (Syncthing's `.sync-conflict-`, Dropbox's and Obsidian Sync's
"conflicted copy"): reacting to those would file or summarise a duplicate.
"""

from __future__ import annotations

import re

_CONFLICT = re.compile(r"\.sync-conflict-\d{8}-\d{6}|[( ]conflicted copy|\(Conflict\)|\.orig$", re.IGNORECASE)
_EDITOR_TEMP = re.compile(r"(~|\.tmp|\.temp|\.swp|\.swx|\.bak|\.part|\.crdownload)$|^#.*#$|^\.#", re.IGNORECASE)


def ignored(rel: str) -> bool:
    """True when the vault-relative POSIX path ``rel`` is not a note of the person's."""
    parts = rel.split("/")
    if any(part.startswith(".") for part in parts):
        return True
    name = parts[-1]
    return bool(_EDITOR_TEMP.search(name) or _CONFLICT.search(name))


def is_note(rel: str) -> bool:
    return rel.lower().endswith(".md") and not ignored(rel)


def is_searchable(rel: str) -> bool:
    """What the search index reads: the notes, and the PDFs (``routine.vault.pdf``)."""
    return rel.lower().endswith((".md", ".pdf")) and not ignored(rel)
