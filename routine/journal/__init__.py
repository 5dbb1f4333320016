"""The run journal (SQLite in the state dir). The only code that touches the run database."""

from routine.journal.runs import Journal, Run, new_run_id

__all__ = ["Journal", "Run", "new_run_id"]
