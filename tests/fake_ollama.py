"""A stand-in Ollama server: a real HTTP server on 127.0.0.1 (stdlib only) speaking the Ollama REST
API (/api/chat, /api/generate, /api/ps, /api/tags, /api/show, /api/embed, /api/embeddings,
/api/version, GET /) and keeping Ollama's residency rules: load on demand, RELOAD when num_ctx
changes, keep_alive expiry, max_loaded eviction, one load at a time.

    with FakeOllama(max_loaded=2) as srv:
        srv.script("mistral:7b-instruct-q4_K_M", ["hello", {"tool_calls": [...]}])
        ...  # ollama.Client(host=srv.url) / litellm api_base=srv.url
        assert srv.load_count("mistral:7b-instruct-q4_K_M") == 1

CLI: ``python tests/fake_ollama.py --port 11434 [--load-delay 2]`` prints its URL as the first
stdout line and serves until SIGINT/SIGTERM.

How litellm reaches us (litellm 1.106, verified in tests/test_fake_ollama.py)
----------------------------------------------------------------------------
    litellm.completion(
        model="ollama_chat/mistral:7b-instruct-q4_K_M",   # -> POST {api_base}/api/chat
        api_base=url, messages=[...], stream=False,
        num_ctx=8192,       # plain kwarg -> body["options"]["num_ctx"]
        keep_alive="10m",   # plain kwarg -> body["keep_alive"] (top level, NOT in options)
    )
  * keep_alive: a Go duration STRING ("10m", "30s", "-1m") or a NUMBER of seconds (-1 = forever,
    0 = unload after the request).  The string "-1" is rejected by real Ollama (HTTP 400,
    time.ParseDuration "missing unit") and here too - send the number -1.
  * Omitting num_ctx means the server default (default_num_ctx, 4096 here), which RELOADS a model
    resident with another num_ctx.  Always pass num_ctx explicitly.
  * litellm also POSTs /api/show {"name": model} (model-info lookup for cost/logging): a few
    times per call on the calling thread, BEFORE /api/chat, and sometimes once more from its
    background logging thread (which does use api_base).  The calling-thread ones IGNORE
    api_base: they go to $OLLAMA_API_BASE or http://localhost:11434 (failures are swallowed).
    Set OLLAMA_API_BASE=url to keep them on this server.  Unserved paths go to unexpected_paths.
"""
from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import math
import random
import re
import signal
import socket
import threading
import time
from collections import deque
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

_MB = 1 << 20
# name -> (family == architecture, parameter_size, quantization_level, file size, trained ctx, capabilities)
DEFAULT_MODELS = {
    "mistral:7b-instruct-q4_K_M": ("llama", "7.2B", "Q4_K_M", 4372 * _MB, 32768, ["completion", "tools"]),
    "qwen2.5:7b-instruct-q4_K_M": ("qwen2", "7.6B", "Q4_K_M", 4683 * _MB, 32768, ["completion", "tools"]),
    "qwen2.5-coder:7b-instruct-q4_K_M": ("qwen2", "7.6B", "Q4_K_M", 4683 * _MB, 32768, ["completion", "tools"]),
    "llama3.2:3b": ("llama", "3.2B", "Q4_K_M", 2019 * _MB, 131072, ["completion", "tools"]),
    "nomic-embed-text": ("nomic-bert", "137M", "F16", 274 * _MB, 2048, ["embedding"]),
}
_GENERIC = ("llama", "7B", "Q4_K_M", 4096 * _MB, 32768, ["completion", "tools"])
_GO_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_GO_PART = re.compile(r"(\d*\.?\d+)(ns|us|µs|ms|s|m|h)")
FOREVER_DAYS = 106_751  # Go's time.Duration(math.MaxInt64) ~ 292 years: ps shows year ~2318


class OllamaHTTPError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status, self.message = status, message


def normalize(name: str) -> str:
    """'mistral' -> 'mistral:latest'; a name with a tag is kept as is."""
    name = (name or "").strip()
    return name if ":" in name.rsplit("/", 1)[-1] else name + ":latest"


def parse_keep_alive(value, default: float = 300.0) -> float:
    """Ollama's api.Duration: number = seconds (<0 forever), string = Go duration. inf = forever."""
    if value is None:
        return default
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return math.inf if value < 0 else float(value)
    m = (
        re.fullmatch(r"([+-]?)((?:\d*\.?\d+(?:ns|us|µs|ms|s|m|h))+|0)", value.strip())
        if isinstance(value, str)
        else None
    )
    if m is None:
        bare = isinstance(value, str) and re.fullmatch(r"[+-]?\d*\.?\d+", value.strip())
        raise ValueError(f'time: {"missing unit in" if bare else "invalid"} duration "{value}"')
    secs = sum(float(n) * _GO_UNITS[u] for n, u in _GO_PART.findall(m[2])) * (-1 if m[1] == "-" else 1)
    return math.inf if secs < 0 else secs


def count_tokens(text: str) -> int:
    """The fake tokenizer behind prompt_eval_count / eval_count: ceil(chars / 4)."""
    return (len(text or "") + 3) // 4


def model_of(body) -> str:
    return normalize(body.get("model") or "")


def num_ctx_of(body, default: int) -> int:
    return int((body.get("options") or {}).get("num_ctx") or default)


def mistral_tokenizer():
    """Mistral's real tokenizer (mistral-common), as a count function; None if not installed."""
    try:
        from mistral_common.tokens.tokenizers.mistral import MistralTokenizer

        raw = MistralTokenizer.v3().instruct_tokenizer.tokenizer
    except Exception:
        return None
    return lambda text: len(raw.encode(text, bos=False, eos=False)) if text else 0


def embedding(model: str, text: str, dim: int = 384) -> list:
    """Deterministic unit-length vector seeded by sha256(model, text)."""
    rng = random.Random(hashlib.sha256(f"{normalize(model)}\0{text}".encode()).digest())
    v = [rng.gauss(0.0, 1.0) for _ in range(dim)]
    n = math.sqrt(sum(x * x for x in v)) or 1.0
    return [x / n for x in v]


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _text(content) -> str:
    if isinstance(content, list):  # OpenAI-style parts, in case a client forwards them
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content or ""


class _Instance:
    def __init__(self, name: str, num_ctx: int, now: float):
        self.name, self.num_ctx, self.loading, self.busy = name, num_ctx, True, 0
        self.last_used, self.expires_at = now, math.inf


class FakeOllama:
    VERSION = "0.12.6"

    def __init__(self, max_loaded=3, load_delay=0.05, models=None, clock=time.time, *, host="127.0.0.1",
                 port=0, default_keep_alive=300.0, default_num_ctx=4096, reply_fn=None, embed_dim=384,
                 tokenizer=None, prompt_counter=None):
        self.max_loaded, self.load_delay, self.clock = max_loaded, load_delay, clock
        self.ps_delay = 0.0  # seconds /api/ps takes to answer (after taking its snapshot)
        self.tokens_per_s: float | None = None  # answer at this pace, a word per chunk (a slow board's model)
        self.host, self.port, self.embed_dim = host, port, embed_dim
        self.default_keep_alive, self.default_num_ctx = default_keep_alive, default_num_ctx
        self.reply_fn = reply_fn  # reply_fn(model, messages) -> reply | None (None = default reply)
        # tokenizer(text) -> int behind prompt_eval_count / eval_count (default: ceil(chars / 4)).
        self.count = tokenizer or count_tokens
        # prompt_counter(model, messages, tools) -> int behind prompt_eval_count, as the model's own chat
        # template and tokenizer count it (default: the tokenizer over the messages' text).
        self.prompt_counter = prompt_counter
        self.truncated: list = []  # (model, prompt tokens, num_ctx) of every prompt cut to fit, as Ollama does
        models = DEFAULT_MODELS if models is None else models  # names, or {name: metadata tuple}
        models = models if isinstance(models, dict) else dict.fromkeys(models)
        self.catalog = {normalize(n): tuple(m or DEFAULT_MODELS.get(n) or _GENERIC) for n, m in models.items()}
        self._cond = threading.Condition()
        self._resident: dict = {}  # name -> _Instance, including one mid-load
        self._loading = None  # name of the model being loaded (loads are serialised)
        self._scripts: dict = {}
        self.events: list = []  # {"t", "kind", "model", "num_ctx"}
        self.requests: list = []  # every POST body, plus "_path"
        self.http_log: list = []  # (method, path) of every HTTP request
        self.unexpected_paths: list = []  # "METHOD /path" we do not serve
        self.peak_resident = 0
        self._httpd = self._thread = None
        self._conns: set = set()
        self._routes = {("POST", "/api/chat"): lambda h, b: self._complete(h, b, chat=True),
                        ("POST", "/api/generate"): lambda h, b: self._complete(h, b, chat=False),
                        ("POST", "/api/embed"): self._embed, ("POST", "/api/embeddings"): self._embed,
                        ("POST", "/api/show"): self._show, ("GET", "/api/ps"): self._ps,
                        ("GET", "/api/tags"): self._tags, ("GET", "/api/version"): self._version,
                        ("POST", "/v1/chat/completions"): self._openai_chat}

    # ----------------------------------------------------------------- lifecycle
    def start(self) -> "FakeOllama":
        self._httpd = ThreadingHTTPServer((self.host, self.port), _Handler)
        self._httpd.daemon_threads, self._httpd.fake = True, self
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=f"fake-ollama-{self.port}", daemon=True)
        self._thread.start()
        return self

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def stop(self) -> None:
        if self._httpd is None:
            return
        self._httpd.shutdown()
        for conn in list(self._conns):  # drop keep-alive connections so clients see a dead server
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        self._httpd.server_close()
        self._thread.join(5)
        self._httpd = None

    def __enter__(self):
        return self if self._httpd else self.start()

    def __exit__(self, *exc):
        self.stop()

    # ------------------------------------------------------ scripting & observing
    def script(self, model: str, replies) -> None:
        """Queue replies: str | {"tool_calls": [{"name", "arguments"}]} | {"content", "delay"} |
        {"error": (status, message)}.  Empty queue -> reply_fn -> default_reply."""
        with self._cond:
            self._scripts.setdefault(normalize(model), deque()).extend(
                [replies] if isinstance(replies, (str, dict)) else replies)

    @staticmethod
    def default_reply(model: str, messages: list) -> str:
        user = [m for m in messages if m.get("role") == "user"]
        text = _text(user[-1].get("content")).strip() if user else ""
        return f"- Summary of: {text.splitlines()[0][:80] if text else ''}\n- Model: {model}"

    def load_count(self, model=None) -> int:
        """Loads + reloads, overall or of one model."""
        name = normalize(model) if model else None
        return sum(e["kind"] in ("load", "reload") and name in (None, e["model"]) for e in list(self.events))

    def resident(self) -> list:
        with self._cond:
            self._expire_locked()
            return [i.name for i in self._resident.values() if not i.loading]

    def last_request(self, path: str = "/api/chat"):
        """The most recent POST body sent to `path` (None if none)."""
        return next((r for r in reversed(list(self.requests)) if r["_path"] == path), None)

    # ----------------------------------------------------------------- residency
    def _event(self, kind, model, num_ctx):  # caller holds self._cond
        self.events.append({"t": self.clock(), "kind": kind, "model": model, "num_ctx": num_ctx})

    def _expire_locked(self):  # lazy expiry: no timer thread, honours the injected clock
        now = self.clock()
        for inst in list(self._resident.values()):
            if not inst.loading and not inst.busy and now >= inst.expires_at:
                del self._resident[inst.name]
                self._event("expire", inst.name, inst.num_ctx)

    def _pick_victim_locked(self):
        # Policy: only idle instances (no request in flight) are evictable - Ollama waits otherwise;
        # among them the SOONEST expires_at (keep_alive forever = last), ties -> least recently used.
        # (Ollama's findRunnerToUnload sorts idle runners by keep_alive duration, then model path;
        # for equal keep_alive, soonest expiry == least recently used.)
        idle = [i for i in self._resident.values() if not i.loading and not i.busy]
        return min(idle, key=lambda i: (i.expires_at, i.last_used), default=None)

    def _acquire(self, model: str, num_ctx: int):
        """Block until `model` is resident with `num_ctx`; mark it busy. -> (instance, load_ns)."""
        t0, waited = time.perf_counter(), False
        with self._cond:
            while True:
                self._expire_locked()
                inst = self._resident.get(model)
                if inst is not None and not inst.loading and inst.num_ctx == num_ctx:
                    inst.busy += 1
                    return inst, (int((time.perf_counter() - t0) * 1e9) if waited else 100_000)
                blocked = (inst is not None and (inst.loading or inst.busy)) or self._loading is not None
                victim = None
                if not blocked and inst is None and len(self._resident) >= self.max_loaded:
                    victim = self._pick_victim_locked()
                    blocked = victim is None
                if blocked:  # share an in-flight load / wait for the loader / wait for an idle slot
                    waited = True
                    self._cond.wait(0.05)
                    continue
                if victim is not None:
                    del self._resident[victim.name]
                    self._event("evict", victim.name, victim.num_ctx)
                kind = "load" if inst is None else "reload"  # reload: load options (num_ctx) changed
                inst = self._resident[model] = _Instance(model, num_ctx, self.clock())
                self._loading = model
                self.peak_resident = max(self.peak_resident, len(self._resident))
                self._event(kind, model, num_ctx)
                break
        try:
            time.sleep(self.load_delay)
        finally:
            with self._cond:
                inst.loading, self._loading = False, None
                inst.busy += 1
                self._cond.notify_all()
        return inst, int((time.perf_counter() - t0) * 1e9)

    def _release(self, inst: _Instance, keep_alive: float):
        with self._cond:
            inst.busy -= 1
            inst.last_used = now = self.clock()
            inst.expires_at = now + keep_alive
            if keep_alive == 0 and not inst.busy and self._resident.get(inst.name) is inst:
                del self._resident[inst.name]
                self._event("unload", inst.name, inst.num_ctx)
            self._cond.notify_all()

    def _unload(self, model: str):
        with self._cond:
            inst = self._resident.get(model)
            if inst is not None and not inst.loading:
                if inst.busy:
                    inst.expires_at = self.clock()  # goes when its last request finishes
                else:
                    del self._resident[model]
                    self._event("unload", model, inst.num_ctx)
            self._cond.notify_all()

    # ------------------------------------------------------------------- routing
    def _dispatch(self, h, method: str):
        path = h.path.split("?", 1)[0]
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length) if length else b""
        with self._cond:
            self.http_log.append((method, path))
        route = self._routes.get((method, path))
        try:
            if route is None:
                if method in ("GET", "HEAD") and path == "/":
                    return self._send(h, 200, b"Ollama is running", "text/plain; charset=utf-8")
                with self._cond:
                    self.unexpected_paths.append(f"{method} {path}")
                return self._send(h, 404, b"404 page not found", "text/plain")
            try:
                body = json.loads(raw) if raw.strip() else {}
            except ValueError as exc:
                raise OllamaHTTPError(400, f"invalid JSON body: {exc}") from None
            if method == "POST":
                with self._cond:
                    self.requests.append({"_path": path, **body})
            route(h, body)
        except OllamaHTTPError as exc:
            self._send_json(h, exc.status, {"error": exc.message})
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _send(self, h, status, data: bytes, ctype: str):
        h.send_response(status)
        h.send_header("Content-Type", ctype)
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        if h.command != "HEAD":
            h.wfile.write(data)

    def _send_json(self, h, status, obj):
        self._send(h, status, json.dumps(obj).encode(), "application/json; charset=utf-8")

    def _model(self, body, *, show=False) -> str:
        raw = body.get("model") or body.get("name") or ""
        if normalize(raw) not in self.catalog:  # Ollama's exact wording (routes.go)
            raise OllamaHTTPError(404, f"model '{raw}' not found" if show
                                  else f'model "{raw}" not found, try pulling it first')
        return normalize(raw)

    def _params(self, body, model):
        try:
            ka = parse_keep_alive(body.get("keep_alive"), self.default_keep_alive)
        except ValueError as exc:
            raise OllamaHTTPError(400, str(exc)) from None
        num_ctx = int((body.get("options") or {}).get("num_ctx") or self.default_num_ctx)
        with self._cond:
            self._event("request", model, num_ctx)
        return ka, num_ctx

    # ----------------------------------------------------------------- endpoints
    def _complete(self, h, body, chat: bool):
        t0 = time.perf_counter()
        model, raw = self._model(body), body.get("model")
        ka, num_ctx = self._params(body, model)
        if chat:
            messages = list(body.get("messages") or [])
        else:
            messages = [{"role": "system", "content": body["system"]}] if body.get("system") else []
            messages += [{"role": "user", "content": body["prompt"]}] if body.get("prompt") else []
        base = {"model": raw, "created_at": _iso(self.clock())}
        empty = {"message": {"role": "assistant", "content": ""}} if chat else {"response": ""}
        if not (messages if chat else body.get("prompt")):  # a load / unload request
            if ka == 0:
                self._unload(model)
                return self._send_json(h, 200, {**base, **empty, "done": True, "done_reason": "unload"})
            inst, load_ns = self._acquire(model, num_ctx)
            self._release(inst, ka)
            return self._send_json(h, 200, {**base, **empty, "done": True, "done_reason": "load", "load_duration":
                                            load_ns, "total_duration": int((time.perf_counter() - t0) * 1e9)})
        if "completion" not in self.catalog[model][5]:
            raise OllamaHTTPError(400, f'"{raw}" does not support {"chat" if chat else "generate"}')
        reply = self._next_reply(model, messages)
        if "error" in reply:  # scripted failure: answered before any load, residency unchanged
            raise OllamaHTTPError(int(reply["error"][0]), str(reply["error"][1]))
        inst, load_ns = self._acquire(model, num_ctx)
        try:
            self._write_reply(h, body, base, chat, messages, reply, load_ns, t0)
        finally:
            self._release(inst, ka)

    def _next_reply(self, model, messages) -> dict:
        with self._cond:
            queue = self._scripts.get(model)
            reply = queue.popleft() if queue else None
        if reply is None and self.reply_fn is not None:
            reply = self.reply_fn(model, messages)
        if reply is None:
            reply = self.default_reply(model, messages)
        return {"content": reply} if isinstance(reply, str) else dict(reply)

    def _write_reply(self, h, body, base, chat, messages, reply, load_ns, t0):
        content, delay = reply.get("content") or "", float(reply.get("delay") or 0)
        calls = [c if "function" in c else {"function": {"name": c["name"], "arguments": c.get("arguments") or {}}}
                 for c in reply.get("tool_calls") or []]
        if calls and not (chat and body.get("tools")):  # no tools offered: the model "says" the call
            content, calls = content or json.dumps([c["function"] for c in calls]), []
        p_tok = self._prompt_tokens(model_of(body), messages, body.get("tools"), num_ctx_of(body, self.default_num_ctx))
        content, done_reason = self._limit(content, (body.get("options") or {}).get("num_predict"), reply)
        e_tok = self.count(content + (json.dumps(calls) if calls else ""))
        if self.tokens_per_s and "delay" not in reply:
            delay = e_tok / self.tokens_per_s
        stats = {"load_duration": load_ns, "prompt_eval_count": p_tok, "prompt_eval_duration": p_tok * 100_000,
                 "eval_count": e_tok, "eval_duration": e_tok * 20_000_000 + int(delay * 1e9)}

        def piece(text, tool_calls=None):
            msg = {"role": "assistant", "content": text, **({"tool_calls": tool_calls} if tool_calls else {})}
            return {"message": msg} if chat else {"response": text}

        def final(text, tool_calls=None):
            total = max(int((time.perf_counter() - t0) * 1e9),
                        load_ns + stats["prompt_eval_duration"] + stats["eval_duration"])
            return {**base, **piece(text, tool_calls), "done": True, "done_reason": done_reason,
                    "total_duration": total, **stats}

        if body.get("stream", True) is False:
            time.sleep(delay)
            return self._send_json(h, 200, final(content, calls))
        h.send_response(200)
        h.send_header("Content-Type", "application/x-ndjson")
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()

        def emit(obj):
            data = (json.dumps(obj) + "\n").encode()
            h.wfile.write(b"%X\r\n%s\r\n" % (len(data), data))
            h.wfile.flush()

        words = re.split(r"(?<=\s)(?=\S)", content) if content else []  # "".join(words) == content
        step = 1 if self.tokens_per_s else max(1, math.ceil(len(words) / 32))
        chunks = ["".join(words[i:i + step]) for i in range(0, len(words), step)]
        for chunk in chunks:
            time.sleep(delay / len(chunks))
            emit({**base, **piece(chunk), "done": False})
        if calls:
            time.sleep(0 if chunks else delay)
            emit({**base, **piece("", calls), "done": False})
        emit(final(""))
        h.wfile.write(b"0\r\n\r\n")
        h.wfile.flush()

    def _prompt_tokens(self, model, messages, tools, num_ctx) -> int:
        """What the prompt counts; one over the window is cut to fit it, as Ollama does (and says so
        only in prompt_eval_count)."""
        text = "\n".join(_text(m.get("content")) for m in messages) + (json.dumps(tools) if tools else "")
        tokens = self.count(text) if self.prompt_counter is None else self.prompt_counter(model, messages, tools)
        if tokens > num_ctx:
            with self._cond:
                self.truncated.append((model, tokens, num_ctx))
            return num_ctx
        return tokens

    def _limit(self, content: str, num_predict, reply: dict) -> tuple:
        """The reply cut at num_predict tokens ("length"), or as scripted (``done_reason``)."""
        if reply.get("done_reason"):
            return content, reply["done_reason"]
        if not num_predict or int(num_predict) < 0 or self.count(content) <= int(num_predict):
            return content, "stop"
        lo, hi = 0, len(content)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            lo, hi = (mid, hi) if self.count(content[:mid]) <= int(num_predict) else (lo, mid - 1)
        return content[:lo], "length"

    def _openai_chat(self, h, body):
        """Ollama's OpenAI-compatible endpoint (what an `openai/…` deployment talks to): same models,
        same residency, OpenAI's response shape; streaming as server-sent events."""
        model = self._model(body)
        messages = list(body.get("messages") or [])
        reply = self._next_reply(model, messages)
        if "error" in reply:
            raise OllamaHTTPError(int(reply["error"][0]), str(reply["error"][1]))
        inst, _ = self._acquire(model, self.default_num_ctx)  # the OpenAI API has no num_ctx
        try:
            p_tok = self._prompt_tokens(model, messages, body.get("tools"), self.default_num_ctx)
            content, finish = self._limit(reply.get("content") or "", body.get("max_tokens"), reply)
            e_tok = self.count(content)
            base = {"id": "chatcmpl-fake", "created": int(self.clock()), "model": body.get("model")}
            if not body.get("stream"):
                return self._send_json(h, 200, {**base, "object": "chat.completion", "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish}],
                    "usage": {"prompt_tokens": p_tok, "completion_tokens": e_tok, "total_tokens": p_tok + e_tok}})
            h.send_response(200)
            h.send_header("Content-Type", "text/event-stream")
            h.end_headers()
            for piece in [content[i:i + 16] for i in range(0, len(content), 16)] or [""]:
                chunk = {**base, "object": "chat.completion.chunk",
                         "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}
                h.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            end = {
                **base,
                "object": "chat.completion.chunk",
                "choices": [{"index": 0, "delta": {}, "finish_reason": finish}],
                "usage": {"prompt_tokens": p_tok, "completion_tokens": e_tok, "total_tokens": p_tok + e_tok},
            }
            h.wfile.write(f"data: {json.dumps(end)}\n\ndata: [DONE]\n\n".encode())
            h.wfile.flush()
            h.close_connection = True
        finally:
            self._release(inst, self.default_keep_alive)

    def _embed(self, h, body):
        t0 = time.perf_counter()
        model = self._model(body)
        ka, num_ctx = self._params(body, model)
        legacy = "input" not in body  # /api/embeddings {"prompt": str} -> {"embedding": [...]}
        inp = body.get("prompt", "") if legacy else body.get("input")
        texts = [inp] if isinstance(inp, str) else list(inp or [])
        inst, load_ns = self._acquire(model, num_ctx)
        self._release(inst, ka)
        vecs = [embedding(model, t, self.embed_dim) for t in texts]
        if legacy:
            return self._send_json(h, 200, {"embedding": vecs[0] if vecs else []})
        self._send_json(h, 200, {"model": body.get("model"), "embeddings": vecs, "load_duration": load_ns,
                                 "total_duration": int((time.perf_counter() - t0) * 1e9),
                                 "prompt_eval_count": sum(count_tokens(t) for t in texts)})

    def _details(self, name):
        family, params, quant = self.catalog[name][:3]
        return {"parent_model": "", "format": "gguf", "family": family, "families": [family],
                "parameter_size": params, "quantization_level": quant}

    def _show(self, h, body):
        name = self._model(body, show=True)
        family, _, _, _, ctx, caps = self.catalog[name]
        tools = "{{- if .Tools }}[AVAILABLE_TOOLS] {{ .Tools }}[/AVAILABLE_TOOLS]{{ end }}" if "tools" in caps else ""
        self._send_json(h, 200, {
            "modelfile": f"# Modelfile generated by \"ollama show\"\nFROM {name}\n", "license": "",
            "parameters": 'stop                           "</s>"', "template": tools + "[INST] {{ .Prompt }} [/INST]",
            "details": self._details(name), "capabilities": list(caps), "modified_at": _iso(1_735_689_600),
            "model_info": {"general.architecture": family, f"{family}.context_length": ctx}})

    def _ps(self, h, body):
        with self._cond:
            self._expire_locked()
            now, out = self.clock(), []
            for i in (i for i in self._resident.values() if not i.loading):
                size = self.catalog[i.name][3] + i.num_ctx * 64 * 1024  # weights + KV cache
                forever = (datetime.fromtimestamp(now, timezone.utc) + timedelta(days=FOREVER_DAYS)).isoformat()
                out.append({"name": i.name, "model": i.name, "size": size, "size_vram": size,
                            "digest": hashlib.sha256(i.name.encode()).hexdigest(), "details": self._details(i.name),
                            "expires_at": forever if math.isinf(i.expires_at) else _iso(i.expires_at),
                            "context_length": i.num_ctx})
        time.sleep(self.ps_delay)  # a busy host answers late: what it says may be out of date
        self._send_json(h, 200, {"models": out})

    def _tags(self, h, body):
        self._send_json(h, 200, {"models": [
            {"name": n, "model": n, "modified_at": _iso(1_735_689_600), "size": meta[3],
             "digest": hashlib.sha256(n.encode()).hexdigest(), "details": self._details(n)}
            for n, meta in self.catalog.items()]})

    def _version(self, h, body):
        self._send_json(h, 200, {"version": self.VERSION})


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive + chunked NDJSON streaming, like Ollama
    server_version = "FakeOllama"
    timeout = 120  # idle keep-alive connections give up eventually

    def setup(self):
        super().setup()
        self.server.fake._conns.add(self.connection)

    def finish(self):
        self.server.fake._conns.discard(self.connection)
        with contextlib.suppress(OSError):
            super().finish()

    def log_message(self, *args):
        pass

    def _any(self):
        self.server.fake._dispatch(self, self.command)

    do_GET = do_POST = do_HEAD = do_DELETE = _any


def demo_reply(model: str, messages: list) -> str:
    """For `make demo`: a plausible answer that cites the notes it was given, so the whole path
    (context → prompt → note with provenance and links) shows without a real model."""
    user = _text(next((m.get("content") for m in reversed(messages) if m.get("role") == "user"), ""))
    sources = re.findall(r"^## (\[\[[^\]]+\]\])", user, re.M)
    bullets = [line.strip("- ").strip() for line in user.splitlines()
               if line.startswith("- ") and "`" not in line and len(line) < 120][:3]
    lines = ["**Focus today**"]
    lines += [f"- {b} — {sources[0] if sources else ''}".rstrip(" —") for b in bullets] or ["- (no notes yet)"]
    lines += ["", "**Drift**", "- Nothing to compare with yet: this is the first day routine has run.", "",
              f"(A stand-in model wrote this for the demo; with Ollama, {model} would.)"]
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description="Fake Ollama server for tests and demos")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=11434)
    ap.add_argument("--load-delay", type=float, default=0.05)
    ap.add_argument("--max-loaded", type=int, default=3)
    ap.add_argument("--demo", action="store_true", help="answer with plausible notes that cite their sources")
    args = ap.parse_args(argv)
    srv = FakeOllama(max_loaded=args.max_loaded, load_delay=args.load_delay, host=args.host, port=args.port,
                     reply_fn=demo_reply if args.demo else None)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    srv.start()
    print(srv.url, flush=True)
    try:
        while not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        srv.stop()


if __name__ == "__main__":
    main()
