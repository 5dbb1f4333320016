"""Talking to an Ollama server's own API (chat, load, unload, ps, tags, embed) through the light
`ollama` client (httpx and pydantic; LiteLLM is never imported for an Ollama deployment).

The chat (``chat``) streams, carries native tool calls and reports the server's own token counts
(``prompt_eval_count``, for calibration); explicit loads give ``load_duration`` and name a missing
model as such; unloads are ``keep_alive: 0``; residency is ``/api/ps``.
"""

from __future__ import annotations

import json
import math
import uuid
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Callable

from routine.errors import Abandoned, EmbeddingModelError, ModelError, ModelMissing, ServerUnreachable
from routine.jsonvalue import JSONObject

if TYPE_CHECKING:
    from ollama import Client


@dataclass(frozen=True)
class Resident:
    name: str
    size: int
    expires_at: str | None
    context_length: int | None


def unreachable(host: str, detail: str = "") -> ServerUnreachable:
    return ServerUnreachable(
        host,
        f"Ollama is not reachable at {host}{f' ({detail})' if detail else ''}.",
        "start it with `ollama serve` (or `systemctl start ollama`), "
        "or set `ollama.host` in routine.yaml / OLLAMA_HOST to where it runs.",
    )


@lru_cache(maxsize=16)
def _client(host: str, timeout: float) -> Client:
    """One client per (host, timeout), kept: each new one builds a TLS context from the CA bundle
    (~50 ms of CPU), which the residency checks would otherwise pay on every call."""
    import ollama

    return ollama.Client(host=host, timeout=timeout)


def _translate(exc: Exception, host: str, model: str | None) -> Exception:
    import httpx
    import ollama

    if isinstance(exc, ollama.ResponseError):
        if exc.status_code == 404 and model:
            return ModelMissing(model, host)
        return unreachable(host, f"HTTP {exc.status_code}: {exc.error}")
    if isinstance(exc, (httpx.TransportError, ConnectionError)):
        return unreachable(host, type(exc).__name__)
    return exc


def load(name: str, host: str, options: JSONObject, keep_alive: str | int, timeout: float) -> int:
    """Load (or touch) the model with its pinned options; returns Ollama's load_duration in ms.

    The options are exactly those of every chat request for the alias (``ModelAlias.
    request_options``), so this never causes a reload of a model that is already resident.
    """
    try:
        response = _client(host, timeout).generate(model=name, prompt="", keep_alive=keep_alive, options=options)
    except Exception as exc:  # translated to a domain error with the fix
        raise _translate(exc, host, name) from None
    return int((response.get("load_duration") or 0) / 1e6)


def unload(model: str, host: str, timeout: float = 30) -> None:
    try:
        _client(host, timeout).generate(model=model, prompt="", keep_alive=0)
    except Exception as exc:
        raise _translate(exc, host, model) from None


def resident(host: str, timeout: float = 5) -> list[Resident]:
    try:
        response = _client(host, timeout).ps()
    except Exception as exc:
        raise _translate(exc, host, None) from None
    out = []
    for m in response.get("models") or []:
        expires = m.get("expires_at")
        out.append(Resident(name=m.get("model") or m.get("name"), size=m.get("size") or 0,
                            expires_at=str(expires) if expires else None,
                            context_length=m.get("context_length")))
    return out


def pulled(host: str, timeout: float = 5) -> set[str]:
    return set(pulled_sizes(host, timeout))


def pulled_sizes(host: str, timeout: float = 5) -> dict[str, int]:
    """Every model pulled on the server (also without its ":latest"), with its size in bytes."""
    try:
        response = _client(host, timeout).list()
    except Exception as exc:
        raise _translate(exc, host, None) from None
    sizes = {}
    for m in response.get("models") or []:
        name = m.get("model") or m.get("name")
        sizes[name] = int(m.get("size") or 0)
        if name.endswith(":latest"):
            sizes[name[: -len(":latest")]] = sizes[name]
    return sizes


def embed(host: str, model: str, texts: list[str], options: JSONObject, keep_alive: str | int,
          timeout: float) -> list[list[float]]:
    """Ollama's /api/embed, its failures as domain errors with the fix."""
    import httpx
    import ollama

    try:
        reply = _client(host, timeout).embed(model=model, input=texts, options=options, keep_alive=keep_alive)
        return [list(vector) for vector in reply.embeddings]
    except (httpx.ConnectError, httpx.TimeoutException, ConnectionError) as exc:
        raise unreachable(host, str(exc)) from None
    except ollama.ResponseError as exc:
        if exc.status_code == 404:
            raise ModelMissing(model, host) from None
        raise EmbeddingModelError(
            f"Ollama could not embed with {model}: {exc.error}.",
            f"check that {model} is an embedding model (`ollama show {model}`).",
        ) from None


@dataclass
class ChatReply:
    """One answer, whatever client fetched it (``routine.models.client`` reads only this)."""

    text: str
    tool_calls: list[JSONObject] = field(default_factory=list)  # {"id", "name", "arguments": JSON text}
    tokens_in: int | None = None  # the server's own count of the prompt (Ollama: prompt_eval_count)
    tokens_out: int | None = None
    finish_reason: str | None = None  # stop | length | tool_calls


def chat(host: str, model: str, messages: list[dict[str, Any]], options: JSONObject, keep_alive: str | int,
         timeout: float, tools: list[JSONObject] | None = None,
         on_token: Callable[[str], None] | None = None) -> ChatReply:
    """Ollama's /api/chat: the messages as routine keeps them (OpenAI's shape), the alias's pinned
    options (num_ctx, num_predict, …) and keep_alive; streamed to ``on_token`` when given."""
    client = _client(host, float(math.ceil(timeout)))
    try:
        if on_token is None:
            response = client.chat(model=model, messages=_ollama_messages(messages), tools=tools or None,
                                   stream=False, options=options, keep_alive=keep_alive)
            return _reply(response.message.content or "", list(response.message.tool_calls or []), response)
        text: list[str] = []
        calls: list[Any] = []  # the ollama client's ToolCall objects
        last: Any = None
        for chunk in client.chat(model=model, messages=_ollama_messages(messages), tools=tools or None,
                                 stream=True, options=options, keep_alive=keep_alive):
            last = chunk
            calls.extend(chunk.message.tool_calls or [])
            if chunk.message.content:
                text.append(chunk.message.content)
                on_token(chunk.message.content)
        return _reply("".join(text), calls, last)
    except Abandoned:  # the step was called off (shutdown, the person's Ctrl-C): no retry
        raise
    except Exception as exc:  # the client's and httpx's errors, as domain errors with the fix
        raise _chat_error(exc, host, model, timeout) from None


def _reply(text: str, calls: list[Any], final: Any) -> ChatReply:
    tool_calls: list[JSONObject] = [
        {"id": f"call_{uuid.uuid4().hex[:24]}", "name": c.function.name,
         "arguments": json.dumps(dict(c.function.arguments or {}), ensure_ascii=False)}
        for c in calls if getattr(c, "function", None) and c.function.name]
    done = getattr(final, "done_reason", None) or "stop"
    return ChatReply(text=text, tool_calls=tool_calls, tokens_in=getattr(final, "prompt_eval_count", None),
                     tokens_out=getattr(final, "eval_count", None),
                     finish_reason="tool_calls" if tool_calls else done)


def _ollama_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI-shaped messages as Ollama's /api/chat takes them: a tool call's arguments as an
    object (not JSON text), a tool result named by ``tool_name``, content as text."""
    out = []
    for m in messages:
        message: dict[str, Any] = {"role": m.get("role"), "content": _content_text(m.get("content"))}
        if m.get("tool_calls"):
            message["tool_calls"] = [{"function": {"name": (c.get("function") or {}).get("name") or "",
                                                   "arguments": _arguments((c.get("function") or {}).get("arguments"))}}
                                     for c in m["tool_calls"]]
        if m.get("role") == "tool" and m.get("name"):
            message["tool_name"] = m["name"]
        out.append(message)
    return out


def _content_text(content: object) -> str:
    if isinstance(content, list):  # OpenAI's content parts: only text is sent here
        return "".join(str(p.get("text") or "") for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def _arguments(raw: object) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    try:
        parsed = json.loads(str(raw or "{}"))
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _chat_error(exc: Exception, host: str, model: str, timeout: float) -> ModelError:
    import httpx
    import ollama

    if isinstance(exc, ollama.ResponseError):
        if exc.status_code == 404 or "not found" in str(exc.error).lower():
            return ModelMissing(model, host)
        return ModelError(f"The model call to {model} failed: HTTP {exc.status_code}: {str(exc.error)[:300]}",
                          "see `routine runs show` for the full error; check `routine doctor`.")
    if isinstance(exc, httpx.TimeoutException):
        return ModelError(f"The model {model} did not answer within {math.ceil(timeout)} s.",
                          "raise `request_timeout` in routine.yaml, or use a smaller model.")
    if isinstance(exc, (httpx.TransportError, ConnectionError)):
        return unreachable(host, type(exc).__name__)
    if isinstance(exc, ModelError):
        return exc
    said = str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__
    return ModelError(f"The model call to {model} failed: {said}",
                      "see `routine runs show` for the full error; check `routine doctor`.")

