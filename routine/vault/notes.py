"""Reading notes: text as Obsidian sees it, frontmatter, code fences and wikilinks."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from urllib.parse import quote

from routine.errors import PathEscape
from routine.jsonvalue import Parsed
from routine.vault.files import decode_note, read_regular, vault_files
from routine.vault.frontmatter import (
    join_frontmatter,
    parse_frontmatter,
    split_frontmatter,
)
from routine.vault.scope import normalise_rel, resolve

__all__ = [
    "Note", "NoteText", "code_fence_ranges", "in_ranges", "join_frontmatter", "load_note_text",
    "read_note", "resolve_wikilink", "split_frontmatter", "unclosed_fence", "wikilink_for", "wikilinks",
]

BOM = "\ufeff"


@dataclass
class Note:
    rel: str
    frontmatter: Parsed
    body: str
    mtime: float
    frontmatter_error: str | None = None  # set when the frontmatter is there but unreadable

    @property
    def name(self) -> str:
        base = PurePosixPath(self.rel).name
        return base[:-3] if base.lower().endswith(".md") else base

    @property
    def links(self) -> list[str]:
        return wikilinks(self.body)


@dataclass(frozen=True)
class NoteText:
    """A note file's text for rewriting, with what is needed to write it back unchanged.

    Bytes that are not UTF-8 survive as surrogate escapes, a BOM is put back, and a file
    written with CRLF everywhere gets CRLF back: routine changes only what it means to.
    A file with mixed line endings is kept exactly as it is (our own lines use LF).
    """

    text: str     # BOM removed; CRLF turned into LF only when the whole file used CRLF
    raw: bytes    # the bytes read, to notice an edit made while routine was working
    bom: bool
    crlf: bool

    def encode_like(self, text: str) -> str:
        if self.crlf:
            text = text.replace("\r\n", "\n").replace("\n", "\r\n")
        return (BOM + text) if self.bom else text


def load_note_text(path: Path) -> NoteText | None:
    """The file's text for rewriting, or None when there is no file."""
    try:
        raw = read_regular(path)
    except FileNotFoundError:
        return None
    return note_text(raw)


def note_text(raw: bytes) -> NoteText:
    """A note's bytes as text for rewriting (its BOM and line endings remembered)."""
    text = raw.decode("utf-8", errors="surrogateescape")
    bom = text.startswith(BOM)
    if bom:
        text = text[1:]
    crlf = "\r\n" in text and text.count("\r\n") == text.count("\n")
    if crlf:
        text = text.replace("\r\n", "\n")
    return NoteText(text=text, raw=raw, bom=bom, crlf=crlf)


def read_note(vault_root: Path, rel: str) -> Note:
    """Read a note for an agent or a listing (never for rewriting: see load_note_text)."""
    path, tidy = resolve(vault_root, rel)
    raw = read_regular(path, label=tidy)
    mtime = path.stat().st_mtime
    text = decode_note(raw, tidy).removeprefix(BOM).replace("\r\n", "\n")
    split = parse_frontmatter(text)
    if not split.readable:
        return Note(tidy, {}, text, mtime, frontmatter_error=split.error)
    return Note(tidy, split.data, split.body, mtime)


_FENCE_OPEN = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
_FENCE_CLOSE = re.compile(r" {0,3}(`{3,}|~{3,})[ \t]*")


def _scan_fences(text: str) -> tuple[list[tuple[int, int]], str | None]:
    ranges: list[tuple[int, int]] = []
    fence: str | None = None
    start = pos = 0
    for line in text.splitlines(keepends=True):
        bare = line.rstrip("\r\n")
        if fence is None:
            opened = _FENCE_OPEN.fullmatch(bare)
            # A backtick fence's info string may not contain backticks (that is inline code).
            if opened and not (opened[1][0] == "`" and "`" in opened[2]):
                fence, start = opened[1], pos
        else:
            closed = _FENCE_CLOSE.fullmatch(bare)
            if closed and closed[1][0] == fence[0] and len(closed[1]) >= len(fence):
                ranges.append((start, pos + len(line)))
                fence = None
        pos += len(line)
    return ranges, fence


def code_fence_ranges(text: str) -> list[tuple[int, int]]:
    """(start, end) offsets of every *closed* fenced code block.

    An unclosed fence is not counted as code on purpose: it would otherwise hide every
    routine marker after it, and each run would append a fresh copy of its section.
    """
    return _scan_fences(text)[0]


def unclosed_fence(text: str) -> str | None:
    """The opening fence (like '```') left open at the end of ``text``, if any."""
    return _scan_fences(text)[1]


def in_ranges(offset: int, ranges: list[tuple[int, int]]) -> bool:
    return any(start <= offset < end for start, end in ranges)


_INLINE_CODE = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.DOTALL)
_WIKILINK = re.compile(r"!?\[\[([^\[\]\n]+?)\]\]")
_COMMENT = re.compile(r"%%.*?%%", re.DOTALL)
_ALIAS = re.compile(r"\\?\|")


def wikilinks(text: str) -> list[str]:
    """Link targets in order, each once: [[T]], [[T|alias]], [[T#Heading]], ![[T]] give T.

    Links shown as code (fenced blocks, `inline code`) are examples, not links.
    """
    pieces, last = [], 0
    for start, end in code_fence_ranges(text):
        pieces.append(text[last:start])
        last = end
    pieces.append(text[last:])
    prose = _INLINE_CODE.sub(" ", "\n".join(pieces))
    found: dict[str, None] = {}  # in order, each once (a dict: a note of 10,000 links is not 10,000² looks)
    for match in _WIKILINK.finditer(prose):
        # '\|' is how a link's alias is written inside a table.
        target = _ALIAS.split(match[1], maxsplit=1)[0].split("#", 1)[0].strip()
        if target:
            found[target] = None
    return list(found)


def link_targets(text: str) -> list[str]:
    """Wikilink targets in ``text`` as written, headings kept ("OKRs#KR 1.1"), aliases dropped."""
    found: dict[str, None] = {}
    for match in _WIKILINK.finditer(text):
        target = _ALIAS.split(match[1], maxsplit=1)[0].strip()
        if target:
            found[target] = None
    return list(found)


def hidden_ranges(body: str) -> list[tuple[int, int]]:
    """Code blocks and %% comments: what Obsidian does not show as tasks or headings."""
    return code_fence_ranges(body) + [(m.start(), m.end()) for m in _COMMENT.finditer(body)]


def _with_md(target: str) -> str:
    return target if target.lower().endswith(".md") else target + ".md"


def resolve_wikilink(vault_root: Path, target: str, files: list[str] | None = None) -> str | None:
    """The vault-relative path a wikilink target points to, as Obsidian resolves it; None
    when no note matches (or the target tries to leave the vault).

    A target with a '/' is a path from the vault root (a path suffix also matches, as in
    Obsidian); otherwise the note with that name wins, the one with the shortest path first.
    ``files``: the vault's files (``vault_files``) when the caller has them already.
    """
    target = target.strip().removeprefix("[[").removesuffix("]]").split("|")[0].split("#")[0].strip()
    if not target:
        return None
    try:
        tidy = normalise_rel(target)
    except PathEscape:  # a link out of the vault resolves to nothing
        return None
    files = vault_files(vault_root) if files is None else files
    wanted = {_with_md(tidy).lower(), tidy.lower()}
    if "/" in tidy:
        exact = [rel for rel in files if rel.lower() in wanted]
        candidates = exact or [rel for rel in files if any(rel.lower().endswith("/" + w) for w in wanted)]
    else:
        candidates = [rel for rel in files if rel.rsplit("/", 1)[-1].lower() in wanted]
    if not candidates:
        return None
    # Shortest path first; a note beats an attachment of the same name; an exact-case match
    # beats a case-insensitive one; then alphabetical, so the answer never depends on disk order.
    return min(candidates, key=lambda rel: (rel.count("/"), not rel.lower().endswith(".md"),
                                            not rel.endswith(_with_md(tidy)), len(rel), rel))


def wikilink_for(rel: str) -> str:
    """[[Daily/2026-11-22]] for 'Daily/2026-11-22.md': a link that always resolves to it."""
    return f"[[{rel[:-3] if rel.lower().endswith('.md') else rel}]]"


def obsidian_link(vault_root: Path, rel: str) -> str:
    """The link that opens ``rel`` in Obsidian from anywhere (a phone's notification, a browser):
    ``obsidian://open?vault=NAME&file=PATH``, the vault named by its folder as Obsidian names it."""
    file = rel[:-3] if rel.endswith(".md") else rel
    return f"obsidian://open?vault={quote(vault_root.name, safe='')}&file={quote(file, safe='')}"
