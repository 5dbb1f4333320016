"""Cutting a note into chunks along its headings (pure: text in, chunks out).

A chunk is what the index embeds and what a search returns: one section of a note (a long
section is cut again at paragraphs), with the heading that lets an agent cite it as
``[[Note#Heading]]``. Its id depends on the note's path and the chunk's own text only, so an
edit elsewhere in the note leaves it alone: only changed chunks are embedded again.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import PurePosixPath

from routine.vault import budget
from routine.vault.frontmatter import parse_frontmatter
from routine.vault.notes import code_fence_ranges, in_ranges, wikilinks
from routine.vault.outline import HEADING, heading_title, strip_comments

# Bump when the chunking changes: an index made by another version is rebuilt.
# 2: a note's properties (frontmatter) are embedded with its first chunk.
CHUNKER_VERSION = 2

# Obsidian's tag: '#' then letters, digits, _ - /, with at least one non-digit.
_TAG = re.compile(r"(?<![\w/#&])#([\w/-]*[^\W\d][\w/-]*)")
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")


@dataclass(frozen=True)
class Chunk:
    id: str
    path: str  # vault-relative, e.g. "Projects/Alpha.md"
    heading: str | None  # the nearest heading above the text; None before the first heading
    ordinal: int  # position in the note, from 0
    body: str  # the note's own text, as shown to a model or a person
    text: str  # what is embedded: the note's title and heading trail, then the body
    sha: str  # sha256 of ``text``
    tags: tuple[str, ...]
    links: tuple[str, ...]


def note_title(rel: str) -> str:
    name = PurePosixPath(rel).name
    return name[:-3] if name.lower().endswith(".md") else name


def clean_text(raw: str) -> str:
    return raw.removeprefix("\ufeff").replace("\r\n", "\n")


def frontmatter_tags(data: object) -> list[str]:
    value = data.get("tags") if isinstance(data, dict) else None
    if isinstance(value, str):
        value = re.split(r"[,\s]+", value)
    if not isinstance(value, list):
        return []
    return [str(tag).strip().lstrip("#") for tag in value if tag is not None and str(tag).strip().lstrip("#")]


def property_line(data: object) -> str:
    """A note's properties as one line of text ("status: active; owner: [[Ada]]"), for the index."""
    if not isinstance(data, dict):
        return ""
    parts = []
    for key, value in data.items():
        if value in (None, "", [], {}):
            continue
        shown = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
        parts.append(f"{key}: {shown}")
    return "; ".join(parts)[:500]


def inline_tags(text: str) -> list[str]:
    fences = code_fence_ranges(text)
    return [m[1] for m in _TAG.finditer(text) if not in_ranges(m.start(), fences)]


def chunk_note(rel: str, raw: str, max_chars: int) -> list[Chunk]:
    """The chunks of the note at ``rel`` whose file text is ``raw``; never empty."""
    text = clean_text(raw)
    split = parse_frontmatter(text)
    body = split.body if split.readable else text
    body = strip_comments(body)
    note_tags = frontmatter_tags(split.data)
    title = note_title(rel)

    pieces: list[tuple[str | None, str, str]] = []  # (heading, trail, text)
    for heading, trail, section in _sections(body):
        for part in _split_long(section.strip(), max_chars):
            pieces.append((heading, trail, part))
    if not pieces:  # an empty note is still found by its title
        pieces.append((None, "", ""))

    chunks: list[Chunk] = []
    seen: dict[str, int] = {}
    properties = property_line(split.data)
    links = _links_by_chunk(rel, [part for _, _, part in pieces])
    for ordinal, (heading, trail, part) in enumerate(pieces):
        head = f"{title}\n{properties}" if ordinal == 0 and properties else title  # found by its properties too
        embedded = f"{head}\n{trail}\n\n{part}" if trail else f"{head}\n\n{part}"
        sha = hashlib.sha256(embedded.encode("utf-8", "surrogatepass")).hexdigest()
        occurrence = seen.get(sha, 0)
        seen[sha] = occurrence + 1
        chunk_id = hashlib.sha256(f"{rel}\0{sha}\0{occurrence}".encode("utf-8", "surrogatepass")).hexdigest()[:32]
        tags = tuple(dict.fromkeys([*note_tags, *inline_tags(part)]))
        chunks.append(Chunk(chunk_id, rel, heading, ordinal, part, embedded, sha, tags, links[ordinal]))
    return chunks


def _links_by_chunk(rel: str, parts: list[str]) -> list[tuple[str, ...]]:
    """Each chunk's links (its metadata), the note's first ``budget.MAX_LINKS`` in all (said once when cut)."""
    found = [wikilinks(part) for part in parts]
    total = sum(len(links) for links in found)
    if total <= budget.MAX_LINKS:
        return [tuple(links) for links in found]
    budget.links(rel, [link for links in found for link in links], "the search index's link metadata")
    left, out = budget.MAX_LINKS, []
    for links in found:
        out.append(tuple(links[:left]))
        left -= len(out[-1])
    return out


def _sections(body: str) -> Iterator[tuple[str | None, str, str]]:
    """(heading, heading trail, text) for each section; headings inside code fences are text."""
    fences = code_fence_ranges(body)
    starts = [m for m in HEADING.finditer(body) if not in_ranges(m.start(), fences) and heading_title(m[2])]
    stack: list[tuple[int, str]] = []  # (level, heading) of the enclosing headings
    first = starts[0].start() if starts else len(body)
    if body[:first].strip():
        yield None, "", body[:first]
    for i, match in enumerate(starts):
        level, heading = len(match[1]), heading_title(match[2])
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, heading))
        end = starts[i + 1].start() if i + 1 < len(starts) else len(body)
        content = body[match.end():end]
        if content.strip():
            yield heading, " > ".join(h for _, h in stack), content


def _split_long(text: str, max_chars: int) -> list[str]:
    """``text`` in pieces of at most ``max_chars``, cut at paragraphs, else lines, else anywhere."""
    if len(text) <= max_chars:
        return [text] if text else []
    pieces: list[str] = []
    current = ""
    for paragraph in _PARAGRAPH_BREAK.split(text):
        paragraph = paragraph.strip("\n")
        for unit in _units(paragraph, max_chars):
            if current and len(current) + 2 + len(unit) > max_chars:
                pieces.append(current)
                current = unit
            else:
                current = f"{current}\n\n{unit}" if current else unit
    if current:
        pieces.append(current)
    return [p for p in (piece.strip() for piece in pieces) if p]


def _units(paragraph: str, max_chars: int) -> list[str]:
    if len(paragraph) <= max_chars:
        return [paragraph]
    units: list[str] = []
    for line in paragraph.split("\n"):
        while len(line) > max_chars:
            cut = line.rfind(" ", 0, max_chars)
            cut = cut if cut > max_chars // 2 else max_chars
            units.append(line[:cut])
            line = line[cut:].lstrip()
        units.append(line)
    merged: list[str] = []
    for unit in units:  # lines rejoin while they fit
        if merged and len(merged[-1]) + 1 + len(unit) <= max_chars:
            merged[-1] += "\n" + unit
        else:
            merged.append(unit)
    return merged
