"""The one schema for every file a person edits: routine.yaml here, agent notes and schedule files
in ``schedule_schema.py`` (from the shapes and helpers here).

JSON Schema (validated with ``jsonschema``) catches shape errors; ``checks.py`` adds what a
schema cannot say (unknown agent, bad cron, scopes). Both report every problem at once.
"""

from __future__ import annotations

import copy
from typing import Any, TypeAlias

from routine.config.notify import ALL, CHANNELS, Topic
from routine.config.tool_names import LIBRARY_TOOLS, MCP_SERVER_NAME, MCP_TOOL_REFERENCE, TOOL_NAMES
from routine.jsonvalue import Parsed
from routine.vault.targets import WriteTarget

# A JSON Schema, as routine declares it and jsonschema reads it (its keywords' values vary by keyword).
Schema: TypeAlias = Parsed

DURATION = {"type": "string", "pattern": r"^\s*\d+(\.\d+)?\s*(s|m|h|d)\s*$"}
GLOBS = {"type": "array", "items": {"type": "string", "minLength": 1}}
SIZE = {"type": "string", "pattern": r"^\s*\d+(\.\d+)?\s*(B|KiB|MiB|GiB|KB|MB|GB|K|M|G)\s*$"}
__all__ = ["LIBRARY_TOOLS", "TOOL_NAMES"]  # the tools' names live in config/tool_names.py

# A write target's keys and forms are WriteTarget's (routine/vault/targets.py), the one declaration.
WRITE_TARGET = {
    "type": "object",
    "additionalProperties": False,
    "properties": {key: {"type": "string", "minLength": 1} for key in WriteTarget.KEYS},
    "oneOf": [{"required": [key]} for key in WriteTarget.DESTS],
    "not": {"anyOf": [{"required": [key, "section"]} for key in WriteTarget.DESTS if key not in WriteTarget.SECTIONED]},
}


def key(description: str, schema: Schema | None = None, **default: object) -> Schema:
    """One key of routine.yaml: its schema, what it does, and (``default=``) its default as a
    person would write it. The loader fills in these defaults; routine.example.yaml shows them."""
    return {**(schema or {}), "description": description, **default}


def section(description: str, **properties: Schema) -> Schema:
    return {"type": "object", "additionalProperties": False, "description": description, "properties": properties}


EVENTS = section(
    "outside events over HTTP (`routine trigger`'s webhook): off unless `listen` is set",
    listen=key("a loopback address and port to listen on, e.g. 127.0.0.1:8787; empty: no listener",
               {"type": "string", "pattern": r"^((127\.0\.0\.1|localhost|\[::1\]):\d{1,5})?$"}, default=""),
    per_minute=key("requests one event accepts a minute; more are answered 429",
                   {"type": "integer", "minimum": 1, "maximum": 600}, default=30),
    tokens=key("one token per event (`event: NAME`), at least 16 characters, sent as `Authorization: Bearer TOKEN`",
               {"type": "object", "propertyNames": {"pattern": r"^[a-z0-9][a-z0-9_.-]*$"},
                "additionalProperties": {"type": "string", "minLength": 16}}, default={}),
)

TRIALS = section(
    "trials of other models on your own runs (`routine models try`), run by the daemon when the box is idle",
    window=key(
        "HH:MM-HH:MM in your time zone when queued trials run (one at a time, never during a block); "
        "empty: only `routine models try --now` runs them",
        {"type": "string", "pattern": r"^(\d{2}:\d{2}\s*-\s*\d{2}:\d{2})?$"},
        default="",
    ),
    clear=key(
        "no trial starts when a scheduled block is due within this long",
        DURATION,
        default="15m",
    ),
)


ALIAS = {  # a model alias written out; a bare string is {model: STRING}
    "type": "object",
    "additionalProperties": False,
    "required": ["model"],
    "properties": {
        "model": key("the LiteLLM model name, e.g. ollama_chat/mistral:7b-instruct-q4_K_M (pull Ollama's first)",
                     {"type": "string", "minLength": 1}),
        "num_ctx": key("the context window in tokens, pinned so Ollama never reloads the model for another size",
                       {"type": "integer", "minimum": 512}, default=8192),
        "num_predict": key("the longest answer in tokens; a prompt always leaves this much room in num_ctx",
                           {"type": "integer", "minimum": 16}, default=1024),
        "tokenizer": key("how a prompt is counted before it is sent: auto (the model family's tokenizer when "
                         "installed: Mistral's for mistral/mixtral, Qwen's for qwen, else the estimate), mistral, "
                         "qwen, or estimate (a cautious count); every count learns from what the server reports",
                         {"enum": ["auto", "mistral", "qwen", "estimate"]}, default="auto"),
        "fallbacks": key("other aliases tried in order when this model fails or is missing",
                         {"type": "array", "items": {"type": "string"}}, default=[]),
        "options": key("more Ollama options, pinned on every request (e.g. temperature)",
                       {"type": "object"}, default={}),
        "keep_alive": key("how long Ollama keeps the model after a run made without the daemon (the daemon "
                          "decides residency itself)", {"type": ["string", "integer"]}, default="10m"),
        "api_base": key("the server this model runs on; default: ollama.host", {"type": "string"}),
        "deployments": key(
            "more servers running the same model; a step goes where the model is loaded, else where a slot is free",
            {"type": "array", "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["api_base"],
                "properties": {
                    "model": key("the model's name there (default: the alias's model), e.g. openai/mistral-7b "
                                 "for an OpenAI-compatible server", {"type": "string", "minLength": 1}),
                    "api_base": key("the server's address, e.g. http://orin-2:11434",
                                    {"type": "string", "minLength": 1}),
                    "api_key_env": key("the environment variable holding the server's key, if it needs one",
                                       {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$"}),
                },
            }}, default=[]),
    },
}
MODEL_ALIAS = {"oneOf": [{"type": "string", "minLength": 1}, ALIAS]}

LIBRARY = {  # a library written out; a bare string is {path: STRING}
    "type": "object", "additionalProperties": False, "required": ["path"],
    "properties": {
        "path": key("the library's folder (relative to this file, or absolute)", {"type": "string", "minLength": 1}),
        "tools": key("the tools an agent installed from it may have",
                     {"type": "array", "items": {"enum": list(TOOL_NAMES)}}, default=list(LIBRARY_TOOLS)),
    },
}

# An agent's `tools:` entry: one of routine's tools, or an MCP server's (`mcp:SERVER[/TOOL]`).
AGENT_TOOL = {"anyOf": [{"enum": list(TOOL_NAMES)}, {"type": "string", "pattern": MCP_TOOL_REFERENCE}]}

MCP_SERVER = {  # one entry of `mcp_servers:`: a stdio command (run in the sandbox) or a streamable-HTTP url
    "type": "object", "additionalProperties": False,
    "oneOf": [{"required": ["command"]}, {"required": ["url"]}],
    "properties": {
        "command": key("the server's program, started over stdio in run_command's sandbox (bubblewrap)",
                       {"type": "string", "minLength": 1}),
        "args": key("the program's arguments", {"type": "array", "items": {"type": "string"}}, default=[]),
        "env": key("environment variables the program is given (nothing else of routine's environment)",
                   {"type": "object", "additionalProperties": {"type": "string"}}, default={}),
        "url": key("a streamable-HTTP MCP server's URL (http:// or https://)",
                   {"type": "string", "pattern": "^https?://"}),
        "paths": key("folders the sandboxed program may read and write (relative to this file, or absolute); "
                     "nothing else of the machine but its system folders and its own installation",
                     {"type": "array", "items": {"type": "string", "minLength": 1}}, default=[]),
        "hosts": key("hosts the program may reach (host or host:port): the network is off unless some are "
                     "named, and the service's allow-list takes them in",
                     {"type": "array", "items": {"type": "string", "minLength": 1}}, default=[]),
        "timeout": key("the longest one tool call may take (starting and listing its tools may take at least a "
                       "minute)", DURATION, default="60s"),
    },
}

CONFIG = {
    "type": "object",
    "additionalProperties": False,
    "required": ["vault", "models"],
    "properties": {
        "vault": key(
            "your Obsidian vault (relative to this file, or absolute); the agents read and write only inside it",
            {"type": "string", "minLength": 1},
        ),
        "timezone": key(
            "the IANA time zone of schedules and of the dates in notes; default: the machine's", {"type": "string"}
        ),
        "ollama": section(
            "the Ollama server and which models stay loaded",
            host=key(
                "the Ollama server; $OLLAMA_HOST, when set, comes before this default",
                {"type": "string"},
                default="http://127.0.0.1:11434",
            ),
            max_resident=key(
                "at most this many models loaded at once; routine swaps the rest",
                {"type": "integer", "minimum": 1, "maximum": 8},
                default=2,
            ),
            unload_foreign=key(
                "whether models other programs loaded (`ollama run`) may be unloaded to make room",
                {"type": "boolean"},
                default=False,
            ),
            idle_unload=key(
                "unload a model of routine's when nothing in the schedule needs it for this long",
                DURATION,
                default="6h",
            ),
            preload=key("load each model shortly before the step that needs it", {"type": "boolean"}, default=True),
        ),
        "models": key(
            "model aliases by name; each agent note names one in its `model:`",
            {"type": "object", "minProperties": 1, "additionalProperties": MODEL_ALIAS},
        ),
        "sandbox": section(
            "run_command's sandbox (bubblewrap)",
            workdir=key(
                "the folder mounted at /work: a vault folder, or an absolute path",
                {"type": "string", "minLength": 1},
                default="Builds",
            ),
            mode=key(
                "for an absolute workdir: ro or rw (a vault folder follows the agent's writes:)",
                {"enum": ["ro", "rw"]},
                default="ro",
            ),
            timeout=key("the longest a command may run", DURATION, default="60s"),
            memory=key("the most memory a command may use", SIZE, default="1GiB"),
            output=key("the most output a command returns to the model", SIZE, default="64KiB"),
        ),
        "watch": section(
            "the vault watcher",
            inotify=key(
                "use change events; false for a vault on a network share (NFS/SMB), where they do not arrive",
                {"type": "boolean"},
                default=True,
            ),
            reconcile=key("how often a full pass finds changes the events missed", DURATION, default="5m"),
        ),
        "chat": section(
            "chat notes",
            quiet=key(
                "how long a chat note must be still after the person's save before it is answered",
                DURATION,
                default="3s",
            ),
        ),
        "trials": TRIALS,
        "events": EVENTS,
        "projects": section(
            "projects and their tasks",
            pickup_backoff=key(
                "how long after a failed task pickup it is tried again; doubled after each failure (at most an hour)",
                DURATION,
                default="30s",
            ),
        ),
        "request_timeout": key(
            "seconds for one model call, loading the model included",
            {"type": "number", "exclusiveMinimum": 0},
            default=600,
        ),
        "retries": key(
            "retries of a failed model call before the fallbacks are tried",
            {"type": "integer", "minimum": 0, "maximum": 10},
            default=2,
        ),
        "retry_backoff": key(
            "seconds before the first retry of a model call; doubled after each",
            {"type": "number", "minimum": 0},
            default=2,
        ),
        "layout": section(
            "where routine's own folders and notes are in the vault (vault-relative)",
            daily=key("daily notes", {"type": "string", "minLength": 1}, default="Daily"),
            weekly=key("weekly notes", {"type": "string", "minLength": 1}, default="Weekly"),
            drafts=key("proposals waiting for approval", {"type": "string", "minLength": 1}, default="Drafts"),
            alerts=key("alerts routine raises", {"type": "string", "minLength": 1}, default="Alerts"),
            archive=key(
                "archived notes (agents' searches skip it)", {"type": "string", "minLength": 1}, default="Archive"
            ),
            agents=key(
                "agent notes, and custom agents' own folders", {"type": "string", "minLength": 1}, default="Agents"
            ),
            dashboard=key("the dashboard note", {"type": "string", "minLength": 1}, default="Routine/Dashboard.md"),
            chats=key("chat notes made by `routine chat new`", {"type": "string", "minLength": 1}, default="Chats"),
        ),
        "metrics": section(
            "figures for Prometheus",
            textfile=key(
                "node_exporter's textfile, rewritten after each run; false: not written. "
                "Default: metrics/routine.prom in the state folder",
                {"anyOf": [{"type": "string", "minLength": 1}, {"const": False}]},
            ),
        ),
        "calendars": key(
            "your calendars, read-only: .ics files (relative to this file) or http(s) URLs on your LAN; a step "
            "reads them with the input `calendar: today` (or tomorrow, this_week)",
            {
                "type": "array",
                "items": {
                    "oneOf": [
                        {"type": "string", "minLength": 1},
                        {
                            "type": "object",
                            "additionalProperties": False,
                            "required": ["source"],
                            "properties": {
                                "source": key("the .ics file or URL", {"type": "string", "minLength": 1}),
                                "name": key(
                                    "how steps see it named (default: the file's name)",
                                    {"type": "string", "minLength": 1},
                                ),
                            },
                        },
                    ]
                },
            },
            default=[],
        ),
        "notify": section(
            "messages to your phone or mail when something needs you (Apprise URLs: ntfy, Gotify, Matrix, "
            "email, Telegram, a JSON webhook…); `routine notify test` sends one",
            urls=key(
                "where messages go, e.g. ntfy://ntfy.lan/routine or json://box.lan:8080/hook",
                {"type": "array", "items": {"type": "string", "minLength": 3}},
                default=[],
            ),
            on=key(
                f"what is sent: {ALL} (every kind, those added later too), or a list of: "
                + "; ".join(f"{t.value} ({t.meaning})" for t in Topic),
                {"anyOf": [{"enum": [ALL]},
                           {"type": "array", "items": {"enum": [t.value for t in Topic]}, "uniqueItems": True}]},
                default=ALL,
            ),
            ready=key(
                "blocks whose note, once written, is sent with its first lines (e.g. [morning])",
                {"type": "array", "items": {"type": "string", "minLength": 1}},
                default=[],
            ),
            remind=key(
                "a task with a due date (📅 2026-12-01), a person's or an agent's, is nudged this long before "
                "its day (1d: the day before) and once more when it is overdue; off: no reminders",
                {"anyOf": [DURATION, {"enum": ["off"]}]},
                default="1d",
            ),
            quiet_hours=key(
                "HH:MM-HH:MM in your time zone when nothing is sent; held messages go out after; empty: never quiet",
                {"type": "string", "pattern": r"^(\d{2}:\d{2}\s*-\s*\d{2}:\d{2})?$"},
                default="",
            ),
            answer_within=key(
                "how long the buttons of a message (Approve, Reject…) stay good; an answer after that is refused",
                DURATION,
                default="3d",
            ),
            **{name: section(kind.DESCRIPTION, **kind.SCHEMA) for name, kind in CHANNELS.items()},
        ),
        "holiday": key(
            "days on which nothing scheduled runs (triggers wait too): a date, or first..last; "
            "`routine pause` pauses for a while without editing this",
            {
                "type": "array",
                "items": {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}(\s*\.\.\s*\d{4}-\d{2}-\d{2})?$"},
            },
            default=[],
        ),
        "libraries": key(
            "agent libraries by name: a folder (a synced or git folder a team shares), or {path, tools}; "
            "the shipped library `general` is always there",
            {
                "type": "object",
                "propertyNames": {"pattern": r"^[A-Za-z0-9][A-Za-z0-9_-]*$"},
                "additionalProperties": {"oneOf": [{"type": "string", "minLength": 1}, LIBRARY]},
            },
        ),
        "author": key(
            "the name `routine agent publish` writes as an agent's author in a library; "
            "default: your login name",
            {"type": "string", "minLength": 1},
        ),
        "mcp_servers": key(
            "MCP servers whose tools agents may use (`tools: [mcp:NAME]` or `mcp:NAME/TOOL` in an agent note), "
            "by name: a stdio `command` (sandboxed like run_command) or a streamable-HTTP `url`",
            {"type": "object", "propertyNames": {"pattern": f"^{MCP_SERVER_NAME}$"},
             "additionalProperties": MCP_SERVER},
            default={},
        ),
        "memory": section(
            "the vault search index",
            embedding_model=key(
                "the shipped all-MiniLM-L6-v2 (offline), a folder holding a sentence-transformers "
                "model, a model in the local Hugging Face cache, or ollama:MODEL; a change "
                "rebuilds the index",
                {"type": "string", "minLength": 1},
                default="all-MiniLM-L6-v2",
            ),
            unload_after=key(
                "seconds idle before the daemon's index worker (chromadb and the embedding "
                "model) exits, and before a model a command loaded is released",
                {"type": "number", "minimum": 0},
                default=45,  # the worker gone within a minute of its last work (issue 47)
            ),
            chunk_chars=key(
                "the longest piece of a note that is embedded; notes are cut at headings first",
                {"type": "integer", "minimum": 200, "maximum": 20000},
                default=1000,
            ),
        ),
    },
}


def defaults(schema: Schema) -> Parsed:
    """The defaults of an object schema's keys, nested sections included."""
    filled: Parsed = with_defaults(schema, {})
    return filled


def with_defaults(schema: Schema, data: Any) -> Any:  # data: as parsed from YAML
    """``data`` (valid against ``schema``) with every missing key that has a default filled in,
    inside sections and inside named entries (models, libraries) written out as objects."""
    form = _object_form(schema, data)
    if not isinstance(data, dict) or form is None:
        return data
    out = dict(data)
    for name, sub in form.get("properties", {}).items():
        if name in out:
            out[name] = with_defaults(sub, out[name])
        elif "default" in sub:
            out[name] = copy.deepcopy(sub["default"])
        elif "properties" in sub and not sub.get("required"):
            out[name] = with_defaults(sub, {})
    extra = form.get("additionalProperties")
    if isinstance(extra, dict):
        out.update({name: with_defaults(extra, value) for name, value in out.items()
                    if name not in form.get("properties", {})})
    return out


def _object_form(schema: Schema, data: object) -> Schema | None:
    """The branch of ``schema`` that describes an object (a oneOf may also allow a string)."""
    if not isinstance(data, dict):
        return None
    if "properties" in schema or "additionalProperties" in schema:
        return schema
    return next((b for b in schema.get("oneOf", ()) if b.get("type") == "object"), None)
