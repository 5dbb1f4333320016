"""Hostile or mistaken config: every case is one located sentence with its fix and exit 2 —
never a traceback, a hang, a silently dropped block or a schedule that quietly never fires.
Run in process through the real entry point (`routine.cli.main`)."""

from __future__ import annotations

import textwrap

import pytest

from routine.cli import main

STEP = """\
  {name}:
    cron: "{cron}"
    steps:
      - agent: scribe
        task: "{task}"
        write: {{note: "{note}", section: "{section}"}}
"""


def block(name="x", cron="0 9 * * *", task="Sum up the day.", note="Daily/{{ today }}.md", section="X") -> str:
    return STEP.format(name=name, cron=cron, task=task, note=note, section=section)


BOMB = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{b}: &{b} [{', '.join([f'*{a}'] * 9)}]\n" for a, b in zip("abcdefgh", "bcdefghi"))

# name -> (schedule file bytes, expected line, words the one sentence must hold)
SCHEDULES = {
    "a Latin-1 byte": (b"blocks:\n" + block(task="caf\xe9").encode("latin-1"), 6, "byte 0xe9 is not UTF-8"),
    "{{ today } in a write path": ("blocks:\n" + block(note="Daily/{{ today }.md"), 7,
                                   "At 'blocks.x.steps[0].write.note': template syntax error"),
    "{{ 1/0 }} in a task": ("blocks:\n" + block(task="Sum up {{ 1/0 }}"), 6,
                            "fails when rendered: ZeroDivisionError"),
    "a YAML alias bomb": (BOMB, 1, "expands to more than 100,000 values"),
    "one block name twice": ("blocks:\n" + block("y", section="A") + block("y", section="B"), 8,
                             "'y' appears twice (first on line 2)"),
    "February 30": ("blocks:\n" + block(cron="0 9 30 2 *"), 3, "never fires: no month it names has day 30"),
    "a recursive anchor": ("a: &a [*a]\n", 1, "refers to itself"),
}


@pytest.fixture
def cli(initialised, monkeypatch, capsys):
    home = initialised
    for key, value in home.env.items():
        if key.startswith(("ROUTINE_", "OLLAMA_")):
            monkeypatch.setenv(key, value)

    def run(*args: str) -> tuple[int, str]:
        code = main(list(args))
        out = capsys.readouterr()
        return code, out.out + out.err
    run.home = home
    return run


def _schedule(home, content) -> str:
    path = home.config.parent / "schedules" / "bad.yaml"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return str(path)


@pytest.mark.parametrize("case", list(SCHEDULES))
def test_a_broken_schedule_file_is_one_located_sentence_and_exit_2(cli, case):
    content, line, words = SCHEDULES[case]
    path = _schedule(cli.home, content)
    for command in (["schedule", "validate"], ["doctor"]):
        code, out = cli(*command)
        assert code == 2 and "Traceback" not in out, out
        assert f"{path}:{line}: " in out and words in out, out


def test_a_template_that_fails_at_fire_time_is_refused_by_validate_and_by_fire(cli):
    _schedule(cli.home, "blocks:\n" + block("sum-up", task="Sum up {{ 1/0 }}"))
    code, out = cli("fire", "sum-up", "--dry-run")
    assert code == 2 and "ZeroDivisionError" in out and "bad.yaml:6" in out and "Traceback" not in out


def test_fire_block_in_a_file_with_a_yaml_error_names_the_yaml_error(cli):
    path = _schedule(cli.home, "blocks:\n" + block("sum-up") + "  broken: [\n")
    code, out = cli("fire", "sum-up")
    assert code == 2 and "YAML syntax error" in out and path in out and "no agent named" not in out, out


def test_routine_yaml_that_is_a_folder(cli):
    config = cli.home.config
    text = config.read_text()
    config.unlink()
    config.mkdir()
    try:
        code, out = cli("schedule", "validate")
        assert code == 2 and f"{config}: this path is a folder, not a regular file" in out and "Traceback" not in out
    finally:
        config.rmdir()
        config.write_text(text)


def test_a_file_where_the_schedules_folder_should_be(cli):
    folder = cli.home.config.parent / "schedules"
    for f in folder.iterdir():
        f.unlink()
    folder.rmdir()
    folder.write_text("blocks: {}\n")
    code, out = cli("schedule", "validate")
    assert code == 2 and f"{folder}: this should be the folder of schedule files, but it is a file" in out


def test_agent_scopes_that_point_outside_the_vault_are_refused(cli):
    agent = cli.home.vault / "Agents" / "Scribe.md"
    text = agent.read_text()
    reads = next(line for line in text.splitlines() if line.startswith("reads:"))
    agent.write_text(text.replace(reads, 'reads: ["Daily/**", "../**", "/etc/**"]'))
    code, out = cli("schedule", "validate")
    assert code == 2, out
    assert "Agents/Scribe.md:" in out and "'../**' points outside the vault" in out and "'/etc/**'" in out


def test_section_clashes_are_still_found_among_thousands_of_blocks(cli):
    # Validation is linear in blocks (bucketed by target and minute): 3,000 blocks, one clash.
    blocks = "".join(block(f"b{i}", cron=f"{i % 60} {i % 24} * * *", section=f"S{i}") for i in range(3000))
    clash = block("late", cron="0 0 * * *", section="S0")
    path = _schedule(cli.home, "blocks:\n" + blocks + clash)
    code, out = cli("schedule", "validate")
    assert code == 2 and f"{path}: At 'blocks.late': writes section 'S0'" in out and "block 'b0'" in out, out[-500:]


def test_doctor_exits_2_on_a_config_error_and_says_where(cli):
    cli.home.config.write_text(cli.home.config.read_text() + textwrap.dedent("""\
        ollama:
          max_resident: 2
        """))
    code, out = cli("doctor")
    assert code == 2 and "'ollama' appears twice" in out
