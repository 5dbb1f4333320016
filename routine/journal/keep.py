"""Keep-rate in the journal (table ``written_sections``, migration ``021_keep_rate``): every
generated section as it was written, and how much of it the person kept.

A section is written by a run (``Via.RUN``) or by the person's approval of its proposal
(``Via.APPROVAL``). It is measured once, when it is ``AGE`` (48 h) old: its text in the note then
against the text written (``routine.vault.keep.kept_share``); a section that is gone keeps 0. A
section written again before that (a newer run, an approval) is measured at that moment, against
the text it held just before the new write, and ends ``superseded``: each write answers only for
its own text, up to the moment it was replaced. Measured by the daemon's health monitor each
round, before the Watcher's `journal:` report, and by `routine runs keep`.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from routine.journal.stamps import utc_seconds
from routine.vault.keep import kept_share, section_now

if TYPE_CHECKING:
    from routine.vault.writer import WriteResult

AGE = timedelta(hours=48)
KEPT_WHOLE = 0.995  # at or above: left alone (a trailing space an editor added is no edit)


class Via(str, Enum):
    RUN = "run"            # a run wrote it into the note
    APPROVAL = "approval"  # the person approved its proposal


class Ending(str, Enum):
    KEPT = "kept"              # left alone
    EDITED = "edited"          # the person changed part of it
    DELETED = "deleted"        # the section (or its note) is gone
    SUPERSEDED = "superseded"  # written again before it was 48 h old: measured at that moment


@dataclass(frozen=True)
class Written:
    """A section as it was written."""

    agent: str
    note: str
    section: str
    text: str
    at: datetime
    via: Via = Via.RUN
    block: str | None = None
    run_id: str | None = None


@dataclass(frozen=True)
class KeepRate:
    """How much of one agent's (or one block's) measured sections the person kept: those its runs
    wrote into the note, and apart from them, those the person approved from a proposal."""

    by: str           # agent | block | version (`agent@version`: one version of its note)
    name: str         # the agent, or the block (`fire`: a one-off run)
    sections: int     # measured, written by its runs
    kept: float | None  # their mean share kept, 0.0-1.0 (None: none)
    untouched: int
    edited: int       # rewritten in part or whole (a proposal's run found the person's text: here too)
    deleted: int
    approved: int     # measured, written through an approved proposal
    approved_kept: float | None  # their mean share kept

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> KeepRate:
        return cls(**{k: d[k] for k in cls.__dataclass_fields__})


def is_due(written_at: datetime, now: datetime) -> bool:
    """A section is measured once it is ``AGE`` old (both times timezone-aware)."""
    return now - written_at >= AGE


def ending_of(kept: float, gone: bool) -> Ending:
    if gone:
        return Ending.DELETED
    return Ending.KEPT if kept >= KEPT_WHOLE else Ending.EDITED


class KeepRates:
    def __init__(self, db: sqlite3.Connection):
        self.db = db

    def record(self, written: Written, before: str | None) -> None:
        """``written`` has just landed; ``before``: the section's text just before (None: there
        was none). Earlier writes of that section not yet measured are measured against it."""
        for row in self._open(written.note, written.section):
            share = kept_share(row["text"], before)
            ending = Ending.SUPERSEDED if before is not None else Ending.DELETED
            self._close(row["id"], written.at, share, ending)
        self.db.execute(
            "INSERT INTO written_sections (run_id, agent, block, note, section, via, written_at, text)"
            " VALUES (?,?,?,?,?,?,?,?)",
            (written.run_id, written.agent, written.block, written.note, written.section, written.via.value,
             utc_seconds(written.at), written.text))

    def _open(self, note: str, section: str) -> list[sqlite3.Row]:
        return self.db.execute("SELECT id, text FROM written_sections WHERE note=? AND section=? AND measured_at IS"
                               " NULL ORDER BY id", (note, section)).fetchall()

    def _close(self, row_id: int, at: datetime, share: float, ending: Ending) -> None:
        self.db.execute("UPDATE written_sections SET measured_at=?, kept=?, ending=? WHERE id=?",
                        (utc_seconds(at), round(share, 4), ending.value, row_id))

    def measure_due(self, vault: Path, now: datetime) -> int:
        """Measure every section ``AGE`` old or older and not measured yet; how many were."""
        rows = self.db.execute("SELECT id, note, section, text FROM written_sections WHERE measured_at IS NULL"
                               " AND written_at <= ? ORDER BY id", (utc_seconds(now - AGE),)).fetchall()
        for row in rows:
            current = section_now(vault, row["note"], row["section"])
            share = kept_share(row["text"], current)
            self._close(row["id"], now, share, ending_of(share, current is None))
        return len(rows)

    def pending(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM written_sections WHERE measured_at IS NULL").fetchone()[0])

    def sections(self, since: datetime) -> list[dict[str, Any]]:
        """Each section written since ``since``, newest first, measured or not."""
        return [dict(r) for r in self.db.execute(
            "SELECT w.id, w.run_id, w.agent, w.block, w.note, w.section, w.via, w.written_at, w.measured_at, w.kept,"
            " w.ending, r.prompt_version FROM written_sections w LEFT JOIN runs r ON r.id = w.run_id"
            " WHERE w.written_at >= ? ORDER BY w.written_at DESC, w.id DESC", (utc_seconds(since),))]

    def rates(self, since: datetime) -> list[KeepRate]:
        """Per agent, then per block, then per version of an agent's note (`agent@version`, where its
        runs were made with more than one): the sections written since ``since`` that are measured."""
        rows = [r for r in self.sections(since) if r["measured_at"] is not None]
        out: list[KeepRate] = []
        for by, key in (("agent", "agent"), ("block", "block")):
            groups: dict[str, list[dict[str, Any]]] = {}
            for r in rows:
                groups.setdefault(r[key] or "fire", []).append(r)
            out += [_rate(by, name, group) for name, group in sorted(groups.items())]
        versions: dict[str, dict[str, list[dict[str, Any]]]] = {}
        for r in rows:
            if r["prompt_version"]:
                versions.setdefault(r["agent"], {}).setdefault(r["prompt_version"], []).append(r)
        out += [_rate("version", f"{agent}@{version}", group) for agent, found in sorted(versions.items())
                if len(found) > 1 for version, group in sorted(found.items())]
        return out


def written_by_run(db: sqlite3.Connection, result: WriteResult, section: str | None, agent: str, block: str | None,
                   run_id: str, at: datetime) -> None:
    """A step's write: when a section landed (created or replaced), it is kept as written."""
    if result.section_text is None or not section:
        return
    written = Written(agent, result.rel, " ".join(section.split()), result.section_text, at, block=block, run_id=run_id)
    KeepRates(db).record(written, result.replaced_text)


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def _rate(by: str, name: str, rows: list[dict[str, Any]]) -> KeepRate:
    ran = [r for r in rows if r["via"] == Via.RUN.value]
    approved = [r["kept"] for r in rows if r["via"] == Via.APPROVAL.value]
    untouched = sum(1 for r in ran if r["kept"] >= KEPT_WHOLE)
    deleted = sum(1 for r in ran if r["ending"] == Ending.DELETED.value)
    return KeepRate(by, name, len(ran), _mean([r["kept"] for r in ran]), untouched, len(ran) - untouched - deleted,
                    deleted, len(approved), _mean(approved))
