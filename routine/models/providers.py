"""How routine talks to each kind of model server (``routine.config.providers.Provider``): one
adapter per provider, registered here. An adapter makes the chat call its server needs (``chat``:
the request in, a ``ChatReply`` out) and names its failures.

- Ollama: through the light `ollama` client (``ollama_host.chat``; LiteLLM is never imported), the
  alias's load options (``num_ctx``, ``options``) and ``keep_alive`` pinned on every request, so a
  resident model is never reloaded; its own API (``ollama_host``) loads, unloads and lists what is
  pulled and resident, under the model manager.
- OpenAI-compatible servers: through LiteLLM (``litellm_chat``, imported on the first such call),
  a key from the alias's ``api_key_env`` (most local servers check none).

A server whose residency routine manages (``Provider.manages_residency``: Ollama) is also asked
what is pulled and resident, and makes ``memory.embedding_model``'s served embeddings, through the
functions at the end; no module outside ``routine.models`` talks to a server's own API.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable, Protocol

from routine.config.model import Deployment, ModelAlias
from routine.config.providers import Provider
from routine.errors import Abandoned, ModelError, ServerUnreachable
from routine.jsonvalue import JSONObject
from routine.models import ollama_host
from routine.models.ollama_host import ChatReply, Resident


@dataclass(frozen=True)
class ChatRequest:
    """One chat call as the model client asks it, whatever the server."""

    messages: list[dict[str, Any]]
    tools: list[JSONObject] | None
    on_token: Callable[[str], None] | None
    timeout: float  # seconds, at most request_timeout
    keep_alive: str | int  # the model manager's choice for the alias (Ollama)
    default_host: str  # config.ollama_host


class Adapter(Protocol):
    def request_options(self, alias: ModelAlias, dep: Deployment, keep_alive: str | int) -> JSONObject: ...
    def chat(self, alias: ModelAlias, dep: Deployment, request: ChatRequest) -> ChatReply: ...
    def unreachable(self, dep: Deployment, detail: str) -> ServerUnreachable: ...


class Ollama:
    def request_options(self, alias: ModelAlias, dep: Deployment, keep_alive: str | int) -> JSONObject:
        # Identical on every request, so Ollama never reloads the model (see ModelAlias).
        return {"num_ctx": alias.num_ctx, "keep_alive": keep_alive, **dict(alias.options)}

    def chat(self, alias: ModelAlias, dep: Deployment, request: ChatRequest) -> ChatReply:
        options: JSONObject = {"num_ctx": alias.num_ctx, "num_predict": alias.num_predict, **dict(alias.options)}
        return ollama_host.chat(dep.api_base, dep.served_name, request.messages, options, request.keep_alive,
                                request.timeout, request.tools, request.on_token)

    def unreachable(self, dep: Deployment, detail: str) -> ServerUnreachable:
        return ollama_host.unreachable(dep.api_base, detail)


class OpenAICompatible:
    def request_options(self, alias: ModelAlias, dep: Deployment, keep_alive: str | int) -> JSONObject:
        # A local OpenAI-compatible server rarely checks keys, but the client insists on one.
        return {"api_key": os.environ.get(dep.api_key_env, "") if dep.api_key_env else "no-key-needed"}

    def chat(self, alias: ModelAlias, dep: Deployment, request: ChatRequest) -> ChatReply:
        from routine.models import litellm_chat  # lazy: litellm, only for a deployment that needs it

        # num_retries 0: retries are ours, with backoff and journaled
        kwargs: JSONObject = dict(model=dep.model, messages=request.messages, api_base=dep.api_base,
                                  timeout=request.timeout, num_retries=0, max_tokens=alias.num_predict,
                                  **self.request_options(alias, dep, request.keep_alive))
        try:
            return litellm_chat.chat(request.default_host, kwargs, request.tools, request.on_token)
        except Abandoned:  # the step was called off (shutdown, the person's Ctrl-C): no retry
            raise
        except Exception as exc:  # LiteLLM's many exception classes, as domain errors with the fix
            raise self._translate(exc, dep) from None

    def _translate(self, exc: Exception, dep: Deployment) -> ModelError:
        text, name = str(exc), type(exc).__name__
        if "Connection" in name or "connect" in text.lower():
            return self.unreachable(dep, name)
        if "Timeout" in name:
            return ModelError(f"The model {dep.model} did not answer within {int(getattr(exc, 'timeout', 0) or 0)} s.",
                              "raise `request_timeout` in routine.yaml, or use a smaller model.")
        return ModelError(f"The model call to {dep.model} failed: {text.splitlines()[0][:300] if text else name}",
                          "see `routine runs show` for the full error; check `routine doctor`.")

    def unreachable(self, dep: Deployment, detail: str) -> ServerUnreachable:
        return ServerUnreachable(dep.api_base, f"The model server at {dep.api_base} is not reachable ({detail}).",
                                 f"start the server {dep.model} runs on, or correct the alias's `api_base` in "
                                 "routine.yaml.")


ADAPTERS: dict[Provider, Adapter] = {Provider.OLLAMA: Ollama(), Provider.OPENAI_COMPATIBLE: OpenAICompatible()}
if set(ADAPTERS) != set(Provider):
    raise TypeError(f"providers without an adapter: {set(Provider) - set(ADAPTERS)}")


def adapter(dep: Deployment) -> Adapter:
    return ADAPTERS[dep.provider]


# The API of a server whose residency routine manages (config.managed_hosts). Ollama is the one
# such provider; a second would dispatch here by the host's provider.

def pulled(host: str, timeout: float = 5) -> set[str]:
    """The models pulled on a managed server (also named without ":latest")."""
    return ollama_host.pulled(host, timeout)


def pulled_sizes(host: str, timeout: float = 5) -> dict[str, int]:
    """The models pulled on a managed server, with their sizes in bytes."""
    return ollama_host.pulled_sizes(host, timeout)


def resident(host: str, timeout: float = 5) -> list[Resident]:
    """The models loaded on a managed server now (its own report, other programs' models included)."""
    return ollama_host.resident(host, timeout)


def embed(host: str, model: str, texts: list[str], options: JSONObject, keep_alive: str | int,
          timeout: float) -> list[list[float]]:
    """Embeddings from a model a managed server serves (``memory.embedding_model``)."""
    return ollama_host.embed(host, model, texts, options, keep_alive, timeout)
