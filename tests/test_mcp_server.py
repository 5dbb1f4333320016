"""`routine mcp`: the MCP SDK's own client, connected over stdio to `routine mcp --as planner`, as
another program's agent would be."""

from __future__ import annotations

import json
import sys
import textwrap

import anyio
import pytest

from test_daemon import daemon

pytest.importorskip("mcp")


def session_calls(home, agent: str | None, calls: list[tuple[str, dict]]) -> tuple[list[str], list]:
    """The tools `routine mcp` lists, and each call's (is_error, text)."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    args = ["-m", "routine", "mcp", *(["--as", agent] if agent else [])]
    params = StdioServerParameters(command=sys.executable, args=args, env=home.env, cwd=str(home.root))

    async def talk() -> tuple[list[str], list]:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            listed = await session.list_tools()
            results = []
            for name, arguments in calls:
                result = await session.call_tool(name, arguments)
                results.append((result.is_error, "\n".join(c.text for c in result.content if c.type == "text")))
            return [t.name for t in listed.tools], results

    return anyio.run(talk)


def test_another_programs_agent_reads_searches_and_proposes_as_the_planner_may(initialised):
    from routine.config.loader import agent_named, load_agents, load_config
    from routine.errors import ScopeError
    from routine.vault.scope import check_read

    home = initialised
    (home.vault / "Inbox").mkdir(exist_ok=True)
    (home.vault / "Inbox" / "Salary.md").write_text("# Salary\nThe offer is 90k.\n")
    before = {p.relative_to(home.vault).as_posix(): p.read_bytes() for p in home.vault.rglob("*.md")}
    tools, results = session_calls(home, "planner", [
        ("read_vault_note", {"path": "Plans/OKRs.md"}),
        ("read_vault_note", {"path": "Inbox/Salary.md"}),
        ("waiting", {}),
        ("propose_change", {"path": "Daily/2026-11-30.md", "section": "Plan",
                            "content": "- 09:00 deep work on the battery report"}),
        ("propose_change", {"path": "Inbox/Salary.md", "content": "The offer is 200k."}),
        ("waiting", {}),
    ])
    assert {"search_vault", "read_vault_note", "waiting", "ask_agent", "fire_block", "propose_change"} <= set(tools)
    okrs, salary, empty, proposed, refused, listed = results
    assert not okrs[0] and "# Plans/OKRs.md" in okrs[1]
    # Refused with the sentence every read outside an agent's scopes gets (the one scope check).
    config = load_config(home.config)
    planner = agent_named(*load_agents(config), "planner")
    with pytest.raises(ScopeError) as said:
        check_read(config.vault, list(planner.reads), "Inbox/Salary.md", "planner")
    assert salary[0] and said.value.message in salary[1] and "90k" not in salary[1]
    assert "Nothing waits on the person" in empty[1]
    assert not proposed[0] and "Proposed: Drafts/" in proposed[1]
    assert refused[0] and "90k" not in refused[1]
    # The change is a proposal in Drafts/ and nothing else in the vault changed.
    after = {p.relative_to(home.vault).as_posix(): p.read_bytes() for p in home.vault.rglob("*.md")}
    changed = sorted(set(after) - set(before)) + sorted(k for k in before if after.get(k) != before[k])
    assert len(changed) == 1 and changed[0].startswith("Drafts/") and "battery report" in after[changed[0]].decode()
    assert changed[0] in listed[1]
    # Every call journaled as the planner's, with trigger mcp.
    runs = json.loads(home.run("runs", "list", "--json", "-n", "20", check=True).stdout)
    mine = [r for r in runs if r.get("trigger") == "mcp"]
    assert len(mine) == 6 and {r["agent"] for r in mine} == {"planner"}


def test_the_librarian_is_whom_routine_mcp_serves_by_default(initialised):
    _, results = session_calls(initialised, None, [("read_vault_note", {"path": "Inbox/none.md"})])
    assert results[0][0] and "There is no note Inbox/none.md" in results[0][1]


def test_routine_mcp_for_an_agent_that_does_not_exist_says_so(initialised):
    proc = initialised.run("mcp", "--as", "nobody")
    assert proc.returncode == 2 and "There is no agent named 'nobody'" in proc.stdout + proc.stderr


def test_ask_answers_as_the_agent_and_a_block_fires_only_through_the_daemon(initialised, ollama):
    ollama.script("mistral:7b-instruct-q4_K_M", ["Deep work first, at 09:00."])
    _, results = session_calls(initialised, "planner", [("ask_agent", {"question": "What comes first today?"}),
                                                        ("fire_block", {"block": "nowhere"})])
    (asked_failed, answer), (fire_failed, refusal) = results
    assert not asked_failed and "Deep work first, at 09:00." in answer
    assert fire_failed and "planner is in no block named 'nowhere'" in refusal
    chats = initialised.run("chats", "list", check=True).stdout
    assert "planner" in chats  # the question is a conversation of the planner's, journaled as any other


JOT = textwrap.dedent("""\
    blocks:
      jot:
        cron: "0 3 1 1 *"
        steps:
          - agent: planner
            task: Jot the day's first block.
            write: {note: "Daily/{{ today }}.md", section: "Jot"}
    """)


def test_a_block_fired_through_routine_mcp_runs_in_the_daemon_journaled_as_mcp(initialised, ollama):
    home = initialised
    (home.config.parent / "schedules" / "jot.yaml").write_text(JOT)
    ollama.script("mistral:7b-instruct-q4_K_M", ["- 09:00 deep work"])
    with daemon(home):
        _, results = session_calls(home, "planner", [("fire_block", {"block": "jot"})])
    failed, said = results[0]
    assert not failed and said.startswith("Block jot ran: ok")
    runs = json.loads(home.run("runs", "list", "--json", "-n", "20", check=True).stdout)
    assert {r["trigger"] for r in runs if r.get("block") == "jot"} == {"mcp"}
