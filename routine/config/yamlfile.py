"""Reading YAML while remembering where each value came from.

Validation errors must name file, line and YAML path (``At 'blocks.morning.steps[1].write'``),
so we compose the node tree once and keep a map from path to line next to the plain data.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

from routine.errors import Problem

PathKey = tuple  # a YAML path: ("blocks", "morning", "steps", 1, "write")


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
    lines: dict = field(default_factory=dict)
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


def _index(node: yaml.Node, path: PathKey, lines: dict) -> None:
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = key_node.value
            lines[path + (key,)] = key_node.start_mark.line + 1
            _index(value_node, path + (key,), lines)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            lines[path + (i,)] = item.start_mark.line + 1
            _index(item, path + (i,), lines)


def parse_yaml(text: str, file: str, line_offset: int = 0) -> LocatedYaml:
    """Parse YAML text. A syntax error raises ``YamlSyntaxError`` carrying a located Problem."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text) if node is not None else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 + line_offset if mark else None
        what = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise YamlSyntaxError(Problem(file, line, "", f"YAML syntax error: {what}.")) from None
    lines: dict = {}
    if node is not None:
        _index(node, (), lines)
    return LocatedYaml(file=file, data=data, lines=lines, line_offset=line_offset)


def load_yaml(path: Path) -> LocatedYaml:
    return parse_yaml(path.read_text(encoding="utf-8"), str(path))


class YamlSyntaxError(Exception):
    def __init__(self, problem: Problem):
        super().__init__(str(problem))
        self.problem = problem
