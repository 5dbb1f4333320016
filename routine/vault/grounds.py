"""What a reply may rest on (``Grounds``): the texts its model was shown, and the notes its agent
may read, each read into ``Facts`` (its lines' words, figures and dates) once per change of the
note. The claims are checked against them in ``routine/vault/grounding.py``."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path
from typing import Callable

from routine.vault import budget
from routine.vault.figures import Figure, Known, Line, figures_of, magnitude_keys, words_of
from routine.vault.files import read_text, vault_files
from routine.vault.mentions import dated, dates_in, without_dates
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
    topics: frozenset[str] = frozenset()  # the words of its lines and their headings (words_of)
    values: frozenset[float] = frozenset()  # its figures' values (figures to match, rounded)


_LINK_TARGET = re.compile(r"\[\[[^\]|\n]*\|?")  # [[Note 12|shown]]: the target is a name, not a figure
_SPELLED = re.compile(r"\b(?:ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty"
                    r"|thirty|forty|fifty|sixty|seventy|eighty|ninety|dozen|hundred|thousand|million)\b", re.I)
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
        has_digit = any(c.isdigit() for c in raw)
        figures = tuple(figures_of(without_dates(_LINK_TARGET.sub(" ", raw)))) if has_digit or _SPELLED.search(raw) \
            else ()
        days = dates_in(raw) if has_digit else []
        lines.append(Line(words, figures, tuple(dated(days, today)), block, table, heading is not None, context))
        for written in days:
            if written.year and written.year not in {f.value for f in lines[-1].figures}:
                lines[-1] = replace(lines[-1], figures=lines[-1].figures + (_year(written.year),))
    every: list[str] = re.findall(r"[^\W\d_][\w'’-]*", text)
    return Facts(Known(lines), frozenset(d for line in lines for d in line.dates),
                 frozenset(w.lower() for w in every), frozenset(w.lower() for w in every if w[0].isupper()), text,
                 frozenset(w for w in every if w[0].islower()),
                 frozenset().union(*(line.words | line.context for line in lines)),
                 frozenset(round(f.value, 6) for line in lines for f in line.figures if not (f.label or f.year)))


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
    library: _Library | None = None                 # the vault's notes, for a lookup (``grounds_for``)
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

    def find(self, test: Callable[[Facts], bool], keys: set[str] | None = None,
             need: set[str] | None = None) -> str | None:
        """The first note the agent may read (not shown) whose facts pass ``test``; ``keys``: what
        any such note has one of (``keys_of``: a word, a figure, a day in common with the claim),
        None: any; ``need``: of these too (has:v, a figure; has:d, a date)."""
        if self.library is not None:
            return self.library.find(test, keys or set(), need or set())
        return next((rel for rel, facts in self.readable_facts() if (keys is None or keys & keys_of(facts))
                     and (not need or need & keys_of(facts)) and test(facts)), None)

    def note_facts(self, rel: str) -> Facts | None:
        if self.library is not None:
            return self.library.current(rel)
        return dict(self.readable_facts()).get(rel)

    def is_named(self, name: str) -> bool:
        """A note the agent may read, or a person's or project's note, has this name (lowercased)."""
        return name in self.names or (self.library is not None and self.library.named(name))

    def all_names(self, like: str = "") -> frozenset[str]:
        """The names of the notes the agent may read (``like``: those that may be like it)."""
        return self.names | (self.library.all_names(like) if self.library is not None else frozenset())


_FACTS: dict[str, tuple[int, int, date, Facts]] = {}  # path: (mtime, size, today, facts), read again on a change
_FACTS_KEPT = 50_000


def _note_facts(path: str, today: date, st: os.stat_result | None = None) -> Facts | None:
    """A note's facts, read again only when it changed (its size or time)."""
    try:
        st = st or os.stat(path)
        kept = _FACTS.get(path)
        if kept is not None and kept[:3] == (st.st_mtime_ns, st.st_size, today):
            return kept[3]
        # Of a huge note, its first part (``budget.text``: the check's work is bounded like the graph's).
        facts = facts_of(budget.text(path, read_text(path), "the grounding check"), today)
    except OSError:
        return None
    if len(_FACTS) >= _FACTS_KEPT:
        _FACTS.clear()
    _FACTS[path] = (st.st_mtime_ns, st.st_size, today, facts)
    return facts


_LISTINGS: dict[str, tuple[dict[str, int], list[str]]] = {}  # vault: (folder: mtime, files)


def _listing(root: str) -> list[str]:
    """The vault's files (``vault_files``), walked again only when a folder changed (a file added,
    removed or renamed in it)."""
    kept = _LISTINGS.get(root)
    if kept is not None and all(_mtime(folder) == mtime for folder, mtime in kept[0].items()):
        return kept[1]
    files = vault_files(Path(root))
    folders = {root, *(os.path.join(root, os.path.dirname(rel)) for rel in files)}
    _LISTINGS[root] = ({folder: _mtime(folder) for folder in folders}, files)
    return files


def _mtime(folder: str) -> int:
    try:
        return os.stat(folder).st_mtime_ns
    except OSError:
        return -1


def keys_of(facts: Facts) -> set[str]:
    """What a note can be found by: its topic words (w:), figures (v:), days (d:) and words (n:)."""
    return ({f"w:{w}" for w in facts.topics} | {f"v:{v}" for v in facts.values}
            | {f"d:{d.month}-{d.day}" for d in facts.dates} | {f"n:{w}" for w in facts.words}
            | ({"has:v"} if facts.values else set()) | ({"has:d"} if facts.dates else set())
            | magnitude_keys(x for f in facts.known.figures for x in (f.value, f.base)))


@dataclass
class _Index:
    """A vault's notes by what they can be found by (``keys_of``), kept between checks."""

    keys: dict[str, set[str]] = field(default_factory=dict)   # key: the notes (vault-relative)
    held: dict[str, tuple[Facts, set[str]]] = field(default_factory=dict)  # note: the facts and keys indexed

    def put(self, rel: str, facts: Facts | None) -> None:
        old = self.held.get(rel)
        if old is not None and old[0] is facts:
            return
        for key in old[1] if old else ():
            self.keys.get(key, set()).discard(rel)
        if facts is None:
            self.held.pop(rel, None)
            return
        new = keys_of(facts)
        for key in new:
            self.keys.setdefault(key, set()).add(rel)
        self.held[rel] = (facts, new)


_INDEXES: dict[tuple[str, date], _Index] = {}
LOOKED_AT = 64  # notes a claim is looked for in, those that share most with it (words, figures, days)
_NAMES: dict[tuple[str, tuple[str, ...]], tuple[list[str], dict[str, list[str]]]] = {}
_NOTES: dict[tuple[str, tuple[str, ...]], tuple[list[str], list[str], dict[str, int]]] = {}  # (vault, skip): listing,
# its notes and their order


def _names_of(root: str, files: list[str], skip: tuple[str, ...]) -> dict[str, list[str]]:
    """The names of a vault's notes (lowercased): the notes of each ("": a person's or project's,
    named whoever reads it), kept while the vault's listing is the same."""
    kept = _NAMES.get((root, skip))
    if kept is not None and kept[0] is files:
        return kept[1]
    names: dict[str, list[str]] = {}
    for rel in files:
        if not rel.lower().endswith(".md"):
            continue
        stem = rel.rsplit("/", 1)[-1][:-3].lower()
        if not any(rel.startswith(s.rstrip("/") + "/") for s in skip):
            names.setdefault(stem, []).append(rel)
        top = rel.split("/", 1)[0]
        if top in ("People", "Projects"):  # a person's or project's note names them, read or not
            names.setdefault(stem, []).append("")
            if top == "Projects" and rel.count("/") >= 2:
                names.setdefault(rel.split("/")[1].lower(), []).append("")  # Projects/Atlas/…: Atlas
    _NAMES[(root, skip)] = (files, names)
    return names


@dataclass
class _Library:
    """The notes of a vault an agent may read, looked up claim by claim: each note's facts are kept
    between checks (read again when the note changed) and indexed by their words, figures and days;
    a lookup looks closer only at the notes that share one with the claim, and asks only those
    whether the agent may read them and whether they changed. (A note edited in place is indexed
    as it was until a lookup looks at it or its folder changes: a claim only its new text supports
    is held, never one it no longer supports let through.)"""

    root: str
    files: list[str]
    may_read: Callable[[str], bool]
    skip: tuple[str, ...]
    today: date
    _names: dict[str, list[str]] | None = None
    _listed: list[str] | None = None
    _order: dict[str, int] = field(default_factory=dict)

    def _notes(self) -> list[str]:
        if self._listed is None:
            kept = _NOTES.get((self.root, self.skip))
            if kept is None or kept[0] is not self.files:
                folders = tuple(s.rstrip("/") + "/" for s in self.skip)
                listed = [rel for rel in self.files if rel.lower().endswith(".md")
                          and not (folders and rel.startswith(folders))]
                kept = (self.files, listed, {rel: i for i, rel in enumerate(listed)})
                _NOTES[(self.root, self.skip)] = kept
            self._listed, self._order = kept[1], kept[2]
        return self._listed

    def current(self, rel: str) -> Facts | None:
        facts = _note_facts(os.path.join(self.root, rel), self.today)
        self._index().put(rel, facts)
        return facts

    def _index(self) -> _Index:
        index = _INDEXES.get((self.root, self.today))
        if index is None:  # a new day: the vault's index of an earlier day (and the facts it holds) let go
            for stale in [key for key in _INDEXES if key[0] == self.root]:
                del _INDEXES[stale]
            # and the notes' facts of earlier days (each is read again today when looked at): kept, they
            # held every note ever read, a moved or deleted one too, for the daemon's life
            for path in [p for p, kept in _FACTS.items() if kept[2] != self.today and p.startswith(self.root)]:
                del _FACTS[path]
            if len(_INDEXES) >= 16:
                _INDEXES.clear()
            index = _INDEXES[(self.root, self.today)] = _Index()
        return index

    def find(self, test: Callable[[Facts], bool], keys: set[str], need: set[str]) -> str | None:
        index = self._index()
        notes = self._notes()
        if len(index.held) < len(notes) or any(rel not in index.held for rel in notes[-50:]):
            for rel in notes:  # a note not read yet (the first check, a new note)
                if rel not in index.held:
                    index.put(rel, _note_facts(os.path.join(self.root, rel), self.today))
        shared: dict[str, int] = {}  # note: how many of the claim's keys it has
        for key in keys:
            for rel in index.keys.get(key, ()):
                shared[rel] = shared.get(rel, 0) + 1
        if not keys:
            shared = dict.fromkeys(notes, 0)
        if need:  # what the claim cannot do without (a figure, a date)
            having = set().union(*(index.keys.get(key, ()) for key in need))
            shared = {rel: n for rel, n in shared.items() if rel in having}
        order = self._order
        # the notes that share most with the claim first, LOOKED_AT at most
        for rel in sorted(shared, key=lambda r: (-shared[r], order.get(r, 0)))[:LOOKED_AT]:
            if not self.may_read(rel) or any(rel.startswith(s.rstrip("/") + "/") for s in self.skip):
                continue
            facts = self.current(rel)  # as it is now
            if facts is not None and test(facts):
                return rel
        return None

    def _by_name(self) -> dict[str, list[str]]:
        if self._names is None:
            self._names = _names_of(self.root, self.files, self.skip)
        return self._names

    def named(self, name: str) -> bool:
        return any(rel == "" or self.may_read(rel) for rel in self._by_name().get(name, []))

    def all_names(self, like: str = "") -> frozenset[str]:
        """The names an agent may read; ``like``: only those that begin as it does or share a word."""
        words = set(like.lower().replace("-", " ").split())
        return frozenset(name for name in self._by_name() if (not like or name[:1] == like[:1].lower()
                                                               or words & set(name.split())) and self.named(name))


def grounds_for(vault_root: Path, may_read: Callable[[str], bool], shown: list[str], today: date,
                skip: tuple[str, ...] = ()) -> Grounds:
    """The grounds of a reply by an agent that may read what ``may_read`` admits (the scope resolver's
    answer, ``routine.access``) and was given the texts ``shown``. ``skip``: folders whose notes are
    no support (proposals: a held reply must not ground itself the next time). Nothing is read until
    a claim needs it; the vault's listing and its notes' facts are kept between checks."""
    root = os.fspath(vault_root)
    library = _Library(root, _listing(root), may_read, skip, today)

    def readable(target: str) -> bool:
        rel = resolve_wikilink(vault_root, target, library.files)
        return rel is not None and may_read(rel)

    def notes() -> list[tuple[str, Facts]]:
        out = []
        for rel in library._notes():
            facts = library.current(rel) if may_read(rel) else None
            if facts is not None:
                out.append((rel, facts))
        return out

    return Grounds("\n".join(shown), today, readable, frozenset(), notes, library)
