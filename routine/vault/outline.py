"""A note as a reader sees it: its properties, and its text cut into sections at headings,
with Obsidian comments (``%% … %%``, routine's own markers among them) taken out.

Pure: text in, outline out. The runner uses it to give a model the sections of a long note
that matter, not a cut-off head; the search index cuts notes the same way.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from routine.vault.notes import code_fence_ranges, in_ranges

# A heading line, its text taken whole (greedy: linear) and its closing #s and blanks stripped in
# code by ``heading_title`` (a lazy text before `(?:[ \t]+#+)?[ \t]*$` is cubic in a run of blanks).
HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+([^\n]*)$", re.MULTILINE)
_COMMENT = re.compile(r"%%.*?%%", re.DOTALL)
_BLANK_RUNS = re.compile(r"\n{3,}")
# Properties routine stamps on what it writes: bookkeeping, not content a model needs.
PROVENANCE_PROPERTIES = frozenset({"agent", "agents", "model", "run", "runs", "generated", "sources", "routine",
                                   "position"})


@dataclass(frozen=True)
class Section:
    heading: str | None  # None: the text before the first heading
    level: int
    text: str            # the section's own text, without its heading line

    def render(self) -> str:
        body = self.text.strip()
        if self.heading is None:
            return body
        return f"{'#' * self.level} {self.heading}\n{body}".rstrip()


def heading_title(raw: str) -> str:
    """A heading's text as Markdown reads it: `Plan ##` is `Plan`, `C#` stays `C#`, `##` alone stays."""
    text = raw.rstrip(" \t\r")
    bare = text.rstrip("#")
    if bare != text and bare[-1:] in (" ", "\t"):
        text = bare.rstrip(" \t")
    return text.strip()


def strip_comments(text: str) -> str:
    """Obsidian comments out (hidden in reading view; routine's markers are comments too),
    except inside code fences, where ``%%`` is just text."""
    fences = code_fence_ranges(text)
    return _COMMENT.sub(lambda m: m[0] if in_ranges(m.start(), fences) else "", text)


def readable(text: str) -> str:
    """Comments out and the blank runs they leave folded: a note's text as a model gets it."""
    return _BLANK_RUNS.sub("\n\n", strip_comments(text))


def sections(body: str) -> list[Section]:
    """The body's sections in order; each heading owns the text up to the next heading of any
    level. Headings inside code fences are text. Empty sections are kept (a heading can matter)."""
    fences = code_fence_ranges(body)
    starts = [m for m in HEADING.finditer(body) if not in_ranges(m.start(), fences) and heading_title(m[2])]
    out = []
    first = starts[0].start() if starts else len(body)
    if body[:first].strip():
        out.append(Section(None, 0, body[:first]))
    for i, match in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(body)
        out.append(Section(heading_title(match[2]), len(match[1]), body[match.end():end]))
    return out


def find(outline: list[Section], heading: str) -> list[Section]:
    """The section titled ``heading`` (case-insensitive) with its sub-sections."""
    wanted = heading.strip().lower()
    for i, sec in enumerate(outline):
        if sec.heading is not None and sec.heading.lower() == wanted:
            end = next((j for j in range(i + 1, len(outline)) if 0 < outline[j].level <= sec.level), len(outline))
            return outline[i:end]
    return []


def compact_properties(frontmatter: Mapping[str, object]) -> str:
    """Note properties on one line (``period: 2026-Q4 · status: active``), routine's own left out."""
    parts = []
    for key, value in frontmatter.items():
        if key in PROVENANCE_PROPERTIES or value in (None, "", [], {}):
            continue
        if key == "tags":
            value = [t for t in (value if isinstance(value, list) else [value]) if not str(t).startswith("routine/")]
            if not value:
                continue
        if isinstance(value, list):
            value = ", ".join(str(v) for v in value)
        elif isinstance(value, dict):
            value = ", ".join(f"{k}: {v}" for k, v in value.items())
        parts.append(f"{key}: {value}")
    return " · ".join(parts)
