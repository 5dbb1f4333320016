"""FakeOllama driven through the REAL ollama.Client and the REAL litellm.completion."""
import os

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # before litellm is imported

import subprocess
import sys
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

import httpx
import litellm
import ollama
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from fake_ollama import FakeOllama, count_tokens, embedding, parse_keep_alive  # noqa: E402

MISTRAL = "mistral:7b-instruct-q4_K_M"
QWEN = "qwen2.5:7b-instruct-q4_K_M"
CODER = "qwen2.5-coder:7b-instruct-q4_K_M"
LLAMA = "llama3.2:3b"


class FakeClock:
    def __init__(self, t=1_700_000_000.0):
        self.t = t

    def __call__(self):
        return self.t


@pytest.fixture
def srv():
    with FakeOllama(load_delay=0.05) as s:
        yield s


def client(s):
    return ollama.Client(host=s.url)


def kinds(s, model=None):
    return [e["kind"] for e in s.events if e["kind"] != "request" and (model is None or e["model"] == model)]


# ------------------------------------------------------------------ ollama.Client
def test_chat_non_stream_real_client(srv):
    srv.script(MISTRAL, ["Paris is the capital."])
    r = client(srv).chat(model=MISTRAL, messages=[{"role": "user", "content": "Capital of France?"}],
                         stream=False)
    assert r.message.role == "assistant" and r.message.content == "Paris is the capital."
    assert r.done and r.done_reason == "stop"
    assert r.eval_count == count_tokens("Paris is the capital.")
    assert r.prompt_eval_count == count_tokens("Capital of France?")
    assert r.load_duration >= 0.05e9 and r.total_duration >= r.load_duration
    # second request: already resident with the same num_ctx -> no load
    r2 = client(srv).chat(model=MISTRAL, messages=[{"role": "user", "content": "again"}])
    assert r2.load_duration == 100_000
    assert srv.load_count(MISTRAL) == 1 and srv.resident() == [MISTRAL]


def test_chat_stream_real_client_and_default_reply(srv):
    parts = list(client(srv).chat(model=MISTRAL, stream=True, messages=[
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "Quarterly report for ACME\nsecond line ignored"}]))
    assert len(parts) >= 4 and all(not p.done for p in parts[:-1]) and parts[-1].done
    text = "".join(p.message.content for p in parts)
    assert text == f"- Summary of: Quarterly report for ACME\n- Model: {MISTRAL}"
    last = parts[-1]
    assert last.done_reason == "stop" and last.message.content == ""
    assert last.eval_count == count_tokens(text) and last.load_duration > 0 and last.eval_duration > 0


def test_tool_call_and_scripted_error(srv):
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
    srv.script(QWEN, [{"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]},
                      {"error": (500, "llama runner process has terminated")}])
    r = client(srv).chat(model=QWEN, messages=[{"role": "user", "content": "weather?"}], tools=tools)
    call = r.message.tool_calls[0]
    assert call.function.name == "get_weather" and call.function.arguments == {"city": "Paris"}
    with pytest.raises(ollama.ResponseError) as ei:
        client(srv).chat(model=QWEN, messages=[{"role": "user", "content": "x"}])
    assert ei.value.status_code == 500 and "terminated" in ei.value.error


def test_generate_load_then_unload_with_keep_alive_0(srv):
    c = client(srv)
    r = c.generate(model=LLAMA)  # empty prompt = load
    assert r.done_reason == "load" and r.response == "" and r.load_duration >= 0.05e9
    ps = c.ps().models
    assert [m.model for m in ps] == [LLAMA] and ps[0].context_length == srv.default_num_ctx
    assert ps[0].size_vram > 0 and ps[0].details.family == "llama"
    r = c.generate(model=LLAMA, keep_alive=0)
    assert r.done_reason == "unload"
    assert c.ps().models == [] and srv.resident() == []
    assert kinds(srv) == ["load", "unload"]
    r = c.generate(model=LLAMA, prompt="Say hi", stream=False)  # prompt = generate like chat
    assert r.response.startswith("- Summary of: Say hi") and srv.load_count(LLAMA) == 2


def test_eviction_when_max_loaded_reached():
    with FakeOllama(max_loaded=2, load_delay=0.01) as s:
        c = client(s)
        for m in (MISTRAL, QWEN, MISTRAL, CODER):  # MISTRAL re-used -> QWEN is least recently used
            c.chat(model=m, messages=[{"role": "user", "content": "hi"}])
        assert sorted(s.resident()) == sorted([MISTRAL, CODER])
        evicts = [e for e in s.events if e["kind"] == "evict"]
        assert [e["model"] for e in evicts] == [QWEN]
        assert s.peak_resident == 2 and s.load_count() == 3
        assert {m.model for m in c.ps().models} == {MISTRAL, CODER}


def test_eviction_prefers_soonest_expiry():
    with FakeOllama(max_loaded=2, load_delay=0.01) as s:
        c = client(s)
        c.chat(model=MISTRAL, messages=[{"role": "user", "content": "a"}], keep_alive=-1)
        c.chat(model=QWEN, messages=[{"role": "user", "content": "b"}], keep_alive="10m")
        c.chat(model=LLAMA, messages=[{"role": "user", "content": "c"}])
        assert [e["model"] for e in s.events if e["kind"] == "evict"] == [QWEN]


def test_num_ctx_change_reloads(srv):
    c = client(srv)
    msg = [{"role": "user", "content": "hi"}]
    c.chat(model=MISTRAL, messages=msg, options={"num_ctx": 4096})
    c.chat(model=MISTRAL, messages=msg, options={"num_ctx": 4096})
    assert srv.load_count(MISTRAL) == 1
    r = c.chat(model=MISTRAL, messages=msg, options={"num_ctx": 8192})
    assert r.load_duration >= 0.05e9
    assert kinds(srv, MISTRAL) == ["load", "reload"] and srv.load_count(MISTRAL) == 2
    assert [e["num_ctx"] for e in srv.events if e["kind"] == "reload"] == [8192]
    assert c.ps().models[0].context_length == 8192
    c.chat(model=MISTRAL, messages=msg)  # no num_ctx = server default (4096) -> reload again
    assert srv.load_count(MISTRAL) == 3 and srv.resident() == [MISTRAL]


def test_keep_alive_expiry_with_injected_clock():
    clock = FakeClock()
    with FakeOllama(load_delay=0.0, clock=clock) as s:
        c = client(s)
        c.chat(model=MISTRAL, messages=[{"role": "user", "content": "a"}], keep_alive="30s")
        c.chat(model=QWEN, messages=[{"role": "user", "content": "b"}], keep_alive=-1)
        c.chat(model=LLAMA, messages=[{"role": "user", "content": "c"}])  # default 5m
        exp = {m.model: m.expires_at for m in c.ps().models}
        assert exp[MISTRAL] == datetime.fromtimestamp(clock.t + 30, timezone.utc)
        assert exp[QWEN].year > 2300
        clock.t += 31
        assert sorted(s.resident()) == sorted([QWEN, LLAMA])
        clock.t += 300
        assert [m.model for m in c.ps().models] == [QWEN]
        assert [e["model"] for e in s.events if e["kind"] == "expire"] == [MISTRAL, LLAMA]


def test_keep_alive_parsing_matches_ollama(srv):
    assert parse_keep_alive("5m") == 300 and parse_keep_alive("1h30m") == 5400
    assert parse_keep_alive(-1) == float("inf") and parse_keep_alive("-1m") == float("inf")
    assert parse_keep_alive(0) == 0 and parse_keep_alive("0") == 0 and parse_keep_alive(None) == 300
    with pytest.raises(ollama.ResponseError) as ei:  # real Ollama: time.ParseDuration("-1") fails
        client(srv).chat(model=MISTRAL, messages=[{"role": "user", "content": "x"}], keep_alive="-1")
    assert ei.value.status_code == 400 and "missing unit" in ei.value.error


def test_concurrent_requests_share_one_load_and_loads_are_serialised():
    with FakeOllama(load_delay=0.2) as s:
        def ask(model):
            client(s).chat(model=model, messages=[{"role": "user", "content": "x"}])
        threads = [threading.Thread(target=ask, args=(MISTRAL,)) for _ in range(4)]
        [t.start() for t in threads]
        [t.join() for t in threads]
        assert s.load_count(MISTRAL) == 1
        t0 = time.perf_counter()
        threads = [threading.Thread(target=ask, args=(m,)) for m in (QWEN, LLAMA)]
        [t.start() for t in threads]
        [t.join() for t in threads]
        assert time.perf_counter() - t0 >= 0.4  # two loads, one at a time
        assert s.peak_resident == 3 and s.load_count() == 3


def test_unknown_model_show_tags_embed(srv):
    c = client(srv)
    with pytest.raises(ollama.ResponseError) as ei:
        c.chat(model="nope:1b", messages=[{"role": "user", "content": "x"}])
    assert ei.value.status_code == 404 and ei.value.error == 'model "nope:1b" not found, try pulling it first'
    with pytest.raises(ollama.ResponseError) as ei:
        c.show("nope")
    assert ei.value.status_code == 404 and ei.value.error == "model 'nope' not found"
    info = c.show("mistral:7b-instruct-q4_K_M")
    assert info.modelinfo["llama.context_length"] == 32768 and "tools" in info.capabilities
    assert c.show("nomic-embed-text").capabilities == ["embedding"]  # no tag -> :latest
    names = {m.model for m in c.list().models}
    assert {MISTRAL, QWEN, CODER, LLAMA, "nomic-embed-text:latest"} == names
    e = c.embed(model="nomic-embed-text", input=["alpha", "beta"])
    assert len(e.embeddings) == 2 and len(e.embeddings[0]) == 384
    assert list(e.embeddings[0]) == pytest.approx(embedding("nomic-embed-text", "alpha"))
    assert c.embed(model="nomic-embed-text", input="alpha").embeddings[0] == e.embeddings[0]
    assert "nomic-embed-text:latest" in srv.resident()
    assert httpx.get(srv.url).text == "Ollama is running"
    assert httpx.get(srv.url + "/api/nothing").status_code == 404 and srv.unexpected_paths == ["GET /api/nothing"]


# ----------------------------------------------------------------------- litellm
@pytest.fixture
def lsrv(monkeypatch):
    with FakeOllama(load_delay=0.05) as s:
        # litellm's model-info lookups (POST /api/show) ignore api_base and go to
        # OLLAMA_API_BASE or http://localhost:11434; keep them on the fake.
        monkeypatch.setenv("OLLAMA_API_BASE", s.url)
        yield s


def test_litellm_completion_non_stream(lsrv):
    lsrv.script(MISTRAL, ["Scripted answer for litellm."])
    r = litellm.completion(model=f"ollama_chat/{MISTRAL}", api_base=lsrv.url,
                           messages=[{"role": "user", "content": "Tell me something"}])
    assert r.choices[0].message.content == "Scripted answer for litellm."
    assert r.choices[0].finish_reason == "stop"
    assert r.usage.prompt_tokens == count_tokens("Tell me something")
    assert r.usage.completion_tokens == count_tokens("Scripted answer for litellm.")
    assert lsrv.last_request("/api/chat")["stream"] is False


def test_litellm_completion_stream(lsrv):
    lsrv.script(MISTRAL, ["one two three four five six seven"])
    chunks = list(litellm.completion(model=f"ollama_chat/{MISTRAL}", api_base=lsrv.url, stream=True,
                                     stream_options={"include_usage": True},
                                     messages=[{"role": "user", "content": "count"}]))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "one two three four five six seven" and len(chunks) >= 4
    usage = [c.usage for c in chunks if getattr(c, "usage", None)]
    assert usage and usage[-1].completion_tokens == count_tokens(text)
    assert lsrv.last_request("/api/chat")["stream"] is True


def test_litellm_unknown_model_raises_not_found(lsrv):
    with pytest.raises(Exception) as ei:
        litellm.completion(model="ollama_chat/ghost:7b", api_base=lsrv.url, num_retries=0,
                           messages=[{"role": "user", "content": "x"}])
    assert "not found" in str(ei.value)


def test_litellm_passes_num_ctx_and_keep_alive(lsrv):
    """The exact call form documented in fake_ollama.py ("How litellm reaches us")."""
    litellm.completion(model=f"ollama_chat/{MISTRAL}", api_base=lsrv.url,
                       messages=[{"role": "user", "content": "hi"}], num_ctx=8192, keep_alive="10m")
    body = lsrv.last_request("/api/chat")
    assert body["options"]["num_ctx"] == 8192 and body["keep_alive"] == "10m"
    assert "keep_alive" not in body["options"]
    ps = client(lsrv).ps().models[0]
    assert ps.context_length == 8192
    left = ps.expires_at.timestamp() - time.time()
    assert 590 < left <= 600
    # only /api/chat and litellm's model-info lookup reached us; nothing unexpected
    time.sleep(0.2)  # litellm's success-logging thread may still be calling /api/show
    assert {p for _, p in lsrv.http_log} <= {"/api/chat", "/api/show", "/api/ps"}
    assert lsrv.unexpected_paths == []


# --------------------------------------------------------------------------- CLI
def test_cli_serves_until_terminated():
    proc = subprocess.Popen([sys.executable, str(Path(__file__).with_name("fake_ollama.py")),
                             "--port", "0", "--load-delay", "0"], stdout=subprocess.PIPE, text=True)
    try:
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        r = ollama.Client(host=url).chat(model=LLAMA, messages=[{"role": "user", "content": "ping"}])
        assert r.message.content.startswith("- Summary of: ping")
    finally:
        proc.terminate()
        assert proc.wait(5) == 0  # SIGTERM -> clean shutdown
