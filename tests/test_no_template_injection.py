"""Data is never a template (issue 24): the known server-side template injection payloads, planted
wherever a note's text can reach a renderer (a task line, an agent note's body and fields, a note
used as an input or firing a trigger, a model's reply, a chat, a library agent, a project folder's
name, a schedule author's own template), run nothing: the marker file never appears and the text
is written literally, or refused with one sentence naming the file and the YAML key."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from agent_cli import cli
from test_agent_library import two_vaults  # noqa: F401  (a fixture)
from test_chat import chat_home, chat_note, runner_for  # noqa: F401  (chat_home is a fixture)
from test_daemon import daemon, only_schedule
from waits import wait_until

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
    from routine.flows.pickup import pending, run_pickup
    from routine.flows.step_setup import STEP_SETUP
    from routine.journal import Journal
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
        done = run_pickup(Runner(config, journal, setup=STEP_SETUP), config.vault, picks[0], local_now(config),
                          agents=agents)
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
    """A project folder, a task's result note, an artifact's QA note go into a write target as a
    variable (``{{ project_folder }}``): whatever the name holds, the target renders to that name."""
    from routine.templating import render

    monkeypatch.chdir(tmp_path)
    target = "Projects/{{ project_folder }}/Digests/{{ today }}.md"
    assert render(target, {"today": "2026-11-24", "project_folder": name}, "the write target") \
        == f"Projects/{name}/Digests/2026-11-24.md"
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


# --- folded from branch sec-template --------------------------------------------------------------

PROJECT = "Acme"
HOME_NOTE = f"Projects/{PROJECT}/{PROJECT}.md"


def payloads(tag: str) -> list[str]:
    """Known injections; the ones that can run a command touch pwned-TAG-N (relative: the tests run
    with the home as the working directory, as the daemon does)."""
    return [
        f"{{{{ lipsum.__globals__.os.system('touch pwned-{tag}-1') }}}}",
        f"{{{{ cycler.__init__.__globals__.os.popen('touch pwned-{tag}-2') }}}}",
        f"{{{{ joiner.__init__.__globals__.os.system('touch pwned-{tag}-3') }}}}",
        "{{ ''.__class__.__mro__[1].__subclasses__() }}",
        "{% for x in ().__class__.__base__.__subclasses__() %}{{ x }}{% endfor %}",
        "{{ config }}",
        "{{ self._TemplateReference__context }}",
    ]


def no_marker(home) -> None:
    found = sorted(p.name for p in Path(home.root).rglob("pwned-*"))
    found += sorted(p.name for p in Path.cwd().glob("pwned-*"))
    assert not found, f"a payload ran: {found}"


@pytest.fixture
def at_home(initialised, monkeypatch):
    monkeypatch.chdir(initialised.root)
    return initialised


def put(home, rel: str, text: str) -> Path:
    path = home.vault / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def sent(ollama) -> str:
    return "\n".join(m["content"] for m in ollama.last_request("/api/chat")["messages"])


@pytest.mark.parametrize(("field", "key"), [("task", "task"), ("write", "write.note"), ("inputs", "inputs[0]")])
def test_template_code_in_an_agent_notes_fields_is_refused_with_a_located_sentence(at_home, ollama, field, key):
    """An agent note is data (a library or an agent may have written it): its `task`, `write` and
    `inputs` get only {{ today }}-style placeholders; more is refused at load, before any render."""
    from routine.vault.frontmatter import join_frontmatter, split_frontmatter

    home = at_home
    payload = payloads(field)[0]
    path = home.vault / "Agents/Scribe.md"
    props, body = split_frontmatter(path.read_text(encoding="utf-8"))
    props[field] = {"task": f"Summarise {payload}", "write": {"note": f"Daily/{payload}.md"},
                    "inputs": [f"Daily/{payload}.md"]}[field]
    path.write_text(join_frontmatter(props, body), encoding="utf-8")
    proc = cli(home, "fire", "scribe", "--task", "Log the morning.", check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 2 and "Traceback" not in out, out
    assert "Agents/Scribe.md:" in out and f"At '{key}': this holds template code, and an agent note is data; " \
        "write it as plain text with only placeholders such as {{ today }}" in out, out
    assert not [r for r in ollama.requests if r["_path"] == "/api/chat"]
    no_marker(home)


def test_an_agent_notes_fields_keep_their_plain_placeholders(at_home, ollama):
    from routine.vault.frontmatter import join_frontmatter, split_frontmatter

    home = at_home
    path = home.vault / "Agents/Scribe.md"
    props, body = split_frontmatter(path.read_text(encoding="utf-8"))
    props["task"] = "Log {{ weekday }} ({{ today }})."
    path.write_text(join_frontmatter(props, body), encoding="utf-8")
    cli(home, "fire", "scribe")
    assert "Log " in sent(ollama) and "{{ weekday }}" not in sent(ollama)


def test_a_note_used_as_an_input_and_named_like_a_template_is_read_as_text(at_home, ollama):
    home = at_home
    for i, payload in enumerate(payloads("input")[:3]):
        put(home, f"Inbox/{payload}.md", f"# Capture {i}\nThe supplier wrote: {payload}\n")
    ollama.script("qwen2.5:7b-instruct-q4_K_M", ["Nothing to file."])
    cli(home, "fire", "librarian", "--task", "File the Inbox.")
    prompt = sent(ollama)
    for payload in payloads("input")[:3]:
        assert f"The supplier wrote: {payload}" in prompt
    no_marker(home)


def test_a_model_reply_holding_template_code_is_handed_on_as_a_value(at_home, ollama):
    home = at_home
    only_schedule(home, textwrap.dedent("""\
        blocks:
          relay:
            cron: "0 9 * * *"
            steps:
              - agent: scribe
                task: "Write the log."
                write: {note: "Drafts/{{ today }} Relay.md", section: "Log"}
              - agent: strategist
                task: "Review this: {{ steps.scribe.output }}"
                inputs: ["{{ steps.scribe.output }}"]
                write: {note: "Drafts/{{ today }} Relay.md", section: "Review"}
        """))
    reply = "Done.\n" + "\n".join(payloads("reply"))
    ollama.reply_fn = lambda model, messages: reply
    out = json.loads(cli(home, "fire", "relay", "--json").stdout)
    assert [s["status"] for s in out["steps"]] == ["ok", "ok"], out
    note = next((home.vault / "Drafts").glob("* Relay.md")).read_text(encoding="utf-8")
    assert note.count(payloads("reply")[0]) == 2 and payloads("reply")[4] in note
    assert f"Review this: {reply}" in sent(ollama)  # the second step's task got the output as a value
    no_marker(home)


def test_a_chat_message_and_the_answer_holding_template_code_stay_text(chat_home, ollama, monkeypatch):  # noqa: F811
    from routine.chat.notes import answer_note

    monkeypatch.chdir(chat_home.root)
    question = "What does this do? " + " ".join(payloads("chat"))
    chat_note(chat_home, "Chats/Odd.md", question + "\n")
    answer = "It is template code: " + payloads("chat-answer")[1]
    ollama.reply_fn = lambda model, messages: answer
    runner, journal, agents = runner_for(chat_home)
    try:
        assert answer_note(runner, journal, agents, "Chats/Odd.md") is not None
    finally:
        runner.close()
        journal.close()
    asked = [r for r in ollama.requests if r["_path"] == "/api/chat"][-1]["messages"][-1]["content"]
    assert question in asked
    assert answer in chat_home.note("Chats/Odd.md") and question in chat_home.note("Chats/Odd.md")
    no_marker(chat_home)


def test_a_library_agent_whose_body_holds_template_code_installs_and_runs_it_as_text(two_vaults, ollama,  # noqa: F811
                                                                                     monkeypatch):
    author, other, _ = two_vaults
    monkeypatch.chdir(other.root)
    body = "\n".join(payloads("library"))
    path = author.vault / "Agents/Pricer.md"
    path.write_text(path.read_text(encoding="utf-8") + "\n" + body + "\n", encoding="utf-8")
    cli(author, "agent", "publish", "Pricer", "--to", "shared")
    cli(other, "agent", "install", "pricer", "--from", "shared")
    ollama.script("mistral:7b-instruct-q4_K_M", ["## Offer\n12 seats at 40 EUR."])
    cli(other, "fire", "pricer", "--task", "Price 12 seats.")
    assert body in sent(ollama)
    no_marker(other)
    no_marker(author)


SCHEDULE = """\
blocks:
  x:
    cron: "0 9 * * *"
    steps:
      - agent: scribe
        task: "{task}"
        write: {{note: "Daily/{{{{ today }}}}.md", section: "X"}}
"""


def test_the_authors_template_may_still_use_filters_and_loops_but_no_jinja_globals(at_home, ollama):
    home = at_home
    only_schedule(home, SCHEDULE.format(task="Log {{ weekday | upper }}: {% for d in last_week %}{{ d }} {% endfor %}"))
    out = cli(home, "fire", "x", "--dry-run").stdout
    assert any(f"Log {day.upper()}: 20" in out for day in ("MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY",
                                                              "SATURDAY", "SUNDAY")), out
    for name in ("lipsum", "cycler", "joiner", "namespace", "dict"):
        only_schedule(home, SCHEDULE.format(task=f"{{{{ {name} }}}}"))
        proc = cli(home, "schedule", "validate", check=False)
        assert proc.returncode == 2 and f"unknown template variable {name}" in proc.stdout + proc.stderr, name


def test_task_lines_and_an_inbox_note_named_with_template_code_run_nothing_in_the_daemon(at_home, ollama):
    """The issue's attack: a task line assigned to the Librarian names its result note after
    template code, and a note dropped in the Inbox fires a trigger with its path as an input."""
    home = at_home
    only_schedule(home, textwrap.dedent("""\
        triggers:
          - "on": created
            path: "Inbox/*.md"
            agent: librarian
            task: "A new note arrived: [[{{ path }}]]."
            debounce: 1s
            write: {note: "Daily/{{ today }}.md", section: "Inbox"}
        """))
    cli(home, "project", "new", PROJECT)
    tasks = [f"Summarise {p}" for p in payloads("task")[:4]] + ["Summarise {{ config }} and {{ today }}"]
    with daemon(home):
        text = home.note(HOME_NOTE).replace("## Tasks\n", "## Tasks\n\n" + "".join(
            f"- [ ] {t} [assignee:: [[Librarian]]]\n" for t in tasks), 1)
        (home.vault / HOME_NOTE).write_text(text, encoding="utf-8")
        put(home, f"Inbox/{payloads('trigger')[0]}.md", "# A capture\n" + payloads("trigger")[1] + "\n")

        def settled() -> bool:
            lines = [ln for ln in home.note(HOME_NOTE).splitlines() if "[assignee::" in ln]
            return len(lines) == len(tasks) and all(ln.startswith("- [x]") for ln in lines)

        wait_until(settled, 90, "every task done")
        wait_until(lambda: payloads("trigger")[1] in json.dumps([r.get("messages") for r in list(ollama.requests)]),
                   60, "the trigger's run with the Inbox note as its input")
    names = {p.name for p in (home.vault / "Projects" / PROJECT).glob("Summarise*.md")}
    assert f"Summarise {payloads('task')[0]}.md" in names  # named literally, after the task
    assert "Summarise {{ config }} and {{ today }}.md" in names
    prompts = json.dumps([r.get("messages") for r in list(ollama.requests)], ensure_ascii=False)
    assert all(t in prompts for t in tasks)  # each task's text reached its agent as written
    no_marker(home)


def test_a_project_folder_goes_into_its_cadence_as_a_value(at_home, ollama):
    home = at_home
    cli(home, "project", "new", PROJECT)
    cli(home, "project", "new", "Beta")
    assert "ok:" in cli(home, "schedule", "validate").stdout  # two digests at 09:00 are two notes, no clash
    blocks = {b["id"]: b["steps"] for b in json.loads(cli(home, "schedule", "list", "--json").stdout)["blocks"]}
    assert blocks["acme-digest"][-1]["write"] == "Projects/Acme/Digests/{{ today }}.md § Daily digest"
    assert json.loads(cli(home, "fire", "beta-digest", "--json").stdout)["status"] == "ok"
    assert any((home.vault / "Projects/Beta/Digests").glob("20*.md"))
