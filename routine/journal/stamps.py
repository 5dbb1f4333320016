"""How the journal writes a time: UTC ISO text, so that stamps of one column compare as strings.

``runs.started_at`` and ``ended_at`` keep milliseconds (two runs of one second stay in order); a
column compared with them must too (``prompt_trial_queue.since``/``until``: an advice queued in
the same second as the runs it names must still find them). Other tables keep whole seconds.
"""

from __future__ import annotations

from datetime import datetime, timezone


def utc_seconds(at: datetime | None = None) -> str:
    """``2026-11-28T16:30:46+00:00`` (now, when ``at`` is None)."""
    return (at or datetime.now(timezone.utc)).astimezone(timezone.utc).isoformat(timespec="seconds")


def utc_millis(at: datetime | None = None) -> str:
    """``2026-11-28T16:30:46.123+00:00``: as ``runs.started_at`` is written (now, when ``at`` is None)."""
    return (at or datetime.now(timezone.utc)).astimezone(timezone.utc).isoformat(timespec="milliseconds")
