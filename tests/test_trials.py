"""Trials (issue 28): real runs' journaled requests replayed on a candidate alias, the answers
judged beside the originals, and the scoreboard. Through the CLI's real entry point, the real
journal and vault, and the stand-in Ollama (two aliases scripted to differ)."""

from __future__ import annotations

import json
from pathlib import Path

from test_daemon import journal_rows

MISTRAL, QWEN = "mistral:7b-instruct-q4_K_M", "qwen2.5:7b-instruct-q4_K_M"
GOOD = "- Ship the battery report first.\n- Then the kiln tests."
CUT = {"content": "- Ship the battery report first and then", "done_reason": "length"}
MISSING = "- Ship the battery report, as [[Nowhere Note]] says."


def snapshot(vault: Path) -> dict[str, bytes]:
    return {str(p.relative_to(vault)): p.read_bytes() for p in sorted(vault.rglob("*")) if p.is_file()}


def fire_day(home, ollama, agents: tuple[str, ...]) -> list[str]:
    """The day's real runs on their own model (mistral): good answers."""
    ids = []
    for agent in agents:
        ollama.script(MISTRAL, [GOOD])
        ids.append(json.loads(home.run("fire", agent, "--json", check=True).stdout)["run"])
    return ids


def test_a_candidate_replays_todays_runs_and_is_judged_beside_them_writing_nothing(initialised, ollama):
    home = initialised
    fire_day(home, ollama, ("strategist", "planner"))
    before = snapshot(home.vault)
    ollama.script(QWEN, [CUT, CUT, MISSING])  # strategist's: cut off twice (asked again, shorter); planner's: a link
    out = home.run("models", "try", "analyst", "--runs", "today", "--now", check=True).stdout
    assert "Queued 2 trial(s) of analyst on 2 run(s)" in out
    assert "rejected: reply cut off" in out and "unsupported: [[Nowhere Note]]" in out
    assert snapshot(home.vault) == before  # a trial writes nothing into the vault
    rows = journal_rows(home, "SELECT agent, status, candidate FROM trials ORDER BY id")
    assert rows == [("strategist", "done", "analyst"), ("planner", "done", "analyst")]
    again = home.run("models", "try", "analyst", "--runs", "today", "--now", check=True).stdout
    assert "Queued 0 trial(s)" in again and "2 tried or queued before" in again
    assert journal_rows(home, "SELECT COUNT(*) FROM trials") == [(2,)]  # never the same (run, candidate) twice

    scores = json.loads(home.run("models", "scores", "--json", check=True).stdout)
    best = {(s["model"], s["role"]): s for s in scores["overall"]}
    assert best[(MISTRAL, "original")]["pass_rate"] == 1.0 and best[(QWEN, "candidate")]["pass_rate"] == 0.0
    assert [s["model"] for s in scores["overall"]] == [MISTRAL, QWEN]
    assert any(s.startswith(f"{MISTRAL} stays best on your Strategist runs") for s in scores["recommendation"])
    after = snapshot(home.vault)
    assert {k for k in after if after[k] != before.get(k)} == {"Routine/Models.md"}
    note = home.note("Routine/Models.md")
    assert "| model | agent | as |" in note and f"{MISTRAL} stays best" in note


def test_a_better_candidate_is_recommended_and_measured_against_what_the_person_kept(initialised, ollama):
    home = initialised
    ollama.script(MISTRAL, [MISSING, MISSING])  # asked again, still unsupported: held as a proposal
    held = json.loads(home.run("fire", "strategist", "--json", check=True).stdout)
    assert held["status"] == "proposal"
    [planner] = fire_day(home, ollama, ("planner",))
    kept = "- Battery report first, then the kiln tests on Thursday."
    daily = next((home.vault / "Daily").glob("*.md"))
    daily.write_text(daily.read_text().replace(GOOD, kept))  # the person rewrites the planner's section
    ollama.script(QWEN, [GOOD, "- Battery report first, then the kiln tests."])
    home.run("models", "try", "analyst", "--against", "general", "--runs", "today", "--now", check=True)
    [(result,)] = journal_rows(home, "SELECT result FROM trials WHERE run=?", planner)
    judged = json.loads(result)
    assert judged["candidate"]["closeness"] > judged["original"]["closeness"] > 0
    assert judged["candidate"]["tokens_out"] and judged["candidate"]["ttft_ms"] is not None
    assert judged["candidate"]["memory_mb"] >= 4683  # Ollama's `ps`: qwen2.5:7b's weights (4683 MB) and its cache
    scores = json.loads(home.run("models", "scores", "--json", check=True).stdout)
    assert any(s.startswith(f"{QWEN} passes 100% vs 0% for {MISTRAL} on your Strategist runs")
               for s in scores["recommendation"]), scores["recommendation"]
    said = next(s for s in scores["recommendation"] if "Strategist" in s)  # with its sample, and how sure
    assert f"(1 trial of {QWEN}, 1 run of {MISTRAL})" in said and "too few to be sure" in said, said
    agents = {p.name: p.read_text() for p in (home.vault / "Agents").glob("*.md")}
    assert "model: general" in agents["Strategist.md"]  # recommended, never switched


def test_trials_of_an_unknown_alias_or_run_are_refused_in_one_sentence(initialised, ollama):
    home = initialised
    proc = home.run("models", "try", "gpt9")
    assert proc.returncode == 2 and "(defined: general, analyst, coder)" in proc.stderr
    proc = home.run("models", "try", "analyst", "--runs", "20991231-000000-ffff")
    assert proc.returncode == 2 and "No run '20991231-000000-ffff' in the journal" in proc.stderr


def test_a_wrong_trials_window_is_named_with_its_line_and_the_fix(initialised, ollama):
    home = initialised
    text = home.config.read_text()
    home.config.write_text(text + 'trials:\n  window: "25:00-26:00"\n')
    line = len(text.splitlines()) + 2
    proc = home.run("models", "try", "analyst")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert f"routine.yaml:{line}" in proc.stderr and "trials.window" in proc.stderr
    assert "'25:00-26:00' is not two times of day; write e.g. 01:00-05:00." in proc.stderr


def test_a_candidates_tool_calls_are_judged_against_the_agents_tools_never_run(initialised, ollama):
    home = initialised
    fire_day(home, ollama, ("strategist", "planner"))
    before = snapshot(home.vault)
    ollama.script(QWEN, [{"tool_calls": [{"name": "write_note", "arguments": {"path": "Daily/x.md", "text": "!"}}]},
                         {"tool_calls": [{"name": "read_note", "arguments": {"path": "Plans/OKRs.md"}}]}])
    out = home.run("models", "try", "analyst", "--runs", "today", "--now", check=True).stdout
    assert "tool calls: write_note: not one of the agent's tools" in out
    results = [json.loads(r)["candidate"] for (r,) in journal_rows(home, "SELECT result FROM trials ORDER BY id")]
    assert [(r["tool_calls"], r["tool_calls_valid"], r["passed"]) for r in results] == [(1, False, False),
                                                                                      (1, True, True)]
    assert snapshot(home.vault) == before  # the calls were judged, not carried out


def test_no_runs_to_try_says_which_day_and_how_to_try_others(initialised, ollama):
    out = initialised.run("models", "try", "analyst", check=True).stdout
    assert "No runs from yesterday to try analyst on" in out and "`--runs today` tries today's instead" in out
    assert "--now" not in out


def test_tampered_journal_rows_are_skipped_with_a_sentence_each_and_the_rest_tried(initialised, ollama):
    import sqlite3

    home = initialised
    ids = fire_day(home, ollama, ("strategist", "planner", "librarian"))
    db = sqlite3.connect(home.state / "journal.sqlite3")
    db.execute("UPDATE runs SET prompt='[1, 2, \"three\"]' WHERE id=?", (ids[0],))
    db.execute("UPDATE runs SET prompt='[{\"role\": \"user\", \"content\": {\"x\": 1}}]', output='x' WHERE id=?",
               (ids[1],))
    db.commit()
    db.close()
    ollama.script(QWEN, [GOOD])
    done = home.run("models", "try", "analyst", "--runs", "today", "--now")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert f"run {ids[0]} is skipped: its journaled request holds something other than messages" in done.stderr
    assert f"run {ids[1]} is skipped:" in done.stderr
    assert "Queued 1 trial(s) of analyst on 1 run(s)" in done.stdout
    assert journal_rows(home, "SELECT agent, status FROM trials") == [("librarian", "done")]


def test_the_trials_window_is_said_as_a_person_writes_it(initialised, ollama):
    home = initialised
    fire_day(home, ollama, ("strategist",))
    home.config.write_text(home.config.read_text() + 'trials: {window: "01:00-05:00"}\n')
    out = home.run("models", "try", "analyst", "--runs", "today", check=True).stdout
    assert "in its trials window (01:00-05:00), or now with --now" in out and "datetime" not in out, out


def test_trials_list_shows_queued_and_done_trials_with_their_verdict(initialised, ollama):
    home = initialised
    fire_day(home, ollama, ("strategist", "planner"))
    home.run("models", "try", "analyst", "--runs", "today", check=True)
    queued = json.loads(home.run("trials", "list", "--json", check=True).stdout)["trials"]
    assert [(t["kind"], t["what"], t["state"]) for t in queued] == [("model", "analyst", "queued")] * 2
    ollama.script(QWEN, [GOOD, GOOD])
    home.run("models", "try", "analyst", "--now", check=True)
    listed = home.run("trials", "list", check=True).stdout
    assert listed.count("passes every check") == 2 and "queued" not in listed, listed
