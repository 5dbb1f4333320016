"""Residency in the running daemon: every model call of the process goes through one manager."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import ollama as ollama_client

from test_daemon import daemon, journal_rows, only_schedule, wait_for
from waits import scaled

MISTRAL, QWEN, CODER = "mistral:7b-instruct-q4_K_M", "qwen2.5:7b-instruct-q4_K_M", "qwen2.5-coder:7b-instruct-q4_K_M"

BUILDER_EVERY_MINUTE = textwrap.dedent("""\
    blocks:
      build-minute:
        cron: "* * * * *"
        missed: catch-up
        grace: 10m
        steps:
          - agent: builder
            task: Propose the next build step.
            write: {note: "Builds/{{ today }} minute.md"}
    triggers:
      - "on": created
        path: "Inbox/*.md"
        agent: critic
        task: "Critique [[{{ path }}]]."
        debounce: 1s
    """)


def test_a_scheduled_block_a_manual_fire_and_a_trigger_racing_for_three_models_keep_two_resident(initialised, ollama,
                                                                                                 driven_clock):
    home = initialised
    only_schedule(home, BUILDER_EVERY_MINUTE)
    for model in (MISTRAL, QWEN, CODER):
        ollama.script(model, [{"content": f"- answer from {model}", "delay": 2.0}] * 3)
    with daemon(home):
        driven_clock.before_next_minute()  # the block's next minute, in seconds
        wait_for(lambda: journal_rows(home, "SELECT id FROM runs WHERE agent='builder' AND status='running'"),
                 90, "the scheduled builder step")
        fire = subprocess.Popen([sys.executable, "-m", "routine", "fire", "strategist", "--json"], env=home.env,
                                cwd=home.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        (home.vault / "Inbox" / "A bold idea.md").write_text("Rewrite everything in a weekend.\n")
        result = json.loads(fire.communicate(timeout=scaled(120))[0])
        critique = wait_for(
            lambda: journal_rows(home, "SELECT status FROM runs WHERE agent='critic' AND status!='running'"),
            60,
            "the critic's trigger run",
        )
        wait_for(lambda: journal_rows(home, "SELECT id FROM runs WHERE agent='builder' AND status!='running'"),
                 60, "the builder step to end")
    assert result.get("status") == "ok", result  # what fire printed, when it is not a finished run
    assert critique[0][0] == "ok"
    assert ollama.peak_resident == 2  # three models wanted, the stand-in allows three: routine kept two
    assert not [e for e in ollama.events if e["kind"] in ("reload", "evict")]
    # The journal tells the residency story: each load with why, each eviction for whom.
    events = journal_rows(home, "SELECT event, reason, model FROM model_events ORDER BY id")
    assert {m for e, _, m in events if e == "load"} == {MISTRAL, QWEN, CODER}
    assert any(e == "unload" and r.startswith("evict-for:") for e, r, _ in events)
    # After SIGTERM our models are unloaded: a stopped routine leaves the memory free.
    assert ollama.resident() == []
    assert journal_rows(home, "SELECT COUNT(*) FROM model_events WHERE reason='shutdown'")[0][0] >= 1


def test_models_ps_names_who_loaded_each_model(initialised, ollama):
    home = initialised
    home.run("fire", "strategist", check=True)
    ollama_client.Client(host=ollama.url).generate(model="llama3.2:3b", prompt="", keep_alive="5m")
    out = home.run("models", "ps", check=True).stdout
    run_id = json.loads(home.run("runs", "list", "--json", check=True).stdout)[0]["id"]
    mine = next(line for line in out.splitlines() if line.startswith(MISTRAL))
    assert "routine (on-demand)" in mine and run_id in mine  # the run in a column of its own, whole
    assert "another client" in next(line for line in out.splitlines() if line.startswith("llama3.2:3b"))
    data = json.loads(home.run("models", "ps", "--json", check=True).stdout)
    assert {r["model"] for r in data["resident"]} == {MISTRAL, "llama3.2:3b"}


def test_models_plan_for_the_default_schedule_beats_ollama_alone(initialised):
    home = initialised
    plan = json.loads(home.run("models", "plan", "--hours", "168", "--json", check=True).stdout)
    loads = plan["loads"]
    assert plan["steps"] > 50
    assert loads["routine"] < loads["ollama_alone"]
    assert loads["routine"] <= loads["belady_bound"] + loads["idle_unloads"]
    assert plan["warm_share"]["routine"] >= 0.9 > plan["warm_share"]["ollama_alone"]
    text = home.run("models", "plan", check=True).stdout
    assert "with routine's plan" in text and "with Ollama alone" in text
