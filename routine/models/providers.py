"""How routine talks to each kind of model server (``routine.config.providers.Provider``): one
adapter per provider, registered here. The chat itself goes through LiteLLM for all of them;
an adapter adds what its server needs on each request and names its failures.

- Ollama: the alias's load options (``num_ctx``, ``options``) and ``keep_alive`` pinned on every
  request, so a resident model is never reloaded; its own API (``ollama_host``) loads, unloads
  and lists what is pulled and resident, under the model manager.
- OpenAI-compatible servers: a key from the alias's ``api_key_env`` (most local servers check none).

A server whose residency routine manages (``Provider.manages_residency``: Ollama) is also asked
what is pulled and resident, and makes ``memory.embedding_model``'s served embeddings, through the
functions at the end; no module outside ``routine.models`` talks to a server's own API.
"""

from __future__ import annotations

import os
from typing import Protocol

from routine.jsonvalue import JSONObject
from routine.config.model import Deployment, ModelAlias
from routine.config.providers import Provider
from routine.errors import ModelError, ModelMissing, ServerUnreachable
from routine.models import ollama_host
from routine.models.ollama_host import Resident


class Adapter(Protocol):
    def request_options(self, alias: ModelAlias, dep: Deployment, keep_alive: str | int) -> JSONObject: ...
    def missing(self, dep: Deployment, text: str) -> ModelError | None: ...
    def unreachable(self, dep: Deployment, detail: str) -> ServerUnreachable: ...


class Ollama:
    def request_options(self, alias: ModelAlias, dep: Deployment, keep_alive: str | int) -> JSONObject:
        # Identical on every request, so Ollama never reloads the model (see ModelAlias).
        return {"num_ctx": alias.num_ctx, "keep_alive": keep_alive, **dict(alias.options)}

    def missing(self, dep: Deployment, text: str) -> ModelError | None:
        return ModelMissing(dep.served_name, dep.api_base) if "not found" in text.lower() else None

    def unreachable(self, dep: Deployment, detail: str) -> ServerUnreachable:
        return ollama_host.unreachable(dep.api_base, detail)


class OpenAICompatible:
    def request_options(self, alias: ModelAlias, dep: Deployment, keep_alive: str | int) -> JSONObject:
        # A local OpenAI-compatible server rarely checks keys, but the client insists on one.
        return {"api_key": os.environ.get(dep.api_key_env, "") if dep.api_key_env else "no-key-needed"}

    def missing(self, dep: Deployment, text: str) -> ModelError | None:
        return None

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
