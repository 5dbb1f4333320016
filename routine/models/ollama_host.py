"""Talking to an Ollama server's own API (load, unload, ps, tags, show) through the `ollama` client.

The chat itself goes through LiteLLM (``routine.models.client``); this module handles what
LiteLLM does not expose: explicit loads (so ``load_duration`` is known and a missing model is
reported as such), unloads (``keep_alive: 0``) and residency (``/api/ps``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from routine.jsonvalue import JSONObject
from routine.errors import EmbeddingModelError, ModelMissing, ServerUnreachable

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
