"""Reading YAML while remembering where each value came from.

Validation errors must name file, line and YAML path (``At 'blocks.morning.steps[1].write'``),
so we compose the node tree once and keep a map from path to line next to the plain data.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeAlias

import yaml

from routine.errors import Problem, RoutineError
from routine.vault.files import CONFIG_MAX_BYTES, read_regular, shown

PathKey: TypeAlias = tuple[str | int, ...]  # a YAML path: ("blocks", "morning", "steps", 1, "write")


def format_path(path: PathKey) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


@dataclass
class LocatedYaml:
    """Parsed YAML data plus the line of every mapping key and sequence item."""

    file: str
    data: object
    lines: dict[PathKey, int] = field(default_factory=dict)
    line_offset: int = 0

    def line(self, path: PathKey) -> int | None:
        # Walk up until some ancestor has a known line: a missing key is reported at its parent.
        path = tuple(path)
        while path:
            if path in self.lines:
                return self.lines[path] + self.line_offset
            path = path[:-1]
        return self.lines.get((), 0) + self.line_offset if self.lines else None

    def problem(self, path: PathKey, message: str) -> Problem:
        return Problem(self.file, self.line(path), format_path(path), message)


def _index(node: yaml.Node, path: PathKey, lines: dict[PathKey, int], file: str = "", line_offset: int = 0) -> None:
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = key_node.value
            if path + (key,) in lines and isinstance(key, str) and key != "<<":
                # YAML would keep only the last one and silently drop the other.
                raise YamlSyntaxError(
                    Problem(
                        file,
                        key_node.start_mark.line + 1 + line_offset,
                        format_path(path + (key,)),
                        f"{key!r} appears twice (first on line {lines[path + (key,)] + line_offset}); "
                        "the first would be silently dropped: rename or remove one.",
                    )
                )
            lines[path + (key,)] = key_node.start_mark.line + 1
            _index(value_node, path + (key,), lines, file, line_offset)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            lines[path + (i,)] = item.start_mark.line + 1
            _index(item, path + (i,), lines, file, line_offset)


MAX_NODES = 100_000  # values after expanding &anchors and *aliases: a YAML "billion laughs" stops here


def _expanded_size(node: yaml.Node, memo: dict[int, int], active: set[int]) -> int:
    """How many values ``node`` stands for once every alias is expanded (linear in distinct nodes)."""
    key = id(node)
    if key in memo:
        return memo[key]
    if key in active:
        raise _TooBig("an alias refers to itself (a recursive &anchor)")
    active.add(key)
    children = []
    if isinstance(node, yaml.MappingNode):
        children = [n for pair in node.value for n in pair]
    elif isinstance(node, yaml.SequenceNode):
        children = node.value
    size = 1
    for child in children:
        size += _expanded_size(child, memo, active)
        if size > MAX_NODES:
            raise _TooBig(f"it expands to more than {MAX_NODES:,} values (an &anchor repeated through *aliases)")
    active.discard(key)
    memo[key] = size
    return size


class _TooBig(Exception):
    pass


def _bad_date_line(node: yaml.Node) -> int | None:
    """The 1-based line of the first scalar tagged a timestamp that does not construct."""
    import datetime

    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, yaml.ScalarNode):
            if current.tag.endswith(":timestamp"):
                try:
                    datetime.date.fromisoformat(current.value[:10])
                except ValueError:
                    line: int = current.start_mark.line
                    return line + 1
        elif isinstance(current, yaml.SequenceNode):
            stack.extend(reversed(current.value))
        elif isinstance(current, yaml.MappingNode):
            stack.extend(v for pair in reversed(current.value) for v in reversed(pair))
    return None


def parse_yaml(text: str, file: str, line_offset: int = 0) -> LocatedYaml:
    """Parse YAML text. A syntax error raises ``YamlSyntaxError`` carrying a located Problem."""
    try:
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)  # libyaml when installed: ~10x faster
        try:
            node = loader.get_single_node()
            if node is not None:
                _expanded_size(node, {}, set())
            data = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except _TooBig as exc:
        raise YamlSyntaxError(Problem(file, 1 + line_offset, "", f"refused: {exc}; write the values out "
                                                                  "or use fewer aliases.")) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 + line_offset if mark else None
        what = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise YamlSyntaxError(Problem(file, line, "", f"YAML syntax error: {what}.")) from None
    except RecursionError:
        raise YamlSyntaxError(Problem(file, 1 + line_offset, "", "refused: the YAML is nested too deeply.")) from None
    except ValueError as exc:  # a scalar YAML reads as a date that is none (2026-13-40)
        line = _bad_date_line(node) if node is not None else None
        raise YamlSyntaxError(Problem(file, line + line_offset if line else None, "",
                                      f"{exc} in a date; write a real date (2026-12-24), or quote the text.")) from None
    lines: dict[PathKey, int] = {}
    if node is not None:
        _index(node, (), lines, file, line_offset)
    return LocatedYaml(file=file, data=data, lines=lines, line_offset=line_offset)


def load_yaml(path: Path) -> LocatedYaml:
    """A config file: a regular file of at most CONFIG_MAX_BYTES of UTF-8, else a located problem."""
    name = shown(path)
    try:
        raw = read_regular(path, CONFIG_MAX_BYTES, label="this path")
    except RoutineError as exc:
        raise YamlSyntaxError(Problem(name, None, "", str(exc))) from None
    except OSError as exc:
        raise YamlSyntaxError(Problem(name, None, "", f"cannot be read ({exc.strerror}).")) from None
    try:
        text = raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        raise YamlSyntaxError(Problem(name, line, "", f"byte 0x{raw[exc.start]:02x} is not UTF-8 text; "
                                                      "save the file as UTF-8 (é, not a Latin-1 byte).")) from None
    return parse_yaml(text, name)


class YamlSyntaxError(Exception):
    def __init__(self, problem: Problem):
        super().__init__(str(problem))
        self.problem = problem
