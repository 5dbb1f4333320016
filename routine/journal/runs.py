"""The run journal: one row per step run (and per block run), written as the run goes."""

from __future__ import annotations

import json
import secrets
import sqlite3
from dataclasses import dataclass, fields
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal, Required, TypedDict

from routine import paths
from routine.journal.db import connect
from routine.journal.stamps import utc_millis
from routine.journal.status import RunStatus
from routine.jsonvalue import JSONValue, Parsed
from routine.redact import redact_text


# A tool-using run's transcript (``runs.log``; a chat answer's tool log): one entry per model turn,
# per tool call, and per exchange left out for length. Written by routine.tools.loop; read by
# `routine runs show`, the knowledge graph (what read_note read) and chat (its tool messages).
class CallAsked(TypedDict, total=False):
    name: Required[str]
    arguments: Required[JSONValue]  # as the model sent them (the raw text when unreadable)
    written_as_text: bool


class ModelTurn(TypedDict):
    type: Literal["model"]
    turn: int
    content: str
    calls: list[CallAsked]
    tokens_in: int | None
    tokens_out: int | None
    ms: int


class Elided(TypedDict):
    type: Literal["elided"]
    tool: str | None
    reason: str


class ToolCall(TypedDict, total=False):
    type: Required[Literal["tool"]]
    turn: Required[int]
    name: Required[str]
    arguments: Required[JSONValue]
    result: str
    refused: bool
    error: str
    ms: int


TranscriptEntry = ModelTurn | Elided | ToolCall

# What a run keeps besides its columns (``runs.details``, JSON): who started it and why. Every key is
# optional; ``from`` (a moved note's old path) is a keyword, hence the functional form.
RunDetails = TypedDict("RunDetails", {
    "trigger": str, "event": str, "path": str, "seen_by": str, "from": str,  # a trigger's run: the change
    "project": str, "branch": str,  # a block's step: its project, the branch it took
    "task": str, "task_file": str, "assignee": str | None,  # a task picked up
    "qa": str, "part": str,  # a QA review: the artifact, the part reviewed
    "skipped": str,  # a ``Skip`` value
    "held": str,  # a trigger's run a pause held: since when (ISO), fired when the pause ended
    "attempt": int,  # a retry (2, 3, …)
    "model_alias": str,  # `routine fire --model`
    "tokens_counted": int, "tokens_limit": int,  # the prompt as counted, against its window
    "fallback_attempts": list[str],  # what failed before the answer
    "question": str, "answered_by": str,  # a step that asked the person (issue 45); a step run given the answer
}, total=False)

_JSON_FIELDS = ("prompt", "sources", "dropped", "wrote", "details", "metrics", "log", "grounding")


def new_run_id(now: datetime | None = None) -> str:
    """Sortable and short enough to type: 20261122-073000-3f9a (``Journal.start`` draws again
    in the rare case two runs of one second draw the same)."""
    now = now or datetime.now().astimezone()
    return f"{now.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"


@dataclass(frozen=True, kw_only=True)
class RunRecord:
    """One row of the ``runs`` table (a step run or a block run); its JSON columns decoded.
    Fields in the table's column order; ``as_dict`` is the row as `routine runs --json` and the
    status show it."""

    id: str
    parent: str | None = None  # the block run a step belongs to
    kind: str  # step | block
    block: str | None = None
    step: int | None = None
    agent: str | None = None
    model: str | None = None
    trigger: str  # manual | schedule | catch-up | retry | trigger:<id> …
    slot: str | None = None
    status: RunStatus
    error: str | None = None
    started_at: str
    ended_at: str | None = None
    duration_ms: int | None = None
    task: str | None = None
    prompt: Any = None  # the exact messages sent
    output: str | None = None
    sources: Any = None  # vault paths placed in context
    dropped: Any = None  # context left out, with reasons
    wrote: Any = None  # what was written where (a block: the notes its steps wrote)
    tokens_in: int | None = None
    tokens_out: int | None = None
    load_duration_ms: int | None = None
    details: Any = None
    warm: int | None = None
    metrics: Any = None
    log: Any = None  # a tool loop's transcript
    project: str | None = None
    grounding: Any = None  # the grounding check of the reply: findings, asked again, held as a proposal
    prompt_version: str | None = None  # the agent note's body it ran with (journal.prompt_trials.version_of)

    @classmethod
    def from_row(cls, row: sqlite3.Row | Parsed) -> "RunRecord":
        values: dict[str, Any] = _decode(dict(row))
        values["status"] = RunStatus(values["status"])
        known: dict[str, Any] = {f.name: values.get(f.name) for f in fields(cls)}
        return cls(**known)

    def as_dict(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["status"] = self.status.value
        return out


class Journal:
    def __init__(self, path: Path | None = None):
        self.path = path or paths.journal_file()
        self.db: sqlite3.Connection = connect(self.path)

    def close(self) -> None:
        self.db.close()

    def mark_interrupted(self, reason: str) -> list[str]:
        """At daemon start-up: runs a dead process left 'running' did not finish."""
        ids = [r[0] for r in self.db.execute("SELECT id FROM runs WHERE status='running'")]
        for run_id in ids:
            self.finish(run_id, "interrupted", reason)
        return ids

    # --- writing ---------------------------------------------------------------------------

    def start(self, *, agent: str | None, trigger: str, kind: str = "step", task: str | None = None,
              model: str | None = None, block: str | None = None, step: int | None = None,
              parent: str | None = None, slot: str | None = None, run_id: str | None = None,
              at: datetime | None = None, id_at: datetime | None = None) -> str:
        """A new run, started now (or ``at``: the runner's clock, which a block's dates follow)."""
        for attempt in range(5):
            chosen = run_id or new_run_id(id_at or at)
            try:
                self.db.execute(
                    "INSERT INTO runs (id, parent, kind, block, step, agent, model, trigger, slot, status, started_at,"
                    " task) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                    (chosen, parent, kind, block, step, agent, model, trigger, slot, "running", utc_millis(at), task),
                )
                return chosen
            except sqlite3.IntegrityError:
                if run_id is not None or attempt == 4:  # a given id taken is a caller's mistake: say so
                    raise
        raise AssertionError("unreachable")

    def update(self, run_id: str, **fields: object) -> None:
        if not fields:
            return
        for key in _JSON_FIELDS:
            if key in fields and not isinstance(fields[key], (str, type(None))):
                fields[key] = json.dumps(fields[key], ensure_ascii=False, default=str)
        if isinstance(fields.get("error"), str):
            fields["error"] = redact_text(str(fields["error"]))  # a calendar's or notifier's URL: never its secret
        cols = ", ".join(f"{k}=?" for k in fields)
        self.db.execute(f"UPDATE runs SET {cols} WHERE id=?", (*fields.values(), run_id))

    def running_of_slot(self, block: str, slot: str) -> list[str]:
        """The runs of a block's slot (the block run and its steps) not yet finished."""
        return [r[0] for r in self.db.execute(
            "SELECT id FROM runs WHERE status='running' AND (slot=? AND block=? OR parent IN"
            " (SELECT id FROM runs WHERE slot=? AND block=?))", (slot, block, slot, block)).fetchall()]

    def finish(self, run_id: str, status: str, error: str | None = None, **fields: object) -> None:
        row = self.db.execute("SELECT started_at FROM runs WHERE id=?", (run_id,)).fetchone()
        ended = datetime.now(timezone.utc)
        duration = None
        if row:
            duration = int((ended - datetime.fromisoformat(row[0])).total_seconds() * 1000)
        self.update(run_id, status=status, error=error, ended_at=utc_millis(ended), duration_ms=duration, **fields)

    def record(self, *, agent: str | None, trigger: str, status: str, error: str, **fields: Any) -> str:
        """A run that never started (refused, missed, skipped), written in one go."""
        run_id = self.start(agent=agent, trigger=trigger, **{k: fields.pop(k) for k in
                            ("kind", "task", "model", "block", "step", "parent", "slot", "at", "id_at")
                            if k in fields})
        self.finish(run_id, status, error, **fields)
        return run_id

    # --- reading ---------------------------------------------------------------------------

    def recent(self, limit: int = 20, include_steps_of_blocks: bool = True) -> list[RunRecord]:
        rows = self.db.execute("SELECT * FROM runs ORDER BY started_at DESC, id DESC LIMIT ?", (limit,))
        return [RunRecord.from_row(r) for r in rows]

    def get(self, run_id: str) -> RunRecord | None:
        row = self.db.execute("SELECT * FROM runs WHERE id=?", (run_id,)).fetchone()
        if row is None:
            # Let a person type a unique prefix, as with git hashes.
            rows = self.db.execute("SELECT * FROM runs WHERE id LIKE ? ESCAPE '\\' LIMIT 2",
                                   (_like_prefix(run_id),)).fetchall()
            row = rows[0] if len(rows) == 1 else None
        return RunRecord.from_row(row) if row else None

    def matching(self, prefix: str, limit: int = 6) -> list[str]:
        """Run ids that are ``prefix`` or start with it (an exact id alone when there is one)."""
        if self.db.execute("SELECT 1 FROM runs WHERE id=?", (prefix,)).fetchone():
            return [prefix]
        rows = self.db.execute("SELECT id FROM runs WHERE id LIKE ? ESCAPE '\\' ORDER BY id LIMIT ?",
                               (_like_prefix(prefix), limit))
        return [r["id"] for r in rows]

    def totals(self) -> list[Parsed]:
        """Finished runs summed by kind, agent (or block) and status: for the metrics textfile."""
        rows = self.db.execute(
            "SELECT kind, COALESCE(agent, block, '') AS name, status, COUNT(*) AS runs,"
            " COALESCE(SUM(tokens_in), 0) AS tokens_in, COALESCE(SUM(tokens_out), 0) AS tokens_out,"
            " COALESCE(SUM(duration_ms), 0) AS duration_ms, COALESCE(SUM(load_duration_ms), 0) AS load_ms,"
            " MAX(ended_at) AS last_ended FROM runs WHERE status != 'running' GROUP BY kind, name, status"
            " ORDER BY kind, name, status")
        return [dict(r) for r in rows]

    def step_io(self, after: int, since: str) -> tuple[list[Parsed], int]:
        """What finished step runs read and wrote (for the knowledge graph): rows after the
        cursor ``after`` that ended at or after ``since`` (ISO), and the next cursor. A run still
        running holds the cursor before it, so it is read once it has finished."""
        rows = self.db.execute(
            "SELECT rowid, agent, status, sources, wrote, log, ended_at FROM runs WHERE kind='step' AND rowid > ?"
            " AND agent IS NOT NULL ORDER BY rowid", (after,)).fetchall()
        running = [r["rowid"] for r in rows if r["status"] == "running"]
        done = [_decode(dict(r)) for r in rows if r["status"] != "running" and (r["ended_at"] or "") >= since]
        cursor = (min(running) - 1) if running else (rows[-1]["rowid"] if rows else after)
        return done, cursor

    def outputs_of_last(self, block: str) -> dict[str, str] | None:
        """The outputs, by agent, of the steps that ended well in the latest run of ``block`` that
        has ended (None: it never ran): what a block chained after it sees when fired by hand."""
        row = self.db.execute("SELECT id FROM runs WHERE kind='block' AND block=? AND status != 'running'"
                              " ORDER BY started_at DESC, id DESC LIMIT 1", (block,)).fetchone()
        if row is None:
            return None
        return {c.agent: c.output or "" for c in self.children(row["id"])
                if c.agent and c.status in ("ok", "proposal")}

    def children(self, run_id: str) -> list[RunRecord]:
        rows = self.db.execute("SELECT * FROM runs WHERE parent=? ORDER BY step, started_at", (run_id,))
        return [RunRecord.from_row(r) for r in rows]


def _decode(row: Parsed) -> Parsed:
    for key in _JSON_FIELDS:
        if row.get(key):
            try:
                row[key] = json.loads(row[key])
            except ValueError:
                pass
    return row


def _like_prefix(prefix: str) -> str:
    """A LIKE pattern for ids starting with ``prefix`` (its own % and _ taken literally)."""
    return prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
