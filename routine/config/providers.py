"""The kinds of model server an alias can run on, declared once, with what differs by kind.

An alias names its model as LiteLLM does (``ollama_chat/mistral:7b…``, ``openai/mistral-7b``);
the prefix says the provider. Everything downstream asks the provider's properties, never the
prefix: whether routine manages the model's residency (loads, unloads, leases through
``routine.models.manager``, options pinned on every request), and the model's name as its
server reports it. How routine talks to each one lives in ``routine/models/providers.py``.
A new provider is one member here, with its properties, and its adapter there.
"""

from __future__ import annotations

from enum import Enum


class Provider(str, Enum):
    OLLAMA = "ollama"                        # residency managed by routine; its own API beside LiteLLM
    OPENAI_COMPATIBLE = "openai-compatible"  # any other LiteLLM prefix: llama.cpp, vLLM, LM Studio servers

    @classmethod
    def of(cls, model: str) -> Provider:
        """The provider of a LiteLLM model string."""
        prefix = model.split("/", 1)[0] if "/" in model else ""
        return next((p for p, prefixes in _PREFIXES.items() if prefix in prefixes), cls.OPENAI_COMPATIBLE)

    @property
    def manages_residency(self) -> bool:
        """Routine loads and unloads its models (the model manager leases them), pins their load
        options on every request, and can ask the server what is pulled and resident."""
        return self is Provider.OLLAMA

    def served_name(self, model: str) -> str:
        """The model's name as its server reports it (Ollama: without the prefix, with ":latest"
        when no tag is given, as `/api/ps` says "mistral:latest" for "mistral")."""
        if self is not Provider.OLLAMA:
            return model
        name = model.split("/", 1)[1]
        return name if ":" in name.rsplit("/", 1)[-1] else name + ":latest"


_PREFIXES: dict[Provider, tuple[str, ...]] = {
    Provider.OLLAMA: ("ollama_chat", "ollama"),
}


# memory.embedding_model: ollama:MODEL (the key's value as the person writes it) names an
# embedding model a managed server serves, made under the daemon's model manager.
_SERVED_EMBEDDING_PREFIX = "ollama:"
_SERVED_EMBEDDING_PROVIDER = Provider.OLLAMA


def served_embedding(spec: str) -> str | None:
    """The model's name when ``memory.embedding_model`` names one a model server serves, else None
    (a sentence-transformers model, made in the process that searches)."""
    return spec.removeprefix(_SERVED_EMBEDDING_PREFIX) if spec.startswith(_SERVED_EMBEDDING_PREFIX) else None


def served_embedding_model(name: str) -> str:
    """The LiteLLM model string of a served embedding model (for its lease of the model manager)."""
    return f"{_PREFIXES[_SERVED_EMBEDDING_PROVIDER][-1]}/{name}"
