"""The schema of agent notes and schedule files (``AGENT``, ``STEP``, ``SCHEDULE``, its ``BLOCK``
and ``TRIGGER``); routine.yaml's, and the shapes and helpers both use, are in ``schema.py``.
"""

from __future__ import annotations

from routine.config.behaviours import NAMES as BEHAVIOURS
from routine.config.schema import AGENT_TOOL, DURATION, GLOBS, WRITE_TARGET, Schema

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
        "tools": {"type": "array", "items": AGENT_TOOL},
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
        # Notes outside every project holding tasks assigned to it (`routine agent assign --task`).
        "tasks": {"type": "array", "items": {"type": "string"},
                  "description": "notes outside Projects/ with task lines assigned to this agent "
                                 "(`[assignee:: [[Name]]]`), as wikilinks; `routine agent assign --task` adds them"},
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

STEP: Schema = {
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
        # issue 40: advice that becomes a change (routine/runner/advice.py)
        "advice": {"type": "boolean", "default": False,
                   "description": "the reply may end with fenced `change` blocks (an agent, why, and a rule to "
                                  "`add:` or its whole new `instructions:`); each is tried on the agent's runs "
                                  "in the trials window and proposed only when it did better"},
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

SCHEDULE: Schema = {
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
                "required": ["steps"],
                "properties": {
                    "description": {"type": "string", "default": "",
                                    "description": "a line for `schedule list` and the dashboard"},
                    "cron": {"type": "string", "description": "when the block fires, five cron fields "
                                                              "(or `after:` instead)"},
                    "after": {
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["block"],
                        "description": "run this block each time another block's run ends well (or, with "
                                       "`step`, each time that step of it wrote), seeing that step's output as "
                                       "{{ steps.STEP.output }}: a review chained to the work it reviews",
                        "properties": {"block": {"type": "string"}, "step": {"type": "string"}},
                    },
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
                "required": ["on"],
                # A note's change (`path`, an `agent`), or an outside event (`event`, an `agent` or a `block`).
                "if": {"properties": {"on": {"const": "event"}}},
                "then": {"required": ["event"]},
                "else": {"required": ["path", "agent"]},
                "properties": {
                    "on": {"enum": ["created", "modified", "deleted", "moved", "event"]},
                    "path": {"type": "string"},
                    "event": {"type": "string", "pattern": r"^[a-z0-9][a-z0-9_.-]*$",
                              "description": "with `\"on\": event`: the name `routine trigger NAME` fires"},
                    "block": {"type": "string", "description": "with `\"on\": event`: a block of the schedule to "
                                                              "run instead of one agent"},
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
