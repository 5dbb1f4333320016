"""A long artifact cut into parts a reviewer's window holds, at its headings.

Pure: text in, parts out, each counting at most ``budget`` tokens by the reviewer's own counter
(``routine.models.tokens``, the one the context planner fits with). Sections are packed in
document order; a section longer than the budget is cut at paragraphs, and a paragraph longer
than that at the longest head that fits. Each part names the sections it holds, so a failing
part's sections can be named in the QA note.
"""

from __future__ import annotations

from dataclasses import dataclass

from routine.models.tokens import Counter, longest_head
from routine.vault.outline import Section, sections

TOP = "(top)"  # the text before the first heading


@dataclass(frozen=True)
class Part:
    text: str
    sections: tuple[str, ...]  # the headings it holds, in order ("(top)" for the text before the first)

    @property
    def label(self) -> str:
        return ", ".join(f"§ {name}" for name in self.sections)


def split_for_review(text: str, budget: int, counter: Counter) -> list[Part]:
    """``text`` in parts of at most ``budget`` tokens each; one part when it fits whole."""
    if counter.text(text) <= budget:
        return [Part(text, tuple(s.heading or TOP for s in sections(text)))]
    parts: list[Part] = []
    held: list[tuple[str, str]] = []  # (section name, its text) in the part being filled
    used = 0
    for section in sections(text):
        for name, piece in _pieces(section, budget, counter):
            cost = counter.text(piece) + 2
            if held and used + cost > budget:
                parts.append(_part(held))
                held, used = [], 0
            held.append((name, piece))
            used += cost
    if held:
        parts.append(_part(held))
    return parts


def _part(held: list[tuple[str, str]]) -> Part:
    names = tuple(dict.fromkeys(name for name, _ in held))
    return Part("\n\n".join(piece for _, piece in held), names)


def _pieces(section: Section, budget: int, counter: Counter) -> list[tuple[str, str]]:
    """The section whole, or cut at paragraphs (a paragraph too long for any part at its head)."""
    name = section.heading or TOP
    whole = section.render()
    if counter.text(whole) + 2 <= budget:
        return [(name, whole)]
    pieces: list[str] = []
    current = ""
    for paragraph in whole.split("\n\n"):
        joined = f"{current}\n\n{paragraph}" if current else paragraph
        if counter.text(joined) + 2 <= budget:
            current = joined
            continue
        if current:
            pieces.append(current)
        while counter.text(paragraph) + 2 > budget:
            head = longest_head(paragraph, budget - 2, counter) or paragraph[:1]
            pieces.append(head)
            paragraph = paragraph[len(head):]
        current = paragraph
    if current.strip():
        pieces.append(current)
    count = len(pieces)
    return [(f"{name} ({i} of {count})" if count > 1 else name, piece) for i, piece in enumerate(pieces, 1)]
