"""Reading a model's tool calls, including the ways small local models get them wrong.

- Native calls (Ollama's ``tool_calls``), arguments as an object or a JSON string.
- A call written as JSON in the text instead: bare, in a ```json fence, in ``<tool_call>`` tags
  (Qwen/Hermes style), as a list, or as {"function": {...}} / {"tool": ..., "parameters": ...}.
  Only taken when it names one of the agent's tools, so a JSON example in an answer stays prose.
- Malformed or partial arguments: trailing commas, single quotes, a missing closing brace are
  repaired; what cannot be read becomes a problem told back to the model.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

from routine.jsonvalue import JSONObject

_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.S)
_FENCE = re.compile(r"^```(?:json|tool_call|tool)?\s*\n?(.*?)\n?```$", re.S)


@dataclass(frozen=True)
class Call:
    id: str
    name: str
    arguments: JSONObject | None  # None: could not be read (see problem)
    raw: str                # the arguments as the model sent them, for the transcript
    problem: str | None = None
    from_text: bool = False  # the model wrote the call as text, not as a tool call


def parse_arguments(raw: object) -> tuple[JSONObject | None, str | None]:
    if raw is None or raw == "":
        return {}, None
    if isinstance(raw, dict):
        return raw, None
    if not isinstance(raw, str):
        return None, f"the arguments are a {type(raw).__name__}, not an object of named values"
    for attempt in _repairs(raw.strip()):
        try:
            value = json.loads(attempt)
        except ValueError:
            continue
        if isinstance(value, str):  # double-encoded: '"{\"path\": ...}"'
            return parse_arguments(value)
        if isinstance(value, dict):
            return value, None
        return None, "the arguments must be an object of named values, like {\"path\": \"Plans/OKRs.md\"}"
    return None, f"the arguments are not valid JSON: {raw[:200]!r}"


def _repairs(text: str) -> Iterator[str]:
    yield text
    body = text[: text.rfind("}") + 1] if "}" in text else text
    body = re.sub(r",\s*([}\]])", r"\1", body)  # trailing commas
    yield body
    if "'" in body and '"' not in body:
        yield body.replace("'", '"')
    opened = body.count("{") - body.count("}")
    if opened > 0:  # a call cut off at the end
        closed = re.sub(r",\s*$", "", body) + "}" * opened
        yield closed
        if closed.count('"') % 2:
            yield re.sub(r",\s*$", "", body) + '"' + "}" * opened


def native_calls(tool_calls: list[JSONObject]) -> list[Call]:
    out: list[Call] = []
    for tc in tool_calls or []:
        raw = tc.get("arguments")
        args, problem = parse_arguments(raw)
        out.append(Call(str(tc.get("id") or _new_id()), str(tc.get("name") or ""), args,
                        raw if isinstance(raw, str) else json.dumps(raw), problem))
    return out


def calls_in_text(text: str, tool_names: set[str]) -> list[Call]:
    """Tool calls a model wrote as text; empty when the text is an answer."""
    if not text or not text.strip():
        return []
    chunks = _TAGGED.findall(text)
    if not chunks:
        stripped = text.strip()
        fenced = _FENCE.match(stripped)
        stripped = fenced.group(1).strip() if fenced else stripped
        if not stripped.startswith(("{", "[")):
            return []
        chunks = [stripped]
    calls = []
    for chunk in chunks:
        for obj in _objects(chunk):
            call = _as_call(obj, tool_names)
            if call is not None:
                calls.append(call)
    return calls


def _objects(chunk: str) -> list[object]:
    for attempt in _repairs(chunk):
        try:
            value = json.loads(attempt)
        except ValueError:
            continue
        return value if isinstance(value, list) else [value]
    return []


def _as_call(obj: object, tool_names: set[str]) -> Call | None:
    if not isinstance(obj, dict):
        return None
    function = obj.get("function")
    inner = function if isinstance(function, dict) else obj
    name = inner.get("name") or inner.get("tool") or inner.get("tool_name")
    if not isinstance(name, str) or name not in tool_names:
        return None
    raw = inner.get("arguments", inner.get("parameters", inner.get("args", {})))
    args, problem = parse_arguments(raw)
    return Call(_new_id(), name, args, raw if isinstance(raw, str) else json.dumps(raw), problem, from_text=True)


def _new_id() -> str:
    return "call_" + uuid.uuid4().hex[:12]
