"""How routine talks to each kind of model server (``routine.config.providers.Provider``): one
adapter per provider, registered here. The chat itself goes through LiteLLM for all of them;
an adapter adds what its server needs on each request and names its failures.

- Ollama: the alias's load options (``num_ctx``, ``options``) and ``keep_alive`` pinned on every
  request, so a resident model is never reloaded; its own API (``ollama_host``) loads, unloads
  and lists what is pulled and resident, under the model manager.
- OpenAI-compatible servers: a key from the alias's ``api_key_env`` (most local servers check none).
"""

from __future__ import annotations

import os
from typing import Protocol

from routine.config.model import Deployment, ModelAlias
from routine.config.providers import Provider
from routine.errors import ModelError, ModelMissing


class Adapter(Protocol):
    def request_options(self, alias: ModelAlias, dep: Deployment, keep_alive: str | int) -> dict: ...
    def missing(self, dep: Deployment, text: str) -> ModelError | None: ...


class Ollama:
    def request_options(self, alias: ModelAlias, dep: Deployment, keep_alive: str | int) -> dict:
        # Identical on every request, so Ollama never reloads the model (see ModelAlias).
        return {"num_ctx": alias.num_ctx, "keep_alive": keep_alive, **dict(alias.options)}

    def missing(self, dep: Deployment, text: str) -> ModelError | None:
        return ModelMissing(dep.served_name, dep.api_base) if "not found" in text.lower() else None


class OpenAICompatible:
    def request_options(self, alias: ModelAlias, dep: Deployment, keep_alive: str | int) -> dict:
        # A local OpenAI-compatible server rarely checks keys, but the client insists on one.
        return {"api_key": os.environ.get(dep.api_key_env, "") if dep.api_key_env else "no-key-needed"}

    def missing(self, dep: Deployment, text: str) -> ModelError | None:
        return None


ADAPTERS: dict[Provider, Adapter] = {Provider.OLLAMA: Ollama(), Provider.OPENAI_COMPATIBLE: OpenAICompatible()}
if set(ADAPTERS) != set(Provider):
    raise TypeError(f"providers without an adapter: {set(Provider) - set(ADAPTERS)}")


def adapter(dep: Deployment) -> Adapter:
    return ADAPTERS[dep.provider]
