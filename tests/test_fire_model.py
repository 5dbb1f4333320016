"""`routine fire --model ALIAS` and `ask --model`: one run on another alias, journaled as such,
a proposal unless `--write` (issue 28). Through the CLI's real entry point and the stand-in Ollama."""

from __future__ import annotations

import json

from test_daemon import journal_rows

QWEN = "qwen2.5:7b-instruct-q4_K_M"


def test_fire_on_another_alias_journals_it_and_writes_a_proposal(initialised, ollama):
    home = initialised
    ollama.script(QWEN, ["- Ship the battery report first; the kiln tests wait."])
    out = home.run("fire", "strategist", "--model", "analyst", "--json", check=True).stdout
    result = json.loads(out)
    assert result["status"] == "proposal" and result["model"] == f"ollama_chat/{QWEN}"
    assert result["wrote"]["proposal"].startswith("Drafts/")
    proposal = home.note(result["wrote"]["proposal"])
    assert "Ship the battery report first" in proposal
    why = "strategist ran on analyst (--model) without --write, so its note is a proposal (add --write"
    assert why in result["wrote"]["message"] and why in proposal  # the true reason, not the agent's approval
    assert "writes need your approval" not in result["wrote"]["message"]
    assert not list((home.vault / "Daily").glob("*.md")) or "Ship the battery" not in next(
        (home.vault / "Daily").glob("*.md")).read_text()
    assert ollama.last_request()["model"] == QWEN  # the request went to the alias asked for
    [(model, details)] = journal_rows(home, "SELECT model, details FROM runs WHERE kind='step'")
    assert model == f"ollama_chat/{QWEN}" and json.loads(details)["model_alias"] == "analyst"


def test_fire_on_another_alias_with_write_writes_as_the_agent_would(initialised, ollama):
    home = initialised
    ollama.script(QWEN, ["- Written straight into the daily note."])
    result = json.loads(home.run("fire", "strategist", "--model", "analyst", "--write", "--json", check=True).stdout)
    assert result["status"] == "ok" and result["wrote"]["proposal"] is None
    assert "Written straight into the daily note." in home.note(result["wrote"]["path"])


def test_an_unknown_alias_is_one_sentence_naming_the_defined_ones(initialised, ollama):
    home = initialised
    for args in (("fire", "strategist", "--model", "gpt9"), ("ask", "strategist", "hello?", "--model", "gpt9")):
        proc = home.run(*args)
        assert proc.returncode == 2, proc.stderr
        assert "Model alias 'gpt9' is not defined in routine.yaml (defined: general, analyst, coder)." \
            in proc.stderr and "Traceback" not in proc.stderr
    assert not (home.state / "journal.sqlite3").exists()  # refused before any run began
    proc = home.run("fire", "strategist", "--write")
    assert proc.returncode == 2 and "--model" in proc.stderr


def test_ask_on_another_alias_is_answered_by_it(initialised, ollama):
    home = initialised
    ollama.script(QWEN, ["Qwen's answer about the week."])
    out = home.run("ask", "strategist", "What matters this week?", "--model", "analyst", check=True).stdout
    assert "Qwen's answer about the week." in out
    assert ollama.last_request()["model"] == QWEN
    [(model,)] = journal_rows(home, "SELECT model FROM chat_messages WHERE role='assistant'")
    assert model == f"ollama_chat/{QWEN}"


def test_a_block_fired_on_another_alias_runs_every_step_on_it(initialised, ollama):
    home = initialised
    proc = home.run("fire", "morning-alignment", "--model", "coder", "--json")
    models = {m for (m,) in journal_rows(home, "SELECT model FROM runs WHERE kind='step'")}
    assert models == {"ollama_chat/qwen2.5-coder:7b-instruct-q4_K_M"}, proc.stderr
