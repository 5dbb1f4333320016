"""What a tool is: a name, a description, JSON-schema inputs and a function, checked when it is
defined (a wrong schema or a parameter the function does not take fails at import, not when a
model happens to call it on a Tuesday morning).

    @tool("read_note", "Read one note of the vault.", {"path": {"type": "string", ...}}, required=["path"])
    def read_note(ctx: ToolContext, path: str) -> str: ...

A tool reports a refusal or failure by raising ``ToolError``: the sentence goes back to the
model as the tool's result, so it can correct itself, and the call is counted as refused.
"""

from __future__ import annotations

import contextlib
import inspect
import re
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Callable, TypeAlias

from routine.config.schema import Schema
from routine.config.tool_names import TOOL_NAMES, ToolDefinitionError
from routine.jsonvalue import Parsed
from routine.models.tokens import ToolSchema

if TYPE_CHECKING:
    from routine.config.model import AgentSpec, Config
    from routine.memory.retrieve import HitRecord
    from routine.person.asks import Ask
    from routine.vault import WriteResult

_NAME = re.compile(r"^[a-z][a-z0-9_]{1,40}$")


class ToolError(Exception):
    """A refused or failed tool call, told to the model in one sentence it can act on."""


# What a tool gives back: text for the model, or a file it wrote and whether it is new (write_note).
ToolResult: TypeAlias = "str | tuple[Path, bool]"
# A tool's function: ``(ctx, **arguments)``, its arguments as its schema declares them.
ToolFunction: TypeAlias = "Callable[..., ToolResult]"

@dataclass
class ToolContext:
    """What a tool may use: the vault and the agent's scopes, never more."""

    vault: Path
    agent: AgentSpec
    config: Config
    now: datetime
    run_id: str | None = None
    search: Callable[[str, int, list[str]], list[HitRecord]] | None = None  # (query, k, reads): memory's
    # Held while writing (the daemon's shutdown gate).
    write_gate: Callable[[], AbstractContextManager[object]] = contextlib.nullcontext
    wrote: list[WriteResult] = field(default_factory=list)  # of write_note calls
    # ask_person (issue 45): only a block's step may ask (its block waits for the answer), once a run;
    # a question asked ends the tool loop, and the step waits instead of writing.
    may_ask: bool = False
    asked: list[Ask] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.agent.resolved:  # a tool sees the agent's effective scopes, never the note's own
            raise ValueError(f"a tool context for {self.agent.name} needs its effective scopes "
                             "(routine.access.scoped), not its note's own; this is a bug in routine.")


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    properties: dict[str, Schema]
    required: tuple[str, ...]
    function: ToolFunction

    def __post_init__(self) -> None:
        _check_definition(self)

    @property
    def parameters(self) -> Schema:
        return {"type": "object", "properties": self.properties, "required": list(self.required),
                "additionalProperties": False}

    def spec(self) -> ToolSchema:
        """The OpenAI-style function spec LiteLLM passes to the model."""
        return {"type": "function", "function": {"name": self.name, "description": self.description,
                                                 "parameters": self.parameters}}

    def call(self, ctx: ToolContext, arguments: Parsed) -> ToolResult:
        return self.function(ctx, **arguments)


def tool(name: str, description: str, properties: dict[str, Schema],
         required: list[str] | tuple[str, ...] = ()) -> Callable[[ToolFunction], Tool]:
    def wrap(function: ToolFunction) -> Tool:
        return Tool(name, description, properties, tuple(required), function)
    return wrap


def _check_definition(t: Tool) -> None:
    import jsonschema

    if not _NAME.match(t.name):
        raise ToolDefinitionError(f"tool name {t.name!r} must be lower_snake_case")
    if len(t.description.strip()) < 10:
        raise ToolDefinitionError(f"tool {t.name} needs a description a model can act on")
    try:
        jsonschema.Draft202012Validator.check_schema(t.parameters)
    except jsonschema.SchemaError as exc:
        raise ToolDefinitionError(f"tool {t.name}: bad input schema: {exc.message}") from None
    for prop, schema in t.properties.items():
        if not schema.get("description"):
            raise ToolDefinitionError(f"tool {t.name}: input {prop!r} needs a description")
    params = list(inspect.signature(t.function).parameters.values())
    if not params or params[0].name != "ctx":
        raise ToolDefinitionError(f"tool {t.name}: the function's first parameter must be ctx")
    accepted = {p.name: p for p in params[1:]}
    if set(accepted) != set(t.properties):
        raise ToolDefinitionError(f"tool {t.name}: schema inputs {sorted(t.properties)} != function "
                                  f"parameters {sorted(accepted)}")
    for name in t.required:
        if name not in t.properties:
            raise ToolDefinitionError(f"tool {t.name}: required input {name!r} is not in the schema")
    for name, p in accepted.items():
        if name not in t.required and p.default is inspect.Parameter.empty:
            raise ToolDefinitionError(f"tool {t.name}: optional input {name!r} needs a default in the function")
    if t.name not in TOOL_NAMES:
        raise ToolDefinitionError(f"tool {t.name} is not declared: add its name to routine/config/tool_names.py")


def checked_arguments(t: Tool, arguments: object) -> Parsed:
    """The model's arguments, gently coerced (small models send "5" for 5) and validated
    against the schema; a ToolError says exactly what to fix."""
    import jsonschema

    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise ToolError(f"{t.name} takes an object of named arguments, like {_example(t)}.")
    args = {k: _coerce(t.properties.get(k, {}), v) for k, v in arguments.items()}
    errors = sorted(jsonschema.Draft202012Validator(t.parameters).iter_errors(args), key=lambda e: e.path)
    if errors:
        first = errors[0]
        where = f" (argument {'.'.join(map(str, first.path))})" if first.path else ""
        raise ToolError(f"{t.name}: {first.message}{where}. Call it like {_example(t)}.")
    return args


def _coerce(schema: Schema, value: object) -> object:
    kind = schema.get("type")
    if kind == "integer" and isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    if kind == "boolean" and isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    if kind == "string" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return value


def _example(t: Tool) -> str:
    import json

    sample = {
        k: ("..." if t.properties[k].get("type") == "string" else 1) for k in (t.required or list(t.properties)[:1])
    }
    return f"{t.name}({json.dumps(sample)})"
