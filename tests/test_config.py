"""routine.yaml and agent notes: every problem at once, with file, line and YAML path."""

from __future__ import annotations


def test_config_errors_all_reported_with_line_and_path(initialised):
    home = initialised
    home.config.write_text(
        "vault: ~/Vault\n"            # 1
        "ollama:\n"                    # 2
        "  max_resident: many\n"       # 3
        "  colour: blue\n"             # 4
        "models:\n"                    # 5
        "  general:\n"                 # 6
        "    model: ollama_chat/x:7b\n"  # 7
        "    fallbacks: [ghost]\n"     # 8
        "timezone: Mars/Olympus\n"     # 9
    )
    proc = home.run("fire", "strategist")
    assert proc.returncode == 2
    err = proc.stderr
    assert "routine.yaml:3: At 'ollama.max_resident'" in err
    assert "routine.yaml:4: At 'ollama': unknown key 'colour'" in err
    assert "routine.yaml:8: At 'models.general.fallbacks': fallback 'ghost'" in err
    assert "routine.yaml:9: At 'timezone'" in err and "Mars/Olympus" in err
    assert err.startswith("routine: 4 problems in ")  # every one of them, at once
    assert "Traceback" not in err


def test_config_semantic_errors(initialised):
    home = initialised
    home.config.write_text(
        f"vault: {home.vault}\n"
        "models:\n"
        "  general:\n"
        "    model: ollama_chat/x:7b\n"
        "    fallbacks: [ghost]\n"
        "timezone: Mars/Olympus\n"
    )
    proc = home.run("fire", "strategist")
    assert proc.returncode == 2
    assert "routine.yaml:5: At 'models.general.fallbacks': fallback 'ghost'" in proc.stderr
    assert "routine.yaml:6: At 'timezone': unknown time zone 'Mars/Olympus'" in proc.stderr


def test_yaml_syntax_error_names_the_line(initialised):
    home = initialised
    home.config.write_text("vault: ~/Vault\nmodels:\n  general: [unclosed\n")
    proc = home.run("runs", "list")  # listing needs no config: still works
    assert proc.returncode == 0
    proc = home.run("fire", "strategist")
    assert proc.returncode == 2 and "routine.yaml:" in proc.stderr and "YAML syntax error" in proc.stderr


def test_missing_config_says_run_init(home):
    proc = home.run("fire", "strategist")
    assert proc.returncode == 2
    assert "routine init" in proc.stderr


def test_agent_note_error_points_at_its_line(initialised):
    home = initialised
    agent = home.vault / "Agents" / "Planner.md"
    text = agent.read_text()
    agent.write_text(text.replace("approval: none", "approval: sometimes", 1))
    line = next(i for i, text in enumerate(agent.read_text().splitlines(), 1) if text.startswith("approval:"))
    proc = home.run("fire", "planner")
    assert proc.returncode == 2
    assert f"Agents/Planner.md:{line}: At 'approval': 'sometimes' is not one of 'none', 'required'" in proc.stderr
    # Other agents still work.
    assert home.run("fire", "strategist").returncode == 0


def test_ollama_host_precedence(initialised, ollama):
    home = initialised
    # OLLAMA_HOST (set by the fixture to the stand-in) is used when the config names no host.
    assert home.run("fire", "strategist").returncode == 0
    # ollama.host in the config wins over OLLAMA_HOST.
    home.config.write_text(home.config.read_text().replace("ollama:\n", "ollama:\n  host: 127.0.0.1:9\n", 1))
    proc = home.run("fire", "strategist")
    assert proc.returncode == 1 and "http://127.0.0.1:9" in proc.stderr
