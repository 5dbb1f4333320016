"""The only code that touches notes: scopes, reading, atomic writes, generated sections.

Everything an agent writes goes through ``write_output``; everything it reads goes through
``check_read``. See the modules for the why of each rule.
"""

from routine.vault.atomic import NoteChanged, atomic_create, atomic_write
from routine.vault.bookkeeping import Provenance
from routine.vault.frontmatter import (
                                       FrontmatterSplit,
                                       join_frontmatter,
                                       parse_frontmatter,
                                       split_frontmatter,
                                       update_frontmatter,
)
from routine.vault.live import update_live_block
from routine.vault.notes import Note, NoteText, load_note_text, read_note, resolve_wikilink, wikilink_for, wikilinks
from routine.vault.scope import check_read, check_write, glob_match, in_scope, resolve
from routine.vault.sections import (
                                       SectionSpan,
                                       SectionUpdate,
                                       clear_pending_proposal,
                                       content_sha,
                                       find_section,
                                       mark_pending_proposal,
                                       section_key,
                                       upsert_section,
)
from routine.vault.targets import WriteKind, WriteTarget
from routine.vault.writer import WriteResult, write_output

__all__ = [
    "FrontmatterSplit", "Note", "NoteChanged", "NoteText", "Provenance", "SectionSpan", "SectionUpdate",
    "WriteKind", "WriteResult", "WriteTarget", "atomic_create", "atomic_write", "check_read", "check_write",
    "clear_pending_proposal", "content_sha", "find_section", "glob_match", "in_scope", "join_frontmatter",
    "load_note_text", "mark_pending_proposal", "parse_frontmatter", "read_note", "resolve", "resolve_wikilink",
    "section_key", "split_frontmatter", "update_frontmatter", "update_live_block", "upsert_section", "wikilink_for",
    "wikilinks", "write_output",
]
