"""Objectives and key results in a plan or OKRs note (``Plans/OKRs.md``): headings
``## Objective 1: …`` and key results ``- KR 1.1: …`` (a list item or a heading), as Obsidian shows
them (none in a comment or a code block). The knowledge graph makes them nodes
(``graph/extract.py``), a project's brief quotes the key results its home note links
(``projects/brief.py``)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from routine.vault.notes import hidden_ranges, in_ranges

# "## Objective 1: Ship it" (a heading) and "- KR 1.1: five users…" (a heading or a list item).
_OBJECTIVE = re.compile(
    r"^#{1,6}[ \t]+(Objective(?:[ \t]*\d+(?:\.\d+)?)?|O[ \t]*\d+)\b[ \t]*:?[ \t]*(.*)$", re.MULTILINE
)
_KEY_RESULT = re.compile(r"^(?:[ \t]*[-*+][ \t]+|#{1,6}[ \t]+)(KR[ \t]*\d+(?:\.\d+)*)[ \t]*:?[ \t]*(.*)$",
                         re.MULTILINE | re.IGNORECASE)


class OkrKind(Enum):
    OBJECTIVE = "objective"
    KEY_RESULT = "key_result"


@dataclass(frozen=True)
class OkrItem:
    kind: OkrKind
    name: str        # "Objective 1", "KR 1.1": what ``[[OKRs#KR 1.1]]`` names
    text: str        # what follows the name: "5 people use it every week — current 0 / target 5"
    objective: str | None  # a key result's objective (its name)

    @property
    def line(self) -> str:
        return f"{self.name}: {self.text}" if self.text else self.name


def okr_items(body: str) -> list[OkrItem]:
    """Objectives (headings) and key results (headings or list items) of a plan or OKRs note,
    in order, each once; those in comments or code blocks left out (Obsidian does not show them)."""
    hidden = hidden_ranges(body)
    found = sorted([(m.start(), OkrKind.OBJECTIVE, m) for m in _OBJECTIVE.finditer(body)] +
                   [(m.start(), OkrKind.KEY_RESULT, m) for m in _KEY_RESULT.finditer(body)], key=lambda t: t[0])
    items: list[OkrItem] = []
    objective = None
    for start, kind, match in found:
        if in_ranges(start, hidden):
            continue
        name = re.sub(r"\s+", " ", match[1]).strip()
        if any(item.name == name for item in items):
            continue
        if kind is OkrKind.OBJECTIVE:
            objective = name
        items.append(OkrItem(kind, name, match[2].strip(), None if kind is OkrKind.OBJECTIVE else objective))
    return items
