"""Reading YAML while remembering where each value came from.

Validation errors must name file, line and YAML path (``At 'blocks.morning.steps[1].write'``),
so we compose the node tree once and keep a map from path to line next to the plain data. The
parsing itself, with its size and alias budget, is the one reader's (``routine/outside/yamlread.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeAlias

import yaml

from routine.errors import OutsideTextRefused, Problem, RoutineError
from routine.outside.yamlread import CONFIG, read_yaml
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


def parse_yaml(text: str, file: str, line_offset: int = 0) -> LocatedYaml:
    """Parse YAML text through the one bounded reader (``outside/yamlread.py``, its config budget).
    A syntax error or a budget passed raises ``YamlSyntaxError`` carrying a located Problem."""
    read = read_yaml(text, file, CONFIG, line_offset)
    lines: dict[PathKey, int] = {}
    if read.node is not None:
        _index(read.node, (), lines, file, line_offset)
    return LocatedYaml(file=file, data=read.data, lines=lines, line_offset=line_offset)


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


# A config file that does not parse, or is past its budget: the one reader's refusal, its Problem located.
YamlSyntaxError = OutsideTextRefused
