"""Turn JSON Schema errors into located, human sentences (every error, not the first)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from routine.config.schema import Schema
from routine.config.yamlfile import LocatedYaml, PathKey, format_path
from routine.errors import Problem
from routine.vault.targets import WriteTarget

if TYPE_CHECKING:
    from jsonschema import ValidationError


def _sentence(error: ValidationError) -> str:
    v = error.validator
    if v == "required":
        return f"missing required key {error.message.split(' is a required')[0]}."
    if v == "enum":
        return f"{error.instance!r} is not one of {', '.join(map(repr, error.validator_value))}."
    if v == "type":
        want = error.validator_value
        want = " or ".join(want) if isinstance(want, list) else want
        return f"expected {want}, got {type(error.instance).__name__} {error.instance!r}."
    if v == "pattern" and "(s|m|h|d)" in error.validator_value:
        return f"{error.instance!r} is not a duration; write e.g. 90s, 10m, 2h or 1d."
    if v == "pattern":
        return f"{error.instance!r} has the wrong form (expected {error.validator_value})."
    if v == "oneOf" and isinstance(error.instance, dict) and set(WriteTarget.DESTS) & set(error.instance):
        return f"a write target takes exactly one of {' or '.join(repr(k) for k in WriteTarget.DESTS)}."
    if v in ("oneOf", "not") and isinstance(error.instance, dict):
        return f"a write target is {WriteTarget.FORMS}."
    if v == "anyOf" and error.context:  # `all` or a list, a duration or `off`: what is wrong in the likeliest form
        return _sentence(min(error.context, key=lambda e: (-len(e.absolute_path), e.validator == "type")))
    if v == "propertyNames":
        return f"{error.instance!r} is not a valid name: use lower-case letters, digits, '-' or '_'."
    message: str = error.message
    return message[0].lower() + message[1:] + ("" if message.endswith(".") else ".")


def schema_problems(doc: LocatedYaml, schema: Schema, base_path: PathKey = ()) -> list[Problem]:
    # Imported here: jsonschema costs ~100 ms and listing commands never validate.
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema)
    problems = []
    for error in sorted(validator.iter_errors(doc.data), key=lambda e: list(map(str, e.absolute_path))):
        path = base_path + tuple(error.absolute_path)
        if error.validator == "propertyNames":
            path = path + (error.instance,)
        if error.validator == "additionalProperties" and isinstance(error.instance, dict):
            # One problem per unknown key, on the key's own line: that is the line to fix.
            known = ", ".join(sorted(error.schema.get("properties", {})))
            for extra in sorted(set(error.instance) - set(error.schema.get("properties", {})), key=str):
                problems.append(Problem(doc.file, doc.line(path + (extra,)), format_path(path),
                                        f"unknown key {extra!r} (known keys: {known})."))
            continue
        problems.append(doc.problem(path, _sentence(error)))
    return sorted(problems, key=lambda p: (p.line or 0))
