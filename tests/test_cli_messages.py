"""What a newcomer reads: flags where they type them, one root cause, suggestions, no noise."""

from __future__ import annotations

import json
import os
import shutil

import pytest


def _journal(home):
    """The home's journal, opened in this process (to set up runs without firing models)."""
    from routine.journal import Journal

    before = os.environ.get("ROUTINE_STATE_DIR")
    os.environ["ROUTINE_STATE_DIR"] = str(home.state)
    try:
        return Journal()
    finally:
        if before is None:
            del os.environ["ROUTINE_STATE_DIR"]
        else:
            os.environ["ROUTINE_STATE_DIR"] = before


@pytest.mark.parametrize("argv", [("runs", "--json", "list"), ("runs", "list", "--json"),
                                  ("schedule", "--json", "list"), ("schedule", "--json", "next", "3"),
                                  ("models", "--json", "ps")])
def test_json_is_honoured_before_or_after_the_subcommand(initialised, argv):
    proc = initialised.run(*argv, check=True)
    json.loads(proc.stdout)  # a table here would not parse


def test_a_count_below_one_is_refused_not_answered_with_no_runs_yet(initialised):
    proc = initialised.run("runs", "list", "-n", "0")
    assert proc.returncode == 2
    assert "0 is too few: give 1 or more" in proc.stderr and "No runs yet" not in proc.stdout


def test_an_ambiguous_run_prefix_says_so_and_a_block_run_lists_what_it_wrote(initialised):
    journal = _journal(initialised)
    try:
        first = journal.record(agent="strategist", trigger="manual", status="failed", error="x")
        second = journal.record(agent=None, kind="block", block="morning-alignment", trigger="schedule",
                                status="ok", error=None, wrote=["Daily/a.md", "Daily/b.md"])
    finally:
        journal.close()
    common = os.path.commonprefix([first, second])
    proc = initialised.run("runs", "show", common)
    assert proc.returncode == 2
    assert f"{common!r} is the start of 2 run ids" in proc.stderr and "type more of the id" in proc.stderr
    listing = initialised.run("runs", "list", check=True).stdout
    assert "Daily/a.md, Daily/b.md" in listing and "['Daily" not in listing


def test_a_misspelt_agent_or_block_gets_a_suggestion(initialised):
    agent = initialised.run("fire", "strategis")
    assert agent.returncode == 2 and "Did you mean 'strategist'?" in agent.stderr
    block = initialised.run("fire", "morning-alignmnt", "--dry-run")
    assert block.returncode == 2 and "Did you mean 'morning-alignment'?" in block.stderr


def test_a_missing_vault_is_the_one_error_not_a_cascade(initialised):
    home = initialised
    text = home.config.read_text()
    home.config.write_text(text.replace(f"vault: {home.vault}", f"vault: {home.root / 'Moved'}"))
    fired = home.run("fire", "strategist")
    assert fired.returncode == 2
    assert f"The vault {home.root / 'Moved'} does not exist" in fired.stderr and "no agent" not in fired.stderr
    doctor = home.run("doctor")
    fails = [line for line in doctor.stdout.splitlines() if line.startswith("FAIL")]
    assert fails == [
        f"FAIL vault: {home.root / 'Moved'} does not exist (agents and schedules are checked once it does)"
    ]
    assert "agents:" not in doctor.stdout


def test_a_failed_run_is_reported_once(initialised):
    proc = initialised.run("fire", "strategist", env_extra={"OLLAMA_HOST": "http://127.0.0.1:9"})
    assert proc.returncode == 1
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 2, proc.stderr  # the error with its fix, and where the alert and details are
    assert lines[0].startswith("routine: ") and lines[1].startswith("An alert note is in Alerts/")


def test_init_with_another_vault_says_the_config_keeps_its_own(initialised):
    other = initialised.root / "Other"
    proc = initialised.run("init", str(other))
    assert proc.returncode == 2
    assert f"already uses the vault {initialised.vault}; nothing was created in {other}" in proc.stderr
    assert f"set `vault: {other}`" in proc.stderr and not other.exists()
    again = initialised.run("init", str(initialised.vault), check=True)  # the same vault is fine
    assert "kept" in again.stdout


def test_one_broken_schedule_file_still_shows_the_rest_and_names_itself(initialised):
    home = initialised
    broken = home.config.parent / "schedules" / "zz-mine.yaml"
    broken.write_text("blocks:\n  mine:\n    cron: '0 9 * * *'\n")
    for argv in (("schedule", "next", "30"), ("schedule", "list")):
        proc = home.run(*argv)
        assert proc.returncode == 2, argv
        assert "morning-alignment" in proc.stdout and "mine" not in proc.stdout
        assert f"{broken} is broken, so its blocks are not in force" in proc.stderr
        assert "missing required key 'steps'" in proc.stderr


def test_without_bubblewrap_doctor_warns_and_passes(initialised, tmp_path):
    bare = tmp_path / "bin-without-bwrap"
    bare.mkdir()
    for tool in ("python3", "sh"):
        if shutil.which(tool):
            (bare / tool).symlink_to(shutil.which(tool))
    proc = initialised.run("doctor", env_extra={"PATH": str(bare)})
    line = next(x for x in proc.stdout.splitlines() if "sandbox" in x)
    assert line.startswith("WARN sandbox: bubblewrap is not installed: run_command refuses every command of builder")
    assert "sudo apt install bubblewrap" in proc.stdout
    assert proc.returncode == 0, proc.stdout


def test_an_outside_errors_words_end_their_sentence_before_the_fix():
    """A model server's bare words ("boom") still read as a sentence before its fix."""
    from routine.errors import RoutineError

    assert str(RoutineError("boom", "start Ollama.")) == "boom. Fix: start Ollama."
    assert str(RoutineError("It failed.", "try again.")) == "It failed. Fix: try again."


def test_doctor_says_when_notify_ready_names_no_block(initialised):
    """`ready: [morning]` names no block of the shipped schedules: doctor says so (a warning: exit 0)."""
    home = initialised
    home.config.write_text(home.config.read_text() + "\nnotify: {ready: [morning, morning-alignment]}\n")
    done = home.run("doctor")
    assert "notify.ready names morning, which no block" in done.stdout and "morning-alignment," not in done.stdout
