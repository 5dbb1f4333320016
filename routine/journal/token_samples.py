"""Token-count samples in the run journal: what we sent, how we counted it, and what the server said it counted."""

from __future__ import annotations

import math
import sqlite3
from dataclasses import dataclass

from routine.journal.stamps import utc_seconds

LEGACY_CHARS_PER_TOKEN = 3.2  # the estimate before migration 020 (models.tokens.DEFAULT_CHARS_PER_TOKEN then)


@dataclass(frozen=True)
class Sample:
    """One request: its text as the counter counts it uncalibrated, the template's overhead we added,
    what we counted when sending it (calibrated), and what the server reported."""

    counter: str          # "estimate", or a tokenizer's name ("mistral", "qwen")
    base: int             # the text's tokens by that counter, before any calibration
    overhead: int         # the template overhead we add to a count
    counted: int | None   # what we counted when it was sent (None: a sample from before migration 020)
    reported: int         # prompt_eval_count / prompt_tokens
    run_id: str | None = None
    model: str = ""


class TokenSamples:
    """The samples kept in ``db`` (a connection the daemon's threads may share: ``statedb.Connection``
    lets a write wait out another thread's open read)."""

    def __init__(self, db: sqlite3.Connection):
        self.db = db

    def add(self, model: str, sample: Sample, chars: int, fixed: int) -> None:
        self.db.execute(
            "INSERT INTO token_samples (at, model, chars, fixed, reported, counter, base, overhead, counted, run_id)"
            " VALUES (?,?,?,?,?,?,?,?,?,?)",
            (utc_seconds(), model, chars, fixed, sample.reported,
             sample.counter, sample.base, sample.overhead, sample.counted, sample.run_id))

    def recent(self, model: str, limit: int) -> list[Sample]:
        return self._select("WHERE model=? ORDER BY id DESC LIMIT ?", (model, limit))

    def of_run(self, run_id: str) -> list[Sample]:
        return self._select("WHERE run_id=? ORDER BY id", (run_id,))

    def _select(self, where: str, params: tuple[object, ...]) -> list[Sample]:
        rows = self.db.execute("SELECT chars, fixed, reported, counter, base, overhead, counted, run_id, model"
                               f" FROM token_samples {where}", params).fetchall()
        return [_sample(*row) for row in rows]


def _sample(chars: int, fixed: int, reported: int, counter: str | None, base: int | None, overhead: int | None,
            counted: int | None, run_id: str | None, model: str) -> Sample:
    if counter is None:  # before migration 020: the estimate's shape, the overhead inside `fixed`
        return Sample("estimate", fixed + math.ceil(chars / LEGACY_CHARS_PER_TOKEN), 0, None, reported, run_id, model)
    return Sample(counter, base or 0, overhead or 0, counted, reported, run_id, model)
