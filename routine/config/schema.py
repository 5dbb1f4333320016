"""The one schema for every file a person edits: routine.yaml, agent notes, schedule files.

JSON Schema (validated with ``jsonschema``) catches shape errors; ``checks.py`` adds what a
schema cannot say (unknown agent, bad cron, scopes). Both report every problem at once.
"""

from __future__ import annotations

import copy

from routine.config.behaviours import NAMES as BEHAVIOURS
from routine.config.notify import Topic
from routine.config.tool_names import LIBRARY_TOOLS, TOOL_NAMES

DURATION = {"type": "string", "pattern": r"^\s*\d+(\.\d+)?\s*(s|m|h|d)\s*$"}
GLOBS = {"type": "array", "items": {"type": "string", "minLength": 1}}
SIZE = {"type": "string", "pattern": r"^\s*\d+(\.\d+)?\s*(B|KiB|MiB|GiB|KB|MB|GB|K|M|G)\s*$"}
__all__ = ["LIBRARY_TOOLS", "TOOL_NAMES"]  # the tools' names live in config/tool_names.py

WRITE_TARGET = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "note": {"type": "string", "minLength": 1},
        "section": {"type": "string", "minLength": 1},
        "append": {"type": "string", "minLength": 1},
    },
    "oneOf": [{"required": ["note"]}, {"required": ["append"]}],
    "not": {"required": ["append", "section"]},
}


def key(description: str, schema: dict | None = None, **default) -> dict:
    """One key of routine.yaml: its schema, what it does, and (``default=``) its default as a
    person would write it. The loader fills in these defaults; routine.example.yaml shows them."""
    return {**(schema or {}), "description": description, **default}


def section(description: str, **properties: dict) -> dict:
    return {"type": "object", "additionalProperties": False, "description": description, "properties": properties}


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
                "what is sent: alerts (one message per cause, and when it resolves), proposals waiting, "
                "tasks assigned to a person, ready (the notes of the blocks in `ready`)",
                {"type": "array", "items": {"enum": [t.value for t in Topic]}, "uniqueItems": True},
                default=[t.value for t in Topic],
            ),
            ready=key(
                "blocks whose note, once written, is sent with its first lines (e.g. [morning])",
                {"type": "array", "items": {"type": "string", "minLength": 1}},
                default=[],
            ),
            quiet_hours=key(
                "HH:MM-HH:MM in your time zone when nothing is sent; held messages go out after; empty: never quiet",
                {"type": "string", "pattern": r"^(\d{2}:\d{2}\s*-\s*\d{2}:\d{2})?$"},
                default="",
            ),
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
                default=120,
            ),
            chunk_chars=key(
                "the longest piece of a note that is embedded; notes are cut at headings first",
                {"type": "integer", "minimum": 200, "maximum": 20000},
                default=1000,
            ),
        ),
    },
}


def defaults(schema: dict) -> dict:
    """The defaults of an object schema's keys, nested sections included."""
    return with_defaults(schema, {})


def with_defaults(schema: dict, data):
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


def _object_form(schema: dict, data) -> dict | None:
    """The branch of ``schema`` that describes an object (a oneOf may also allow a string)."""
    if not isinstance(data, dict):
        return None
    if "properties" in schema or "additionalProperties" in schema:
        return schema
    return next((b for b in schema.get("oneOf", ()) if b.get("type") == "object"), None)


AGENT = {
    "type": "object",
    "additionalProperties": False,
    "required": ["agent", "model"],
    "properties": {
        "agent": {"type": "string", "pattern": r"^[a-z][a-z0-9_-]*$"},
        "role": {"type": "string"},
        "model": {"type": "string", "minLength": 1},
        "reads": GLOBS,
        "writes": GLOBS,
        "approval": {"enum": ["none", "required"], "default": "none"},
        "tools": {"type": "array", "items": {"enum": list(TOOL_NAMES)}},
        "grounding": {"type": "array", "items": {"type": "string"}},
        "inputs": {"type": "array", "items": {"type": "string"}},
        "write": WRITE_TARGET,
        "task": {"type": "string"},
        "locked": {"type": "boolean"},
        # A custom agent (made by the person, `routine agent new`): its sandbox is its grounding,
        # its own folder Agents/<Name>/ and the case files it is assigned to.
        "custom": {"type": "boolean"},
        "author": {"type": "string"},
        "version": {"type": ["string", "integer"]},
        "behaviour": {"enum": list(BEHAVIOURS)},
        "description": {"type": "string"},
        # A tool-using run: model turns at most, and the time all turns together may take.
        "max_iterations": {"type": "integer", "minimum": 1, "maximum": 50, "default": 8},
        "timeout": {**DURATION, "default": "10m"},
        # Room a tool-using step's first request leaves for a tool call and its result (tokens).
        "tool_reserve": {"type": "integer", "minimum": 256, "maximum": 65536, "default": 1024,
                         "description": "tokens a tool-using step's first request leaves free for a tool call "
                                        "and its result (at least 256: a call and a short result); a larger "
                                        "result is cut to the room left"},
        # issue 25: claims of a reply checked against what the model was given (routine/vault/grounding.py)
        "grounding_check": {"enum": ["strict", "lenient", "off"], "default": "lenient",
                            "description": "links, dates, names and key-result figures of a reply must be in "
                                           "what the model was given (strict: every figure); off: no check"},
        # Obsidian properties a person may add to any note; harmless here.
        "tags": {"type": ["array", "string", "null"]},
        "aliases": {"type": ["array", "string", "null"]},
        "cssclasses": {"type": ["array", "string", "null"]},
    },
}

STEP: dict = {
    "type": "object",
    "additionalProperties": False,
    "required": ["agent"],
    "properties": {
        "agent": {"type": "string"},
        "task": {"type": "string"},
        "inputs": {"type": "array", "items": {"type": "string"}},
        "search": {
            "type": "object",
            "additionalProperties": False,
            "required": ["query"],
            "properties": {"query": {"type": "string"},
                           "k": {"type": "integer", "minimum": 1, "default": 6,
                                 "description": "how many of the best-matching passages to give the step"}},
        },
        "write": WRITE_TARGET,
        # A conditional handoff (routine/config/conditions.py): run only when an earlier step's
        # verdict (its `VERDICT: …` line) is one of these, or its output contains a text; `else:`
        # names the later step that runs instead.
        "when": {
            "type": "object",
            "additionalProperties": False,
            "required": ["step"],
            "oneOf": [{"required": ["verdict"]}, {"required": ["contains"]}],
            "properties": {
                "step": {"type": "string", "minLength": 1},
                "verdict": {"anyOf": [{"type": "string", "minLength": 1},
                                      {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 1}}]},
                "contains": {"type": "string", "minLength": 1},
                "else": {"type": "string", "minLength": 1},
            },
        },
        # issue 15: the knowledge graph's typed links around a note, in the step's context
        "graph": {
            "type": "object",
            "additionalProperties": False,
            "required": ["around"],
            "properties": {"around": {"type": "string", "minLength": 1},
                           "depth": {"type": "integer", "minimum": 1, "maximum": 3, "default": 1,
                                     "description": "how many typed links away from the note to look"}},
        },
    },
}

SCHEDULE: dict = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "timezone": {"type": "string"},
        "blocks": {
            "type": "object",
            "propertyNames": {"pattern": r"^[a-z0-9][a-z0-9_-]*$"},
            "additionalProperties": {
                "type": "object",
                "additionalProperties": False,
                "required": ["cron", "steps"],
                "properties": {
                    "description": {"type": "string", "default": "",
                                    "description": "a line for `schedule list` and the dashboard"},
                    "cron": {"type": "string", "description": "when the block fires, five cron fields"},
                    "missed": {"enum": ["catch-up", "skip"], "default": "catch-up",
                               "description": "a slot missed while the box was off: run it late, or skip it"},
                    "grace": {**DURATION, "default": "1h",
                              "description": "how late a missed slot may still be caught up"},
                    "enabled": {"type": "boolean", "default": True, "description": "false: the block never fires"},
                    "retry": {
                        "type": "object",
                        "additionalProperties": False,
                        "description": "retry a step that failed for a passing reason (Ollama away or busy, "
                                       "a timeout): `attempts` in all (default 1, no retry), waiting `backoff` "
                                       "(default 30s) before the second, doubling after",
                        "properties": {"attempts": {"type": "integer", "minimum": 1, "maximum": 10, "default": 1},
                                       "backoff": {**DURATION, "default": "30s"}},
                    },
                    "steps": {"type": "array", "minItems": 1, "items": STEP},
                },
            },
        },
        "triggers": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["on", "path", "agent"],
                "properties": {
                    "on": {"enum": ["created", "modified", "deleted", "moved"]},
                    "path": {"type": "string"},
                    "where": {"type": "object"},
                    "agent": {"type": "string"},
                    "task": {"type": "string"},
                    "debounce": {**DURATION, "default": "10s",
                                 "description": "quiet time after the last save before the agent runs"},
                    "write": WRITE_TARGET,
                },
            },
        },
    },
}

# A block and a trigger of a schedule file: their defaults are the loader's and the model's.
BLOCK = SCHEDULE["properties"]["blocks"]["additionalProperties"]
TRIGGER = SCHEDULE["properties"]["triggers"]["items"]
