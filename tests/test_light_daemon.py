"""The daemon leaves the box's memory to the models (issue 47): after a fire through it, its
resident memory is what it was before, within 120 MB; Ollama deployments never load LiteLLM."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from test_daemon import daemon, only_schedule

DAEMON_MB = 120


def rss_mb(pid: int) -> float:
    line = next(ln for ln in Path(f"/proc/{pid}/status").read_text().splitlines() if ln.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


@pytest.mark.daemon
def test_a_fire_through_the_daemon_leaves_it_small(initialised, ollama):
    home = initialised
    only_schedule(home, "blocks: {}\n")
    with daemon(home, cold=True) as proc:  # cold: a fresh `python -m routine run`, as systemd starts it
        before = rss_mb(proc.pid)
        out = json.loads(home.run("fire", "strategist", "--json", check=True).stdout)
        assert out["status"] == "ok" and any(r["_path"] == "/api/chat" for r in ollama.requests)
        after = rss_mb(proc.pid)
    print(f"daemon RSS before the fire {before:.0f} MB, after {after:.0f} MB")
    assert after <= DAEMON_MB, f"the daemon holds {after:.0f} MB after a fire (was {before:.0f} MB)"


PATH_ARG = {"type": "object", "properties": {"path": {"type": "string"}}}
TOOLS = [{"type": "function", "function": {"name": "read_note", "description": "read a note", "parameters": PATH_ARG}}]


@pytest.mark.parametrize("streamed", [False, True])
def test_ollama_is_asked_natively_with_tool_calls_and_its_token_count(tmp_path, streamed):
    """The light `ollama` client speaks /api/chat as Ollama does: a tool call comes back with JSON
    arguments, the server's prompt count is the completion's, and the transcript goes back with the
    call's arguments as an object and the result named by tool_name; num_ctx and num_predict pinned."""
    from fake_ollama import FakeOllama
    from routine.models.client import ModelClient
    from test_residency import MISTRAL, write_config

    with FakeOllama(max_loaded=3, load_delay=0.0) as srv:
        config = write_config(tmp_path, srv.url)
        client = ModelClient(config)
        srv.prompt_counter = lambda model, messages, tools: 1234
        srv.script(MISTRAL, [{"tool_calls": [{"name": "read_note", "arguments": {"path": "Plans/OKRs.md"}}]},
                             "The OKRs say ship Atlas."])
        shown: list[str] = []
        messages = [{"role": "user", "content": "What do the OKRs say?"}]
        first = client.complete("general", messages, tools=TOOLS, on_token=shown.append if streamed else None)
        assert [(c["name"], json.loads(c["arguments"])) for c in first.tool_calls] == [
            ("read_note", {"path": "Plans/OKRs.md"})]
        assert first.finish_reason == "tool_calls" and first.tokens_in == 1234  # the server's prompt_eval_count
        call = first.tool_calls[0]
        messages += [{"role": "assistant", "content": "", "tool_calls": [
            {"id": call["id"], "type": "function", "function": {"name": "read_note", "arguments": call["arguments"]}}]},
            {"role": "tool", "tool_call_id": call["id"], "name": "read_note", "content": "Ship Atlas by January."}]
        second = client.complete("general", messages, tools=TOOLS, on_token=shown.append if streamed else None)
        assert second.text == "The OKRs say ship Atlas." and second.finish_reason == "stop"
        if streamed:
            assert "".join(shown) == "The OKRs say ship Atlas."
        sent = srv.last_request()
        assert sent["messages"][1]["tool_calls"][0]["function"]["arguments"] == {"path": "Plans/OKRs.md"}
        assert sent["messages"][2]["tool_name"] == "read_note"
        assert sent["options"]["num_ctx"] == 4096
        assert sent["options"]["num_predict"] == config.models["general"].num_predict


def test_a_model_not_pulled_and_a_server_away_are_named(tmp_path):
    from fake_ollama import FakeOllama
    from routine.errors import ModelMissing, ServerUnreachable
    from routine.models.client import ModelClient
    from test_residency import write_config

    with FakeOllama(max_loaded=3, load_delay=0.0) as srv:
        config = write_config(tmp_path, srv.url, extra_models="  ghost: {model: ollama_chat/ghost:7b, num_ctx: 4096}\n")
        with pytest.raises(ModelMissing, match="ghost:7b is not pulled"):
            ModelClient(config).complete("ghost", [{"role": "user", "content": "hi"}])
    config = write_config(tmp_path, "http://127.0.0.1:9")
    with pytest.raises(ServerUnreachable, match="Ollama is not reachable at http://127.0.0.1:9"):
        ModelClient(config).complete("general", [{"role": "user", "content": "hi"}])
