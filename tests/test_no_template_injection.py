"""Data is never a template: the known server-side template injection payloads, planted wherever a
note's text can reach a renderer (a task line, an agent note's body, a model's reply, a project
folder's name, a schedule author's own template), run nothing: the marker file never appears and
the text is written literally, or the run refuses with a sentence."""

from __future__ import annotations

import json

import pytest
from test_daemon import only_schedule

PAYLOADS = [
    "{{ lipsum.__globals__.os.system('touch MARKER') }}",
    "{{ cycler.__init__.__globals__.os.popen('touch MARKER').read() }}",
    "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "{% for x in ().__class__.__base__.__subclasses__() %}{{ x }}{% endfor %}",
    "{{ self._TemplateReference__context }}",
    "{{ namespace.__init__.__globals__.os.system('touch MARKER') }}",
]


def marker_made(home) -> bool:
    return any(p.name == "MARKER" for root in (home.root, home.vault) for p in root.rglob("MARKER"))


@pytest.fixture
def in_process(initialised, monkeypatch):
    for key, value in initialised.env.items():
        if key.startswith(("ROUTINE_", "OLLAMA_", "HOME")):
            monkeypatch.setenv(key, value)
    monkeypatch.chdir(initialised.root)  # a payload that ran would touch MARKER here
    return initialised


@pytest.mark.parametrize("payload", PAYLOADS)
def test_a_task_line_assigned_to_an_agent_runs_nothing(in_process, ollama, payload):
    from routine.config.loader import load_agents, load_config
    from routine.journal import Journal
    from routine.projects.pickup import pending, run_pickup
    from routine.runner.step import Runner, local_now

    home = in_process
    home.run("project", "new", "P0", check=True)
    home_note = home.vault / "Projects" / "P0" / "P0.md"
    home_note.write_text(home_note.read_text() + f"\n- [ ] Summarise {payload} [assignee:: [[Librarian]]]\n")
    config = load_config(str(home.config))
    agents, _ = load_agents(config)
    picks = pending(config.vault, agents, "Projects/P0")
    assert len(picks) == 1
    journal = Journal()
    try:
        done = run_pickup(Runner(config, journal), config.vault, picks[0], local_now(config), agents=agents)
    finally:
        journal.close()
    assert not marker_made(home)
    assert done is True, home_note.read_text()
    asked = "\n".join(str(m.get("content")) for m in ollama.last_request()["messages"])
    assert payload in asked  # the task reached the model as text


@pytest.mark.parametrize("payload", PAYLOADS[:2] + PAYLOADS[3:4])
def test_an_agent_notes_body_is_not_a_template(in_process, ollama, payload):
    home = in_process
    note = home.vault / "Agents" / "Planner.md"
    note.write_text(note.read_text() + f"\nToday is {{{{ today }}}}. Ignore this: {payload}\n")
    done = home.run("fire", "planner", "--json")
    assert not marker_made(home)
    assert done.returncode == 0, done.stderr
    system = ollama.last_request()["messages"][0]["content"]
    assert payload in system and "Today is 20" in system  # the date filled in, the rest left as written


def test_a_models_reply_with_template_syntax_is_written_as_it_is(in_process, ollama):
    home = in_process
    reply = "Plan: {{ lipsum.__globals__.os.system('touch MARKER') }} and {{ today }} stay text."
    ollama.script("mistral:7b-instruct-q4_K_M", [reply])
    done = json.loads(home.run("fire", "planner", "--json", check=True).stdout)
    assert not marker_made(home)
    assert reply in (home.vault / done["wrote"]["path"]).read_text()


@pytest.mark.parametrize("name", ["{{ today }} plans", "{{ 7 * 7 }}", *PAYLOADS, "{% raw %}x", "a { b } c"])
def test_a_name_from_the_vault_inside_an_authors_path_renders_as_itself(tmp_path, monkeypatch, name):
    """A project folder, a task's result note, an artifact's QA note go into a write target as
    ``literal(name)``: whatever the name holds, the target renders to that name."""
    from routine.templating import literal, render

    monkeypatch.chdir(tmp_path)
    target = f"Projects/{literal(name)}/Digests/{{{{ today }}}}.md"
    assert render(target, {"today": "2026-11-24"}, "the write target") == f"Projects/{name}/Digests/2026-11-24.md"
    assert not (tmp_path / "MARKER").exists()


@pytest.mark.parametrize("payload", ["{{ ''.__class__.__mro__ }}", "{{ lipsum.__globals__ }}",
                                     "{{ cycler.__init__.__globals__.os }}"])
def test_a_schedule_authors_template_cannot_reach_python(in_process, ollama, payload):
    home = in_process
    only_schedule(home, f"""\
blocks:
  sneaky:
    cron: "0 9 * * *"
    steps:
      - agent: librarian
        task: "Look at {payload}"
        write: {{note: "Daily/{{{{ today }}}}.md", section: "Sneaky"}}
""")
    done = home.run("fire", "sneaky")
    text = done.stdout + done.stderr
    assert done.returncode != 0 and "Traceback" not in text
    assert "no template may use" in text or "unsafe" in text.lower() or "template" in text.lower()
    assert not marker_made(home)
