"""The one schema for every file a person edits: routine.yaml, agent notes, schedule files.

JSON Schema (validated with ``jsonschema``) catches shape errors; ``checks.py`` adds what a
schema cannot say (unknown agent, bad cron, scopes). Both report every problem at once.
"""

from __future__ import annotations

from dataclasses import fields

from routine.config.model import Layout

DURATION = {"type": "string", "pattern": r"^\s*\d+(\.\d+)?\s*(s|m|h|d)\s*$"}
GLOBS = {"type": "array", "items": {"type": "string", "minLength": 1}}
TOOL_NAMES = ["search_notes", "read_note", "list_notes", "write_note", "now", "date_math", "run_command",
              "graph_neighbors"]
SIZE = {"type": "string", "pattern": r"^\s*\d+(\.\d+)?\s*(B|KiB|MiB|GiB|KB|MB|GB|K|M|G)\s*$"}

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

MODEL_ALIAS = {
    "oneOf": [
        {"type": "string", "minLength": 1},
        {
            "type": "object",
            "additionalProperties": False,
            "required": ["model"],
            "properties": {
                "model": {"type": "string", "minLength": 1},
                "num_ctx": {"type": "integer", "minimum": 512},
                "num_predict": {"type": "integer", "minimum": 16},
                "tokenizer": {"enum": ["mistral", "estimate"]},
                "fallbacks": {"type": "array", "items": {"type": "string"}},
                "options": {"type": "object"},
                "keep_alive": {"type": ["string", "integer"]},
                "api_base": {"type": "string"},
                "deployments": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["api_base"],
                        "properties": {"model": {"type": "string", "minLength": 1},
                                       "api_base": {"type": "string", "minLength": 1},
                                       "api_key_env": {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$"}},
                    },
                },
            },
        },
    ]
}

CONFIG = {
    "type": "object",
    "additionalProperties": False,
    "required": ["vault", "models"],
    "properties": {
        "vault": {"type": "string", "minLength": 1},
        "timezone": {"type": "string"},
        "ollama": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "host": {"type": "string"},
                "max_resident": {"type": "integer", "minimum": 1, "maximum": 8},
                "unload_foreign": {"type": "boolean"},
                "idle_unload": DURATION,
                "preload": {"type": "boolean"},
            },
        },
        "models": {
            "type": "object",
            "minProperties": 1,
            "additionalProperties": MODEL_ALIAS,
        },
        "sandbox": {
            "type": "object",
            "additionalProperties": False,
            "properties": {"workdir": {"type": "string", "minLength": 1}, "mode": {"enum": ["ro", "rw"]},
                           "timeout": DURATION, "memory": SIZE, "output": SIZE},
        },
        "watch": {
            "type": "object",
            "additionalProperties": False,
            "properties": {"inotify": {"type": "boolean"}, "reconcile": DURATION},
        },
        "chat": {
            "type": "object",
            "additionalProperties": False,
            # quiet: how long a chat note must be still after the person's save before it is answered
            "properties": {"quiet": DURATION},
        },
        "request_timeout": {"type": "number", "exclusiveMinimum": 0},
        "retries": {"type": "integer", "minimum": 0, "maximum": 10},
        "retry_backoff": {"type": "number", "minimum": 0},
        "layout": {
            "type": "object",
            "additionalProperties": False,
            "properties": {  # one source of truth: the Layout dataclass's fields and defaults
                f.name: {"type": "string", "minLength": 1, "default": f.default} for f in fields(Layout)
            },
        },
        "metrics": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                # node_exporter textfile (a path; false turns it off). Default: <state>/metrics/routine.prom
                "textfile": {"anyOf": [{"type": "string", "minLength": 1}, {"const": False}]},
            },
        },
        # Agent libraries by name: a folder (shared: a synced or git folder a team uses), or
        # {path, tools}: the tools an agent installed from it may have (default: all but run_command).
        "libraries": {
            "type": "object",
            "propertyNames": {"pattern": r"^[A-Za-z0-9][A-Za-z0-9_-]*$"},
            "additionalProperties": {
                "oneOf": [
                    {"type": "string", "minLength": 1},
                    {"type": "object", "additionalProperties": False, "required": ["path"],
                     "properties": {"path": {"type": "string", "minLength": 1},
                                    "tools": {"type": "array", "items": {"enum": TOOL_NAMES}}}},
                ]
            },
        },
        "memory": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "embedding_model": {"type": "string", "minLength": 1},
                "unload_after": {"type": "number", "minimum": 0},
                "chunk_chars": {"type": "integer", "minimum": 200, "maximum": 20000},
            },
        },
    },
}

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
        "approval": {"enum": ["none", "required"]},
        "tools": {"type": "array", "items": {"enum": TOOL_NAMES}},
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
        "behaviour": {"enum": ["autonomous", "semi-autonomous", "reactive", "scheduled"]},
        "description": {"type": "string"},
        "max_iterations": {"type": "integer", "minimum": 1, "maximum": 50},
        "timeout": DURATION,
        # Obsidian properties a person may add to any note; harmless here.
        "tags": {"type": ["array", "string", "null"]},
        "aliases": {"type": ["array", "string", "null"]},
        "cssclasses": {"type": ["array", "string", "null"]},
    },
}

STEP = {
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
            "properties": {"query": {"type": "string"}, "k": {"type": "integer", "minimum": 1}},
        },
        "write": WRITE_TARGET,
        # issue 15: the knowledge graph's typed links around a note, in the step's context
        "graph": {
            "type": "object",
            "additionalProperties": False,
            "required": ["around"],
            "properties": {"around": {"type": "string", "minLength": 1},
                           "depth": {"type": "integer", "minimum": 1, "maximum": 3}},
        },
    },
}

SCHEDULE = {
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
                    "description": {"type": "string"},
                    "cron": {"type": "string"},
                    "missed": {"enum": ["catch-up", "skip"]},
                    "grace": DURATION,
                    "enabled": {"type": "boolean"},
                    "retry": {
                        "type": "object",
                        "additionalProperties": False,
                        "description": "retry a step that failed for a passing reason (Ollama away or busy, "
                                       "a timeout): `attempts` in all (default 1, no retry), waiting `backoff` "
                                       "(default 30s) before the second, doubling after",
                        "properties": {"attempts": {"type": "integer", "minimum": 1, "maximum": 10},
                                       "backoff": DURATION},
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
                    "debounce": DURATION,
                    "write": WRITE_TARGET,
                },
            },
        },
    },
}
