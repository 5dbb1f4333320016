"""A request's tokens as its model's own family counts them: the family's chat template (tool
schemas, tool calls and results included) and its tokenizer, offline. Mistral's from mistral-common;
Qwen's 2.5 template written out here over Qwen's byte-level BPE (``routine.models.tokens.QwenTokens``).
Which family a model is: ``routine.models.tokens.tokenizer_of``, as routine itself decides it.

The stand-in Ollama reports these counts as ``prompt_eval_count`` (``request_tokens``), and the checks
count the same requests again: each count is kept by the request's text, so it is made once.
"""

from __future__ import annotations

import hashlib
import json
import re


def mistral_count(messages: list, tools: list | None) -> int:
    """The request's tokens by Mistral's own tokenizer and chat template (mistral-common), tool-loop
    turns included (their call ids renamed to the nine characters Mistral's template wants)."""
    from mistral_common.protocol.instruct.messages import AssistantMessage, SystemMessage, ToolMessage, UserMessage
    from mistral_common.protocol.instruct.request import ChatCompletionRequest
    from mistral_common.protocol.instruct.tool_calls import Function, FunctionCall, Tool, ToolCall

    ids: dict[str, str] = {}

    def ident(raw) -> str:
        return ids.setdefault(str(raw), f"call{len(ids):05d}")

    def message(m: dict):
        if m["role"] == "assistant":
            calls = [ToolCall(id=ident(c.get("id")), function=FunctionCall(
                name=c["function"]["name"], arguments=_arguments(c["function"].get("arguments"))))
                for c in m.get("tool_calls") or []]
            return AssistantMessage(content=m.get("content") or None, tool_calls=calls or None)
        if m["role"] == "tool":
            return ToolMessage(content=m.get("content") or "", tool_call_id=ident(m.get("tool_call_id")))
        return {"system": SystemMessage, "user": UserMessage}[m["role"]](content=m.get("content") or "")

    def _arguments(value) -> str:
        return value if isinstance(value, str) else json.dumps(value or {})

    specs = [Tool(function=Function(name=t["function"]["name"], description=t["function"].get("description", ""),
                                    parameters=t["function"].get("parameters", {}))) for t in tools or []]
    request = ChatCompletionRequest(messages=[message(m) for m in messages], tools=specs or None)
    return len(_mistral().encode_chat_completion(request).tokens)


_TOKENIZER = []


def _mistral():
    if not _TOKENIZER:
        from mistral_common.tokens.tokenizers.mistral import MistralTokenizer

        _TOKENIZER.append(MistralTokenizer.v3())
    return _TOKENIZER[0]


# Qwen 2.5's chat template (its tokenizer_config.json), the tokens it adds counted one each.
_QWEN_SPECIAL = re.compile(r"<\|im_start\|>|<\|im_end\|>|</?tool_call>|</?tool_response>")
_QWEN_SYSTEM = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."
_QWEN_TOOLS = ("\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
               "You are provided with function signatures within <tools></tools> XML tags:\n<tools>{}\n</tools>\n\n"
               "For each function call, return a json object with function name and arguments within "
               "<tool_call></tool_call> XML tags:\n<tool_call>\n{{\"name\": <function-name>, \"arguments\": "
               "<args-json-object>}}\n</tool_call>")


def qwen_text(messages: list, tools: list | None) -> str:
    """The request as Qwen 2.5's chat template renders it, ready for the answer."""
    own = bool(messages) and messages[0]["role"] == "system"
    system, rest = ((messages[0].get("content") or ""), messages[1:]) if own else (_QWEN_SYSTEM, messages)
    if tools:
        system += _QWEN_TOOLS.format("".join("\n" + json.dumps(t, ensure_ascii=False) for t in tools))
    out = [f"<|im_start|>system\n{system}<|im_end|>\n"]
    for i, m in enumerate(rest):
        role, content = m["role"], m.get("content") or ""
        if role == "assistant" and m.get("tool_calls"):
            out.append("<|im_start|>assistant" + (f"\n{content}" if content else "")
                       + "".join(_qwen_call(c.get("function", c)) for c in m["tool_calls"]) + "<|im_end|>\n")
        elif role == "tool":
            first = i == 0 or rest[i - 1]["role"] != "tool"
            last = i + 1 == len(rest) or rest[i + 1]["role"] != "tool"
            out.append(("<|im_start|>user" if first else "") + f"\n<tool_response>\n{content}\n</tool_response>"
                       + ("<|im_end|>\n" if last else ""))
        else:
            out.append(f"<|im_start|>{role}\n{content}<|im_end|>\n")
    return "".join(out) + "<|im_start|>assistant\n"


def _qwen_call(function: dict) -> str:
    arguments = function.get("arguments")
    arguments = json.loads(arguments) if isinstance(arguments, str) else arguments or {}
    call = json.dumps({"name": function["name"], "arguments": arguments}, ensure_ascii=False)
    return f"\n<tool_call>\n{call}\n</tool_call>"


_QWEN = []


def qwen_count(messages: list, tools: list | None) -> int:
    """The request's tokens by Qwen's own tokenizer and Qwen 2.5's chat template."""
    if not _QWEN:
        from routine.models.tokens import QwenTokens

        _QWEN.append(QwenTokens())
    text = qwen_text(messages, tools)
    return len(_QWEN_SPECIAL.findall(text)) + sum(_QWEN[0].text(part) for part in _QWEN_SPECIAL.split(text))


FAMILIES = {"mistral": mistral_count, "qwen": qwen_count}
_COUNTED: dict[str, int] = {}


def family_of(model: str) -> str:
    """The tokenizer family of a model by its name, as routine resolves it (``estimate`` if none offline)."""
    from routine.models.tokens import tokenizer_of

    return tokenizer_of(model, None)


def request_tokens(model: str, messages: list, tools: list | None) -> int:
    """The request's tokens by its model's family, counted once per distinct request."""
    family = family_of(model)
    key = hashlib.sha256(json.dumps([family, messages, tools], sort_keys=True, default=str).encode()).hexdigest()
    if key not in _COUNTED:
        _COUNTED[key] = FAMILIES[family](messages, tools)
    return _COUNTED[key]
