"""JSON as it crosses seams, named once.

``JSONValue`` is a value that is truly free-form (a run's details as journaled, a tool call's
arguments, a line on the control socket): anything ``json.dumps`` writes and ``json.loads`` gives back.
``Parsed`` is a mapping as it was read, before (or without) a typed record: a YAML document or a
note's properties (the schemas in routine/config say what it holds), a journal row with its JSON
columns decoded (journal/migrations.py says what it holds); its readers check each value they take."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeAlias

JSONScalar: TypeAlias = str | int | float | bool | None
# Sequence and Mapping (not list and dict): a list[str] or a dict[str, int] is JSON as it stands.
JSONValue: TypeAlias = JSONScalar | Sequence["JSONValue"] | Mapping[str, "JSONValue"]
JSONObject: TypeAlias = dict[str, JSONValue]

# Values as parsed: checked by a schema, read by key. Any here (and only here): a parsed document's
# values are whatever its author wrote, and each reader narrows the one it takes.
Parsed: TypeAlias = dict[str, Any]
