"""`routine init` then `routine fire AGENT`, run as a person runs them, against a stand-in Ollama."""

from __future__ import annotations

import json
import re

import yaml


def daily(home) -> str:
    """The one daily note routine wrote, whatever the date was when it ran (no date taken at import)."""
    notes = list((home.vault / "Daily").glob("*.md"))
    assert len(notes) == 1, notes
    return f"Daily/{notes[0].name}"


def no_daily(home) -> bool:
    return not list((home.vault / "Daily").glob("*.md"))


def frontmatter(text: str) -> dict:
    m = re.match(r"---\n(.*?)\n---\n", text, re.S)
    return yaml.safe_load(m.group(1)) if m else {}


def section(text: str, key: str) -> str:
    m = re.search(rf"%% routine:begin {key}\b[^%]*%%\n(.*?)%% routine:end {key} %%", text, re.S)
    assert m, f"no section {key} in:\n{text}"
    return m.group(1)


def test_init_creates_vault_config_and_schedules_without_overwriting(home):
    (home.vault / "Plans").mkdir(parents=True)
    (home.vault / "Plans" / "OKRs.md").write_text("# My own OKRs\n- O1: ship the thing\n")
    out = home.run("init", str(home.vault), check=True).stdout
    assert "created" in out
    assert (home.vault / "Agents" / "Strategist.md").is_file()
    assert len(list((home.vault / "Agents").glob("*.md"))) == 8
    for folder in ("Inbox", "Daily", "Weekly", "Drafts", "Alerts", "Archive", "Projects"):
        assert (home.vault / folder).is_dir(), folder
    assert not list(home.vault.rglob(".keep"))
    assert home.note("Plans/OKRs.md") == "# My own OKRs\n- O1: ship the thing\n"
    assert home.config.is_file() and (home.config.parent / "schedules" / "daily.yaml").is_file()
    assert f"vault: {home.vault}" in home.config.read_text()

    # A second init keeps the person's edits to agents and config.
    (home.vault / "Agents" / "Strategist.md").write_text(
        (home.vault / "Agents" / "Strategist.md").read_text() + "\nMy tweak.\n"
    )
    home.run("init", str(home.vault), check=True)
    assert home.note("Agents/Strategist.md").endswith("My tweak.\n")


def test_fire_writes_fenced_section_with_provenance(initialised, ollama):
    home = initialised
    (home.vault / "Plans" / "OKRs.md").write_text("# OKRs\n- O1: Launch the beta by December\n")
    proc = home.run("fire", "strategist", check=True)
    assert daily(home) in proc.stdout
    today = daily(home)[len("Daily/"):-len(".md")]

    note = home.note(daily(home))
    meta = frontmatter(note)["routine"]  # one small property: the latest write
    assert meta["agent"] == "strategist"
    assert re.fullmatch(r"\d{8}-\d{6}-[0-9a-f]{4}", meta["run"])
    assert meta["at"].startswith(today)
    assert "## Alignment" in note
    body = section(note, "alignment")
    assert "Model: mistral:7b-instruct-q4_K_M" in body  # the stand-in's reply reached the note

    # The prompt really carried the grounding note and the date.
    chat = ollama.last_request("/api/chat")
    user = chat["messages"][-1]["content"]
    assert "Launch the beta by December" in user
    assert today in user
    assert chat["options"]["num_ctx"] == 8192

    runs = json.loads(home.run("runs", "list", "--json", check=True).stdout)
    assert runs[0]["status"] == "ok" and runs[0]["agent"] == "strategist"
    assert runs[0]["id"] == meta["run"]


def test_second_fire_replaces_only_its_section(initialised, ollama):
    home = initialised
    home.run("fire", "strategist", check=True)
    note = home.note(daily(home))
    person_before = "My own morning thoughts.\n\n"
    person_after = "\n## Evening\nWent well.\n"
    fm_end = note.index("\n---\n", 4) + 5
    edited = note[:fm_end] + person_before + note[fm_end:] + person_after
    (home.vault / daily(home)).write_text(edited)

    ollama.script("mistral:7b-instruct-q4_K_M", ["- Second alignment, fresh."])
    home.run("fire", "strategist", check=True)
    after = home.note(daily(home))
    assert "Second alignment, fresh." in section(after, "alignment")
    assert person_before in after and after.endswith(person_after)
    assert after.count("%% routine:begin alignment") == 1
    assert frontmatter(after)["routine"]["run"] != frontmatter(note)["routine"]["run"]


def test_person_edit_inside_section_survives_and_new_text_becomes_proposal(initialised, ollama):
    home = initialised
    home.run("fire", "strategist", check=True)
    note = home.note(daily(home))
    edited = note.replace("- Model: mistral", "- I rewrote this myself.\n- Model: mistral", 1)
    (home.vault / daily(home)).write_text(edited)

    ollama.script("mistral:7b-instruct-q4_K_M", ["- The model's newer alignment."])
    proc = home.run("fire", "strategist", check=True)
    after = home.note(daily(home))
    assert "- I rewrote this myself." in section(after, "alignment")
    assert "newer alignment" not in section(after, "alignment")
    drafts = list((home.vault / "Drafts").glob("*.md"))
    assert len(drafts) == 1
    proposal = drafts[0].read_text()
    assert "The model's newer alignment." in proposal
    assert frontmatter(proposal)["status"] == "proposed"
    assert f"[[Drafts/{drafts[0].stem}]]" in after  # linked from the section
    assert "Drafts/" in proc.stdout


def test_dry_run_prints_exact_messages_and_calls_no_model(initialised, ollama):
    home = initialised
    proc = home.run("fire", "planner", "--dry-run", "--task", "Plan a calm day.", check=True)
    assert "----- system -----" in proc.stdout and "----- user -----" in proc.stdout
    assert "Plan a calm day." in proc.stdout
    persona = (home.vault / "Agents" / "Planner.md").read_text().split("\n---\n", 1)[1].strip().splitlines()[0]
    assert persona in proc.stdout  # the agent note's own prompt went in, not merely its name
    assert not ollama.last_request("/api/chat")
    assert no_daily(home)
    data = json.loads(home.run("fire", "planner", "--dry-run", "--json", check=True).stdout)
    assert data["messages"][0]["role"] == "system"
    assert json.loads(home.run("runs", "list", "--json", check=True).stdout) == []


def test_unreachable_ollama_exits_1_with_fix_journal_and_alert(initialised):
    home = initialised
    home.env["OLLAMA_HOST"] = "http://127.0.0.1:9"  # nothing listens on the discard port
    proc = home.run("fire", "strategist")
    assert proc.returncode == 1
    assert "not reachable" in proc.stderr and "ollama serve" in proc.stderr
    assert "Traceback" not in proc.stderr
    runs = json.loads(home.run("runs", "list", "--json", check=True).stdout)
    assert runs[0]["status"] == "failed" and "not reachable" in runs[0]["error"]
    alerts = list((home.vault / "Alerts").glob("*.md"))
    assert len(alerts) == 1 and "ollama serve" in alerts[0].read_text()
    assert no_daily(home)


def test_missing_model_says_ollama_pull(initialised, ollama):
    home = initialised
    text = home.config.read_text().replace("mistral:7b-instruct-q4_K_M", "nosuchmodel:7b")
    home.config.write_text(re.sub(r"fallbacks: \[analyst\]", "fallbacks: []", text))
    proc = home.run("fire", "strategist")
    assert proc.returncode == 1
    assert "ollama pull nosuchmodel:7b" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_fallback_alias_answers_when_first_model_is_missing(initialised, ollama):
    home = initialised
    home.config.write_text(home.config.read_text().replace("mistral:7b-instruct-q4_K_M", "nosuchmodel:7b"))
    proc = home.run("fire", "strategist", check=True)
    assert "Model: qwen2.5:7b-instruct-q4_K_M" in home.note(daily(home))
    run = json.loads(home.run("runs", "show", frontmatter(home.note(daily(home)))["routine"]["run"], "--json").stdout)
    assert "nosuchmodel" in json.dumps(run["details"])
    assert proc.returncode == 0


def test_write_outside_scope_is_refused_before_anything_runs(initialised):
    home = initialised
    agent = home.vault / "Agents" / "Strategist.md"
    text = agent.read_text()
    # The person points the strategist at a note outside its writes scope.
    agent.write_text(re.sub(r"(?m)^write:.*$", 'write: {note: "Plans/Hijack.md"}', text, count=1))
    proc = home.run("fire", "strategist")
    assert proc.returncode == 2
    assert "outside" in proc.stderr and "Strategist.md" in proc.stderr
    assert not (home.vault / "Plans" / "Hijack.md").exists()
    # The agent note itself is refused (a config error with its file and line): no run starts.
    assert "Plans/Hijack.md" in proc.stderr and re.search(r"Strategist\.md:\d+", proc.stderr)
    assert json.loads(home.run("runs", "list", "--json", check=True).stdout) == []
    assert not (home.vault / "Daily").exists() or not list((home.vault / "Daily").glob("*.md"))


def test_path_escape_in_task_input_is_refused_and_journaled(initialised, tmp_path):
    home = initialised
    secret = tmp_path / "secret.md"
    secret.write_text("top secret")
    (home.vault / "Daily" / "escape.md").symlink_to(secret)
    agent = home.vault / "Agents" / "Strategist.md"
    agent.write_text(agent.read_text().replace('grounding: ["[[OKRs]]"', 'grounding: ["[[escape]]"', 1))
    proc = home.run("fire", "strategist")
    assert proc.returncode == 1
    assert "outside the vault" in proc.stderr or "leaves the vault" in proc.stderr
    runs = json.loads(home.run("runs", "list", "--json", check=True).stdout)
    assert runs[0]["status"] == "refused"
    assert "top secret" not in json.dumps(runs)


def test_unknown_agent_is_usage_error(initialised):
    proc = initialised.run("fire", "wizard")
    assert proc.returncode == 2
    assert "no agent named 'wizard'" in proc.stderr and "strategist" in proc.stderr
