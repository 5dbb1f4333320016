"""Agents that use tools, run as a person runs them (`routine fire`), with a stand-in model that
asks for tool calls: chains work, every escape is refused or contained, runaway loops end."""

from __future__ import annotations

import json
import socket
import textwrap

import pytest

from routine.tools.base import ToolDefinitionError, tool
from sandbox_support import needs_bubblewrap

MISTRAL = "mistral:7b-instruct-q4_K_M"

TESTER = textwrap.dedent("""\
    ---
    agent: tester
    role: Exercises the tools
    model: general
    reads: ["Projects/**"]
    writes: ["Projects/**"]
    approval: {approval}
    tools: [search_notes, read_note, list_notes, write_note, run_command, date_math, now]
    max_iterations: {iterations}
    timeout: {timeout}
    write: {{note: "Projects/Tester log.md", section: "Result"}}
    task: Try the tools.
    ---
    You test tools carefully.
    """)


def call(name, **arguments):
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


@pytest.fixture
def tester(initialised):
    home = initialised

    def make(approval="none", iterations=8, timeout="2m"):
        (home.vault / "Agents" / "Tester.md").write_text(TESTER.format(approval=approval, iterations=iterations,
                                                                       timeout=timeout))
        (home.vault / "Projects" / "Battery").mkdir(parents=True, exist_ok=True)
        (home.vault / "Projects" / "Battery" / "Status.md").write_text("# Status\nThe supplier is late by two weeks.\n")
        home.config.write_text(home.config.read_text() + "sandbox: {workdir: Projects/Sandbox, timeout: 10s}\n")
        return home
    return make


def transcript(home):
    run_id = json.loads(home.run("runs", "list", "--json", check=True).stdout)[0]["id"]
    row = json.loads(home.run("runs", "show", run_id, "--json", check=True).stdout)
    return row, [e for e in row["log"] if e["type"] == "tool"], home.run("runs", "show", run_id, check=True).stdout


def test_an_agent_chains_search_read_and_write_and_the_note_appears(tester, ollama):
    home = tester()
    home.config.write_text(home.config.read_text() + "memory: {embedding_model: 'ollama:nomic-embed-text'}\n")
    from routine.memory.chunks import chunk_note

    status = (home.vault / "Projects" / "Battery" / "Status.md").read_text()
    query = chunk_note("Projects/Battery/Status.md", status, 1000)[0].text
    # The same words outside the tester's reads scope: the best match of all, and never shown to it.
    (home.vault / "Plans" / "Status.md").write_text(status)
    decoy_query = chunk_note("Plans/Status.md", status, 1000)[0].text
    ollama.script(MISTRAL, [call("search_notes", query=decoy_query),
                            call("search_notes", query=query),
                            call("read_note", path="Projects/Battery/Status.md"),
                            call("write_note", path="Projects/Battery/Risks.md",
                                 content="- Supplier two weeks late: [[Projects/Battery/Status]]"),
                            "Filed one risk in [[Projects/Battery/Risks]]."])
    proc = home.run("fire", "tester", check=True)
    assert "Wrote Result in Projects/Tester log.md" in proc.stdout
    risks = (home.vault / "Projects" / "Battery" / "Risks.md").read_text()
    assert "Supplier two weeks late" in risks and "agent: tester" in risks
    assert "Filed one risk" in (home.vault / "Projects" / "Tester log.md").read_text()
    row, calls, shown = transcript(home)
    assert [c["name"] for c in calls] == ["search_notes", "search_notes", "read_note", "write_note"]
    assert "Plans/Status" not in calls[0]["result"] and "Plans/Status" not in calls[1]["result"]
    assert calls[1]["result"].startswith("- [[Projects/Battery/Status#Status]]")
    assert "supplier is late" in calls[2]["result"]
    assert "Transcript (5 model turns, 4 tool calls)" in shown
    assert 'read_note(path="Projects/Battery/Status.md")' in shown
    # What the model was told each time is exactly what the tool returned.
    chat = [r for r in ollama.requests if r["_path"] == "/api/chat"][-1]
    assert [m["role"] for m in chat["messages"]].count("tool") == 4


def test_escapes_through_tool_arguments_are_refused_and_the_run_goes_on(tester, ollama, tmp_path):
    home = tester(iterations=12)
    secret = tmp_path / "secret.md"
    secret.write_text("top secret")
    (home.vault / "Projects" / "link.md").symlink_to(secret)
    okrs = (home.vault / "Plans" / "OKRs.md").read_text()
    ollama.script(MISTRAL, [call("read_note", path="Plans/OKRs.md"),          # outside reads
                            call("read_note", path="../../secret.md"),         # climbs out
                            call("read_note", path=str(secret)),               # absolute
                            call("read_note", path="Projects/link.md"),        # symlink out
                            call("write_note", path="Plans/OKRs.md", content="hijacked", section="Objectives"),
                            call("write_note", path="Projects/../Plans/OKRs.md", content="hijacked"),
                            call("list_notes", folder="../.."),
                            call("read_file", path="Projects/Battery/Status.md"),  # no such tool
                            "Done trying."])
    proc = home.run("fire", "tester", check=True)
    assert "Done trying" in (home.vault / "Projects" / "Tester log.md").read_text()
    assert (home.vault / "Plans" / "OKRs.md").read_text() == okrs
    row, calls, shown = transcript(home)
    assert all(c.get("refused") for c in calls), calls
    errors = [c["error"] for c in calls]
    assert "outside its reads scope" in errors[0]
    assert "climbs out" in errors[1] and "is absolute" in errors[2] and "outside the vault" in errors[3]
    assert "outside its writes scope" in errors[4] and "climbs out" in errors[5] and "climbs out" in errors[6]
    assert "did you mean read_note?" in errors[7]
    assert "top secret" not in json.dumps(row)
    assert "8 refused" in shown and proc.returncode == 0




@needs_bubblewrap
def test_run_command_is_contained_no_network_nothing_outside_the_work_folder(tester, ollama):
    home = tester()
    commands = ["echo made in the sandbox > /work/made.txt && cat /work/made.txt",
                "touch /etc/evil; touch /usr/evil; echo done",
                f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {ollama.port}), timeout=3)\"",
                "python3 -c \"import socket; socket.create_connection(('1.1.1.1', 443), timeout=3)\"",
                f"ls /work/..; cat {home.vault}/Plans/OKRs.md",
                "vim notes.md",
                "yes | head -c 200000"]
    ollama.script(MISTRAL, [call("run_command", command=c) for c in commands] + ["Ran them."])
    home.run("fire", "tester", check=True)
    _, calls, _ = transcript(home)
    results = [json.loads(c["result"]) if not c.get("refused") else c["error"] for c in calls]
    assert results[0]["return_code"] == 0 and "made in the sandbox" in results[0]["output"]
    assert (home.vault / "Projects" / "Sandbox" / "made.txt").read_text() == "made in the sandbox\n"
    assert "Read-only file system" in results[1]["error"]
    assert not (home.vault.parent / "evil").exists()
    # The host's Ollama, on loopback: the sandbox has a loopback of its own, where nothing listens.
    assert results[2]["return_code"] != 0 and "Connection refused" in results[2]["error"]
    socket.create_connection(("127.0.0.1", ollama.port), timeout=3).close()  # outside, it does listen
    assert results[3]["return_code"] != 0
    assert "Network is unreachable" in results[3]["error"]  # and no route out at all
    assert "No such file" in results[4]["error"] and "Objectives" not in results[4]["output"]
    assert "waits for a person" in results[5]
    assert results[6]["return_code"] == 0 and "more bytes cut" in results[6]["output"]  # 64 KiB kept, rest cut


@needs_bubblewrap
def test_an_agent_that_needs_approval_gets_a_read_only_work_folder(tester, ollama):
    home = tester(approval="required")
    ollama.script(MISTRAL, [call("run_command", command="touch /work/x && echo wrote"), "Tried."])
    home.run("fire", "tester", check=True)
    _, calls, _ = transcript(home)
    result = json.loads(calls[0]["result"])
    assert result["return_code"] != 0 and "Read-only file system" in result["error"]
    assert result["work_folder"] == "/work (read-only)"


def test_max_iterations_ends_a_runaway_loop_with_a_clear_status(tester, ollama):
    home = tester(iterations=3)
    ollama.script(MISTRAL, [call("now")] * 10)
    proc = home.run("fire", "tester")
    assert proc.returncode == 1
    assert "stopped after 3 model turns without a final answer" in proc.stderr
    row, calls, _ = transcript(home)
    assert row["status"] == "max-iterations" and len(calls) == 3
    assert not (home.vault / "Projects" / "Tester log.md").exists()
    assert list((home.vault / "Alerts").glob("*tester max-iterations*.md"))


def test_the_timeout_ends_a_slow_loop_with_a_clear_status(tester, ollama):
    home = tester(timeout="2s")
    ollama.script(MISTRAL, [{**call("now"), "delay": 1.5}, {**call("now"), "delay": 1.5}, "too late"])
    proc = home.run("fire", "tester")
    assert proc.returncode == 1 and "stopped after 2s" in proc.stderr
    assert transcript(home)[0]["status"] == "timeout"


def test_an_answer_that_arrives_after_the_timeout_is_not_written(tester, ollama):
    home = tester(timeout="2s")
    # The first call outlives the run's time; the client's retry then answers at once, too late.
    ollama.script(MISTRAL, [{"content": "slow", "delay": 3}, "quick, but after the time was up"])
    proc = home.run("fire", "tester")
    assert proc.returncode == 1 and "stopped after 2s" in proc.stderr
    assert transcript(home)[0]["status"] == "timeout"
    assert not (home.vault / "Projects" / "Tester log.md").exists()


def test_small_model_quirks_json_in_text_broken_arguments(tester, ollama):
    home = tester()
    ollama.script(MISTRAL, [
        '```json\n{"name": "read_note", "arguments": {"path": "Projects/Battery/Status.md"}}\n```',
        '<tool_call>{"name": "date_math", "arguments": {"start": "2026-11-27", "add": "3 days",}}</tool_call>',
        '{"name": "list_notes", "arguments": {"folder": "Projects"',
        "All read."])
    home.run("fire", "tester", check=True)
    _, calls, shown = transcript(home)
    assert [c["name"] for c in calls] == ["read_note", "date_math", "list_notes"]
    assert not any(c.get("refused") for c in calls)
    assert "supplier is late" in calls[0]["result"]
    assert calls[1]["result"].startswith("Monday 2026-11-30")
    assert "[written as text]" in shown


def test_a_tool_is_checked_when_it_is_defined():
    with pytest.raises(ToolDefinitionError, match="schema inputs"):

        @tool(
            "bad_tool", "A tool whose schema and function disagree.", {"path": {"type": "string", "description": "x"}}
        )
        def bad_tool(ctx, name: str = ""):
            return name
    with pytest.raises(ToolDefinitionError, match="description"):
        @tool("quiet", "", {})
        def quiet(ctx):
            return ""
    with pytest.raises(ToolDefinitionError, match="bad input schema"):
        @tool("typo", "A tool with a broken schema.", {"k": {"type": "integr", "description": "k"}})
        def typo(ctx, k: int = 1):
            return k
    with pytest.raises(ToolDefinitionError, match="add its name to routine/config/tool_names.py"):
        @tool("undeclared", "A well-made tool whose name is not declared.", {})
        def undeclared(ctx):
            return ""


def test_every_tool_declared_is_in_the_registry():
    import importlib
    import pkgutil

    import routine.tools
    from routine.tools.base import Tool
    from routine.tools.registry import TOOLS

    defined = {}
    for info in pkgutil.iter_modules(routine.tools.__path__):
        module = importlib.import_module(f"routine.tools.{info.name}")
        defined.update({v.name: v for v in vars(module).values() if isinstance(v, Tool)})
    assert len(defined) >= 10
    assert defined == TOOLS, "add each @tool to TOOLS in routine/tools/registry.py"


def test_every_list_of_tool_names_names_only_declared_tools():
    """The schema's, the library default, a new agent's default, the smolagents export: each is
    checked when defined, and no hand-written list of tool names anywhere names an unknown one."""
    import ast
    from pathlib import Path

    from routine.agents.authoring import DEFAULT_TOOLS
    from routine.agents.smolagents_tools import EXPORTABLE
    from routine.config.schedule_schema import AGENT
    from routine.config.schema import CONFIG, LIBRARY_TOOLS, TOOL_NAMES
    from routine.tools.registry import TOOLS, declared

    assert TOOL_NAMES == tuple(TOOLS)
    own, mcp = AGENT["properties"]["tools"]["items"]["anyOf"]  # routine's own tools, or an MCP server's
    assert own["enum"] == list(TOOLS) and mcp["pattern"].startswith("^mcp:")
    library = CONFIG["properties"]["libraries"]["additionalProperties"]["oneOf"][1]["properties"]["tools"]
    assert library["items"]["enum"] == list(TOOLS) and library["default"] == list(LIBRARY_TOOLS)
    for names in (LIBRARY_TOOLS, DEFAULT_TOOLS, EXPORTABLE):
        assert set(names) <= set(TOOLS), names
    with pytest.raises(ToolDefinitionError, match="no tool is declared by that name"):
        declared("read_note", "read_notes")

    unknown = []
    for path in sorted((Path(__file__).resolve().parent.parent / "routine").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            elements = (node.elts if isinstance(node, (ast.List, ast.Tuple, ast.Set))
                        else [k for k in node.keys if k is not None] if isinstance(node, ast.Dict) else [])
            names = [e.value for e in elements if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            if len(set(names) & set(TOOLS)) >= 2:  # a list of tool names
                unknown += [f"{path.name}:{node.lineno} {n}" for n in names if n not in TOOLS]
    assert not unknown, f"these name no declared tool: {unknown}"


def test_a_model_failure_halfway_keeps_the_transcript_of_what_was_done(tester, ollama):
    home = tester()
    ollama.script(MISTRAL, [call("write_note", path="Projects/Half.md", content="written before the failure")]
                  + [{"error": (500, "the GPU fell over")}] * 10)
    ollama.script("qwen2.5:7b-instruct-q4_K_M", [{"error": (500, "the GPU fell over")}] * 10)  # the fallback too
    proc = home.run("fire", "tester")
    assert proc.returncode == 1 and "GPU fell over" in proc.stderr
    row, calls, shown = transcript(home)
    assert row["status"] == "failed"
    assert [c["name"] for c in calls] == ["write_note"] and "Created Projects/Half.md" in calls[0]["result"]
    assert (home.vault / "Projects" / "Half.md").exists()


@needs_bubblewrap
def test_run_command_as_root_gets_no_capabilities_no_fork_bomb_and_a_bounded_tmp(tester, ollama):
    """We run the tests as root (a container, a board's default login): root inside bubblewrap
    kept every capability and could remount the read-only work folder and /usr read-write."""
    import os

    home = tester(approval="required")  # a read-only work folder
    evil = f"/usr/routine-evil-{os.getpid()}"
    commands = [
        "grep CapEff /proc/self/status",
        f"mount -o remount,bind,rw /work; touch /work/got-in; mount -o remount,bind,rw /usr; touch {evil}",
        # count the children really started ($! changes), with builtins only: no fork is left for ls
        (
            'i=0; n=0; last=; while [ $i -lt 300 ]; do sleep 5 & [ "$!" != "$last" ] && n=$((n+1)) && last=$!; '
            "i=$((i+1)); echo $n; done"
        ),
        "dd if=/dev/zero of=/tmp/big bs=1M count=200",
    ]
    ollama.script(MISTRAL, [call("run_command", command=c) for c in commands] + ["Tried."])
    home.run("fire", "tester", check=True)
    _, calls, _ = transcript(home)
    results = [json.loads(c["result"]) for c in calls]
    assert results[0]["output"].split() == ["CapEff:", "0000000000000000"]
    assert not os.path.exists(evil) and not (home.vault / "Projects" / "Sandbox" / "got-in").exists()
    assert results[1]["return_code"] != 0 and "Read-only file system" in results[1]["error"]
    assert "fork" in results[2]["error"].lower(), results[2]  # the shell was refused a process…
    assert (
        0 < int(results[2]["output"].split()[-1]) < 64
    )  # …after fewer than 64, not 300  # 64 processes at most (sh and bwrap count), not 300
    assert results[3]["return_code"] != 0 and "No space left" in results[3]["error"]
