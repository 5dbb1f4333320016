"""What a reply may rest on (``Grounds``): the texts its model was shown, and the notes its agent
may read, each read into ``Facts`` (its lines' words, figures and dates) once per change of the
note. The claims are checked against them in ``routine/vault/grounding.py``."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import date
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import Callable

from routine.vault.figures import Figure, Known, Line, figures_of, words_of
from routine.vault.files import read_text, vault_files
from routine.vault.mentions import dates_in, known_dates, without_dates
from routine.vault.notes import resolve_wikilink


@dataclass(frozen=True)
class Facts:
    """What one text states: its lines (words, figures, dates), dates, and words as written."""

    known: Known
    dates: frozenset[date]
    words: frozenset[str]      # every word, lowercased
    capitals: frozenset[str]   # words written with a capital, lowercased
    text: str
    lower: frozenset[str] = frozenset()  # words written in lower case (common words, not names)


_HEADING = re.compile(r"\s{0,3}(#{1,6})\s")


def facts_of(text: str, today: date) -> Facts:
    lines: list[Line] = []
    block, header, in_table = 0, frozenset[str](), False
    path: dict[int, frozenset[str]] = {}  # the headings a line is under, by level
    for raw in text.splitlines():
        if not raw.strip():
            block, in_table = block + 1, False
            continue
        words, table, heading = words_of(raw), raw.lstrip().startswith("|"), _HEADING.match(raw)
        if heading:
            level = len(heading[1])
            path = {n: w for n, w in path.items() if n < level} | {level: words}
        header = words if table and not in_table else header
        in_table = table
        context = frozenset().union(*path.values()) | (header if table else frozenset())
        lines.append(Line(words, tuple(figures_of(without_dates(raw))), tuple(known_dates(raw, today)),
                          block, table, heading is not None, context))
        for written in dates_in(raw):
            if written.year and written.year not in {f.value for f in lines[-1].figures}:
                lines[-1] = replace(lines[-1], figures=lines[-1].figures + (_year(written.year),))
    words = re.findall(r"[^\W\d_][\w'’-]*", text)
    return Facts(Known(lines), frozenset(d for line in lines for d in line.dates),
                 frozenset(w.lower() for w in words), frozenset(w.lower() for w in words if w[0].isupper()), text,
                 frozenset(w for w in words if w[0].islower()))


def _year(year: int) -> Figure:
    return Figure(float(year), 0, "plain", 1.0, str(year))


@dataclass
class Grounds:
    """What a reply may rest on: the texts the model was shown, and the notes the agent may read."""

    shown: str                                      # prompt messages and tool results, joined
    today: date
    readable: Callable[[str], bool]                 # a wikilink target names a note the agent may read
    names: frozenset[str] = frozenset()             # names of notes the agent may read, lowercased
    notes: Callable[[], list[tuple[str, Facts]]] = lambda: []   # (path, facts) of the notes it may read
    _facts: Facts | None = field(default=None, repr=False)
    _readable: list[tuple[str, Facts]] | None = field(default=None, repr=False)

    @property
    def facts(self) -> Facts:
        if self._facts is None:
            self._facts = facts_of(self.shown, self.today)
        return self._facts

    def readable_facts(self) -> list[tuple[str, Facts]]:
        """The notes the agent may read, read once per check (and only for a claim the shown text
        does not support)."""
        if self._readable is None:
            self._readable = self.notes()
        return self._readable


@lru_cache(maxsize=1024)
def _note_facts(path: str, mtime_ns: int, size: int, today: date) -> Facts | None:
    """A note's facts, read again only when it changed (its size or time)."""
    try:
        return facts_of(read_text(path), today)
    except OSError:
        return None


def grounds_for(vault_root: Path, may_read: Callable[[str], bool], shown: list[str], today: date,
                skip: tuple[str, ...] = ()) -> Grounds:
    """The grounds of a reply by an agent that may read what ``may_read`` admits (the scope resolver's
    answer, ``routine.access``) and was given the texts ``shown``. ``skip``: folders whose notes are
    no support (proposals: a held reply must not ground itself the next time)."""
    every = vault_files(vault_root)
    rels = [rel for rel in every if rel.lower().endswith(".md") and may_read(rel)
            and not any(rel.startswith(s.rstrip("/") + "/") for s in skip)]

    def readable(target: str) -> bool:
        rel = resolve_wikilink(vault_root, target)
        return rel is not None and may_read(rel)

    def notes() -> list[tuple[str, Facts]]:
        out = []
        for rel in rels:
            try:
                st = (vault_root / rel).stat()
            except OSError:
                continue
            facts = _note_facts(str(vault_root / rel), st.st_mtime_ns, st.st_size, today)
            if facts is not None:
                out.append((rel, facts))
        return out

    names = {PurePosixPath(rel).stem.lower() for rel in rels}
    for rel in every:  # a person's or project's note names them, read or not (a name is not the note's content)
        top = rel.split("/", 1)[0]
        if top in ("People", "Projects") and rel.lower().endswith(".md"):
            names.add(PurePosixPath(rel).stem.lower())
            if top == "Projects" and rel.count("/") >= 2:
                names.add(rel.split("/")[1].lower())  # Projects/Atlas/…: the project is Atlas
    return Grounds("\n".join(shown), today, readable, frozenset(names), notes)
