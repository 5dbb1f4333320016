"""The run journal (SQLite in the state dir). The only code that touches the run database."""

from routine.journal.runs import Journal, RunRecord, new_run_id

__all__ = ["Journal", "RunRecord", "new_run_id"]
