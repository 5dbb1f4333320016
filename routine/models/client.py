"""Model calls through LiteLLM, with retries, exponential backoff and the alias's fallbacks.

The only code that imports litellm, and only when a model is really called: `routine --help`
and every listing command stay light.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass, field
from typing import Callable

from routine.config.model import Config, ModelAlias
from routine.errors import ModelError, ModelMissing, OllamaUnreachable
from routine.models import ollama_host

log = logging.getLogger(__name__)


@dataclass
class Completion:
    text: str
    alias: str
    model: str  # the LiteLLM model string that answered
    tokens_in: int | None = None
    tokens_out: int | None = None
    load_duration_ms: int | None = None
    duration_ms: int = 0
    attempts: list[str] = field(default_factory=list)  # what failed before this answer, for the journal


def _litellm(default_host: str):
    # An edge box is often offline: never let litellm fetch its cost map at import.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    # litellm looks up model info with POST /api/show at OLLAMA_API_BASE (not at api_base),
    # falling back to localhost:11434; point it at our Ollama so it never asks a stranger.
    os.environ.setdefault("OLLAMA_API_BASE", default_host)
    import litellm

    litellm.suppress_debug_info = True
    litellm.telemetry = False
    return litellm


class ModelClient:
    def __init__(self, config: Config, sleep: Callable[[float], None] = time.sleep):
        self.config = config
        self.sleep = sleep

    def host_of(self, alias: ModelAlias) -> str:
        return (alias.api_base or self.config.ollama_host).rstrip("/")

    def complete(self, alias_name: str, messages: list[dict], on_token: Callable[[str], None] | None = None) -> Completion:
        """Answer with the alias, else each fallback in order. Raises the first alias's error."""
        chain = [alias_name] + [fb for fb in self.config.models[alias_name].fallbacks if fb != alias_name]
        attempts: list[str] = []
        first_error: Exception | None = None
        for name in chain:
            alias = self.config.models[name]
            try:
                result = self._with_retries(alias, messages, on_token)
            except ModelError as exc:
                attempts.append(f"{name}: {exc.message}")
                first_error = first_error or exc
                log.warning("model %s failed: %s", name, exc.message)
                continue
            result.attempts = attempts
            return result
        assert first_error is not None
        raise first_error

    def _with_retries(self, alias: ModelAlias, messages, on_token) -> Completion:
        delay = self.config.retry_backoff
        for attempt in range(self.config.retries + 1):
            try:
                return self._once(alias, messages, on_token)
            except ModelMissing:
                raise  # no retry can pull a model
            except ModelError as exc:
                if attempt == self.config.retries:
                    raise
                log.info("retrying %s in %.1fs after: %s", alias.name, delay, exc.message)
                self.sleep(delay)
                delay *= 2
        raise AssertionError("unreachable")

    def _once(self, alias: ModelAlias, messages, on_token) -> Completion:
        host = self.host_of(alias)
        started = time.monotonic()
        load_ms = None
        if alias.is_ollama:
            # An explicit load first: gives load_duration, and a clear "not pulled" error.
            load_ms = ollama_host.load(alias, host, self.config.request_timeout)
        litellm = _litellm(self.config.ollama_host)
        kwargs = dict(
            model=alias.model,
            messages=messages,
            api_base=host,
            timeout=self.config.request_timeout,
            num_retries=0,  # retries are ours, with backoff and journaled
            max_tokens=alias.num_predict,
        )
        if alias.is_ollama:
            # Identical on every request, so Ollama never reloads the model (see ModelAlias).
            kwargs.update(num_ctx=alias.num_ctx, keep_alive=alias.keep_alive, **dict(alias.options))
        try:
            if on_token is None:
                response = litellm.completion(stream=False, **kwargs)
            else:
                chunks = []
                for chunk in litellm.completion(stream=True, **kwargs):
                    chunks.append(chunk)
                    piece = chunk.choices[0].delta.content if chunk.choices else None
                    if piece:
                        on_token(piece)
                response = litellm.stream_chunk_builder(chunks, messages=messages)
        except Exception as exc:
            raise _translate_litellm(exc, host, alias) from None
        text = response.choices[0].message.content or ""
        usage = getattr(response, "usage", None)
        return Completion(
            text=text,
            alias=alias.name,
            model=alias.model,
            tokens_in=getattr(usage, "prompt_tokens", None),
            tokens_out=getattr(usage, "completion_tokens", None),
            load_duration_ms=load_ms,
            duration_ms=int((time.monotonic() - started) * 1000),
        )


def _translate_litellm(exc: Exception, host: str, alias: ModelAlias) -> ModelError:
    text = str(exc)
    if "not found" in text.lower() and alias.is_ollama:
        return ModelMissing(alias.ollama_name, host)
    name = type(exc).__name__
    if "Connection" in name or "connect" in text.lower():
        return OllamaUnreachable(host, name)
    if "Timeout" in name:
        return ModelError(f"The model {alias.model} did not answer within {int(_timeout_of(exc))} s.",
                          "raise `request_timeout` in routine.yaml, or use a smaller model.")
    return ModelError(f"The model call to {alias.model} failed: {text.splitlines()[0][:300]}",
                      "see `routine runs show` for the full error; check `routine doctor`.")


def _timeout_of(exc: Exception) -> float:
    return getattr(exc, "timeout", 0) or 0
