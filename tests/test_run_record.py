"""A journal row is a typed RunRecord: every column a field, its status a RunStatus."""

from __future__ import annotations

import dataclasses
import json

from routine.journal import Journal, RunRecord
from routine.journal.status import RunStatus


def test_a_run_record_has_a_field_for_every_column_of_the_runs_table_in_order(tmp_path):
    journal = Journal(tmp_path / "journal.sqlite3")
    try:
        columns = [r["name"] for r in journal.db.execute("PRAGMA table_info(runs)")]
    finally:
        journal.close()
    assert [f.name for f in dataclasses.fields(RunRecord)] == columns  # a new column needs its field


def test_a_finished_step_reads_back_typed_and_as_the_json_rows_show_it(tmp_path):
    journal = Journal(tmp_path / "journal.sqlite3")
    try:
        block = journal.start(agent=None, trigger="schedule", kind="block", block="morning", slot="2026-01-05T07:00")
        step = journal.start(agent="planner", trigger="schedule", block="morning", step=0, parent=block, model="m")
        journal.finish(step, "proposal", output="text", wrote={"path": "Daily/x.md", "outcome": "proposal"},
                       tokens_in=12, details={"attempt": 2})
        run = journal.get(step)
        children = journal.children(block)
    finally:
        journal.close()
    assert run is not None and children == [run]
    assert run.status is RunStatus.PROPOSAL and run.status.succeeded
    assert (run.parent, run.step, run.agent, run.tokens_in) == (block, 0, "planner", 12)
    assert run.wrote == {"path": "Daily/x.md", "outcome": "proposal"} and run.details == {"attempt": 2}
    row = json.loads(json.dumps(run.as_dict()))
    assert row["status"] == "proposal" and row["id"] == step and row["wrote"]["path"] == "Daily/x.md"
    assert list(row)[:3] == ["id", "parent", "kind"]


def test_a_status_reads_as_its_word_wherever_it_is_printed():
    assert f"{RunStatus.MAX_ITERATIONS}" == str(RunStatus.MAX_ITERATIONS) == "max-iterations"


def test_many_runs_of_one_second_never_collide_on_their_ids(tmp_path):
    """A simulated or busy second starts hundreds of runs; their short ids draw again when taken."""
    from datetime import datetime, timezone

    from routine.journal import Journal

    journal = Journal(tmp_path / "journal.sqlite3")
    at = datetime(2026, 11, 24, 20, 0, tzinfo=timezone.utc)
    try:
        ids = [journal.start(agent="planner", trigger="schedule", at=at) for _ in range(600)]
    finally:
        journal.close()
    assert len(set(ids)) == 600 and all(i.startswith("20261124-") for i in ids)
