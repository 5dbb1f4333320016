"""Model calls through LiteLLM, for the providers that need it (OpenAI-compatible servers).

The only module that imports litellm, and only when such a model is really called: an Ollama
deployment is answered by the light `ollama` client (``ollama_host.chat``), so the daemon of a
box whose models all run on Ollama never loads LiteLLM (about 250 MB of resident memory).
"""

from __future__ import annotations

import os
from types import ModuleType
from typing import TYPE_CHECKING, Any, Callable

from routine.jsonvalue import JSONObject
from routine.models.ollama_host import ChatReply

if TYPE_CHECKING:
    from litellm.types.utils import ModelResponse


def load(default_host: str) -> ModuleType:
    # An edge box is often offline: never let litellm fetch its cost map at import.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    # litellm looks up model info with POST /api/show at OLLAMA_API_BASE (not at api_base),
    # falling back to localhost:11434; point it at our Ollama so it never asks a stranger.
    os.environ.setdefault("OLLAMA_API_BASE", default_host)
    import litellm

    litellm.suppress_debug_info = True
    litellm.telemetry = False
    return litellm


def chat(default_host: str, kwargs: JSONObject, tools: list[JSONObject] | None,
         on_token: Callable[[str], None] | None) -> ChatReply:
    """One completion; exceptions are LiteLLM's (the adapter names them)."""
    litellm = load(default_host)
    if tools:
        # litellm routes any call with tools through its MCP bridge, which imports the optional
        # `mcp` package (and its web stack); we pass plain function tools, so skip the bridge.
        kwargs = {**kwargs, "tools": tools, "_skip_mcp_handler": True}
    if on_token is None:
        return _reply(litellm.completion(stream=False, **kwargs))
    chunks: list[Any] = []  # litellm's stream chunks (untyped)
    calls: list[Any] = []
    for chunk in litellm.completion(stream=True, **kwargs):
        chunks.append(chunk)
        delta = chunk.choices[0].delta if chunk.choices else None
        calls.extend(getattr(delta, "tool_calls", None) or [])
        if delta is not None and delta.content:
            on_token(delta.content)
    return _reply(_with_streamed_calls(litellm.stream_chunk_builder(chunks, messages=kwargs["messages"]), calls))


def _reply(response: ModelResponse) -> ChatReply:
    message = response.choices[0].message
    usage = getattr(response, "usage", None)
    return ChatReply(
        text=message.content or "",
        tool_calls=[{"id": tc.id, "name": tc.function.name, "arguments": tc.function.arguments}
                    for tc in (getattr(message, "tool_calls", None) or [])],
        tokens_in=getattr(usage, "prompt_tokens", None),
        tokens_out=getattr(usage, "completion_tokens", None),
        finish_reason=response.choices[0].finish_reason,
    )


def _with_streamed_calls(response: ModelResponse, calls: list[Any]) -> ModelResponse:
    """litellm's chunk builder loses streamed tool calls that come without an id: put them back,
    so a streamed turn of a tool loop still acts."""
    message = response.choices[0].message
    if not calls or getattr(message, "tool_calls", None):
        return response
    from litellm.types.utils import ChatCompletionMessageToolCall, Function

    message.tool_calls = [ChatCompletionMessageToolCall(
        id=c.id or f"call_{i}", type="function",
        function=Function(name=c.function.name, arguments=c.function.arguments or "{}"))
        for i, c in enumerate(calls) if getattr(c, "function", None) and c.function.name]
    return response


