"""Outside events (`routine trigger NAME`): the triggers declared for one (`"on": event`, `event: NAME`)
and its payload, bounded and kept as data.

A payload is a JSON object of at most ``MAX_BYTES`` (as JSON), ``MAX_DEPTH`` levels and ``MAX_KEYS``
keys in all, checked where it is read (the command) and again where it is used (the daemon); a
larger one is refused with a sentence before anything runs. A step sees it as a value (the
template variable ``{{ payload }}`` and a piece of context "Event payload"), never as a template:
braces in it reach the model as written."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from routine.errors import PayloadProblem
from routine.jsonvalue import JSONObject, JSONValue
from routine.schedule.model import Trigger
from routine.vault.files import read_regular

MAX_BYTES = 64 * 1024  # the payload as JSON
MAX_DEPTH = 8  # objects and lists inside one another
MAX_KEYS = 500  # keys and list items in all
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}")
_FIX = "send less: the fields the step needs (a long text belongs in a note the step reads)."


@dataclass(frozen=True)
class Payload:
    data: JSONObject

    @property
    def text(self) -> str:
        """As the step sees it: indented JSON (empty for no payload)."""
        return json.dumps(self.data, ensure_ascii=False, indent=2) if self.data else ""


def from_inputs(pairs: Iterable[str]) -> JSONObject:
    """`--input KEY=VALUE …` as an object of strings."""
    out: JSONObject = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not _KEY.fullmatch(key.strip()):
            raise PayloadProblem(f"--input {pair!r} is not KEY=VALUE.",
                                 "write e.g. --input title='Door bell' (a key of letters, digits, _ . -).")
        out[key.strip()] = value
    return out


def from_file(path: str, stdin: bytes | None = None) -> JSONObject:
    """The payload in a JSON file (``-``: ``stdin``, already read up to one byte past the limit)."""
    if path == "-":
        raw = stdin or b""
        size = len(raw)
    else:
        try:
            size = os.stat(path).st_size
        except OSError as exc:
            raise PayloadProblem(f"The payload file {path} cannot be read: {exc.strerror}.",
                                 "give the path of a JSON file, or - for stdin.") from None
        raw = b""
    if size > MAX_BYTES:
        raise PayloadProblem(f"The payload {'on stdin' if path == '-' else path} is {_size(size)}; an event's payload "
                             f"may be at most {_size(MAX_BYTES)}.", _FIX)
    if path != "-":
        raw = read_regular(Path(path), MAX_BYTES)
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise PayloadProblem(f"The payload {path} is not JSON: {exc}.", "write one JSON object.") from None
    except RecursionError:
        raise PayloadProblem(f"The payload {path} nests deeper than {MAX_DEPTH} levels.", _FIX) from None
    if not isinstance(data, dict):
        raise PayloadProblem(f"The payload {path} is a JSON {type(data).__name__}, not an object.",
                             'write one object: {"key": "value", …}.')
    return data


def checked(data: object) -> Payload:
    """``data`` as a payload, or the sentence why not (its size, depth, keys, or not an object)."""
    if not isinstance(data, dict):
        raise PayloadProblem(f"An event's payload is a JSON object, not a {type(data).__name__}.",
                             'send one object: {"key": "value", …}.')
    keys = _count(data, 1)
    if keys > MAX_KEYS:
        raise PayloadProblem(f"The payload has {keys} keys and items; an event's may have at most {MAX_KEYS}.", _FIX)
    size = len(json.dumps(data, ensure_ascii=False).encode())
    if size > MAX_BYTES:
        raise PayloadProblem(f"The payload is {_size(size)}; an event's payload may be at most {_size(MAX_BYTES)}.",
                             _FIX)
    return Payload(data)


def _count(value: JSONValue | object, depth: int) -> int:
    """Keys and items in all, refusing what nests deeper than ``MAX_DEPTH``."""
    if depth > MAX_DEPTH:
        raise PayloadProblem(f"The payload nests deeper than {MAX_DEPTH} levels.", _FIX)
    if isinstance(value, dict):
        return sum(1 + _count(v, depth + 1) for v in value.values())
    if isinstance(value, list):
        return sum(1 + _count(v, depth + 1) for v in value)
    return 0


def _size(n: int) -> str:
    return f"{n / (1 << 20):.1f} MB" if n >= 1 << 20 else f"{n / 1024:.0f} KB"


def triggers_for(triggers: Iterable[Trigger], event: str) -> list[Trigger]:
    """The triggers declared for ``event``, in the schedules' order."""
    return [t for t in triggers if t.on == "event" and t.event == event]


def event_names(triggers: Iterable[Trigger]) -> list[str]:
    return sorted({t.event for t in triggers if t.on == "event" and t.event})
