"""Tools over the vault: read, list, search and write notes — each within the agent's scopes.

The model's arguments are untrusted text: every path goes through ``routine.vault.scope``
(no '..', no absolute paths, no symlink out, only the agent's globs), and writes go through
``routine.vault.write_output``, so ``approval: required`` turns them into proposals.
"""

from __future__ import annotations

import os
from pathlib import Path

from routine.errors import RoutineError
from routine.tools.base import ToolContext, ToolError, tool
from routine.vault import Provenance, WriteTarget, write_output
from routine.vault.files import vault_files
from routine.vault.guard import Guard
from routine.vault.notes import read_note as read
from routine.vault.notes import resolve_wikilink
from routine.vault.pdf import PAGE, is_pdf, read_pdf
from routine.vault.scope import check_read, in_scope, normalise_rel, resolve
from routine.watch.filters import is_searchable

MAX_READ_CHARS = 12_000
MAX_LIST = 100


def _refused(exc: RoutineError) -> ToolError:
    return ToolError(exc.message)


@tool("read_note", "Read a note (properties and text) or a PDF ('Spec.pdf#page=3'). Use the path from "
      "list_notes or search_notes, such as 'Plans/OKRs.md'.",
      {"path": {"type": "string", "description": "the note's path from the vault root, e.g. 'Daily/2026-11-22.md'"}},
      required=["path"])
def read_note(ctx: ToolContext, path: str) -> str:
    rel, _, anchor = path.strip().removeprefix("[[").removesuffix("]]").partition("#")
    if not rel.lower().endswith((".md", ".pdf")):
        rel = resolve_wikilink(ctx.vault, rel) or rel + ".md"
    try:
        check_read(ctx.vault, list(ctx.agent.reads), rel, ctx.agent.name)
    except RoutineError as exc:
        raise _refused(exc) from None
    if is_pdf(rel):
        return _read_pdf(ctx, rel, anchor)
    try:
        note = read(ctx.vault, rel)
    except (FileNotFoundError, IsADirectoryError):
        raise ToolError(f"There is no note {rel}; list_notes shows what exists.") from None
    except RoutineError as exc:  # a pipe, a device, a symlink loop, a note past the size cap
        raise _refused(exc) from None
    text = note.body.strip()
    cut = ""
    if len(text) > MAX_READ_CHARS:
        cut = f"\n\n[… {len(text) - MAX_READ_CHARS} more characters not shown]"
        text = text[:MAX_READ_CHARS]
    props = ", ".join(f"{k}: {v}" for k, v in note.frontmatter.items() if k not in ("sources",))
    return f"# {note.rel}\n" + (f"Properties: {props}\n" if props else "") + f"\n{text}{cut}"


def _read_pdf(ctx: ToolContext, rel: str, anchor: str) -> str:
    """A PDF's text, or one page's (`Papers/Spec.pdf#page=3`), as it is cited."""
    page = PAGE.match(anchor.strip())
    try:
        text = read_pdf(ctx.vault / rel, rel, int(page[1]) if page else None)
    except FileNotFoundError:
        raise ToolError(f"There is no PDF {rel}; list_notes shows what exists.") from None
    except RoutineError as exc:
        raise _refused(exc) from None
    cut = f"\n\n[… {len(text) - MAX_READ_CHARS} more characters not shown]" if len(text) > MAX_READ_CHARS else ""
    return f"# {rel}" + (f"#{anchor.strip()}" if page else "") + f" (PDF)\n\n{text[:MAX_READ_CHARS]}{cut}"


@tool(
    "list_notes",
    "List the notes in a folder of the vault (newest first), with when each was last changed.",
    {
        "folder": {"type": "string", "description": "a folder from the vault root, e.g. 'Inbox'; empty for all"},
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": MAX_LIST,
            "description": "at most this many (default 30)",
        },
    },
)
def list_notes(ctx: ToolContext, folder: str = "", limit: int = 30) -> str:
    from datetime import datetime

    base = ctx.vault
    prefix = ""
    if folder.strip().strip("/"):
        try:
            prefix = normalise_rel(folder.strip().strip("/")) + "/"
            base = resolve(ctx.vault, prefix)[0]  # a folder linked to outside the vault is refused
        except RoutineError as exc:
            raise _refused(exc) from None
    inside = os.path.relpath(base, ctx.vault).replace(os.sep, "/")
    inside = "" if inside == "." else inside + "/"
    found = [(_mtime(base / name), inside + name) for name in vault_files(base)
             if is_searchable(inside + name) and in_scope(list(ctx.agent.reads), inside + name)]
    if not found:
        return f"No notes you may read in {prefix or 'the vault'}."
    found.sort(reverse=True)
    lines = [f"- {rel} (changed {datetime.fromtimestamp(m).strftime('%Y-%m-%d %H:%M')})" for m, rel in found[:limit]]
    more = f"\n({len(found) - limit} more not shown)" if len(found) > limit else ""
    return f"{len(found)} note(s) in {prefix or 'the vault'}:\n" + "\n".join(lines) + more


def _mtime(path: Path) -> float:
    try:
        return os.path.getmtime(path)
    except OSError:  # gone since the listing
        return 0.0


@tool("search_notes", "Search the vault by meaning; returns the best matching notes with the heading and a "
      "snippet, to cite as [[Note#Heading]] or read with read_note.",
      {"query": {"type": "string", "description": "what to look for, in a few words"},
       "k": {"type": "integer", "minimum": 1, "maximum": 20, "description": "how many results (default 5)"}},
      required=["query"])
def search_notes(ctx: ToolContext, query: str, k: int = 5) -> str:
    if not query.strip():
        raise ToolError("search_notes needs a query: a few words of what to look for.")
    if ctx.search is None:
        raise ToolError(
            "Search is not available right now (the vault index is not built); use list_notes and read_note."
        )
    hits = ctx.search(query, k, list(ctx.agent.reads))
    if not hits:
        return f"Nothing in the notes you may read matches {query!r}."
    lines = []
    for hit in hits:
        lines.append(f"- {hit['link']} (path {hit['path']}): {hit.get('snippet', '').strip()[:300]}")
    return "\n".join(lines)


@tool("write_note", "Write to the vault: a section of a note (with section), an entry at the end of a log note "
      "(append: true), or a new note. Writes outside your scope are refused; an existing note is never replaced.",
      {"path": {"type": "string", "description": "the note's path from the vault root, e.g. 'Inbox/Filed.md'"},
       "content": {"type": "string", "description": "the markdown to write"},
       "section": {"type": "string", "description": "the section's title, to write inside that section"},
       "append": {"type": "boolean", "description": "true to add an entry at the end of the note"}},
      required=["path", "content"])
def write_note(ctx: ToolContext, path: str, content: str, section: str = "", append: bool = False) -> str:
    rel = path.strip().removeprefix("[[").removesuffix("]]")
    if not rel.lower().endswith(".md"):
        rel += ".md"
    if not content.strip():
        raise ToolError("write_note needs content: the markdown to write.")
    if append and section:
        raise ToolError("write_note takes either section or append, not both.")
    target = WriteTarget(append=rel) if append else WriteTarget(note=rel, section=section.strip() or None)
    model = ctx.config.models[ctx.agent.model].model
    prov = Provenance(agent=ctx.agent.name, model=model, run=ctx.run_id or "", generated=ctx.now)
    try:
        with ctx.write_gate():
            result = write_output(
                ctx.vault,
                target,
                content,
                prov,
                list(ctx.agent.writes),
                drafts_dir=ctx.config.layout.drafts,
                approval_required=ctx.agent.approval == "required",
                guard=Guard.of(ctx.config),
                proposals=ctx.agent.proposal_writes,
            )
    except RoutineError as exc:
        raise _refused(exc) from None
    ctx.wrote.append(result)
    return result.message
