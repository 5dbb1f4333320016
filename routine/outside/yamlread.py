"""The one YAML reader: every YAML routine parses (config, schedules, agent notes, a note's
properties, a model's change block, a proposal's values) is read here, under a budget.

PyYAML builds whatever the text asks for: 446 bytes of ``&anchors`` repeated through ``*aliases``
("billion laughs") stand for hundreds of millions of values. So the text is first measured (its
bytes), then composed into a node tree (libyaml: flat in memory, it shares an aliased node), and
that tree is measured as it would be built — values, characters the aliases add, nesting — before
a single Python object is made. Past a budget is one sentence with the fix, naming where
(``OutsideTextRefused``, with its ``Problem``); a syntax error too. ``tests/test_outside.py``
fails when a loader of PyYAML is called anywhere else in routine.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

import yaml

from routine.errors import OutsideTextRefused, Problem

# libyaml where PyYAML has it: the same safe types, ~10x faster, and its scanner stops nesting at 1000.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class YamlBudget:
    """What one kind of YAML may cost. ``what`` names it in a sentence ("a note's properties")."""

    what: str
    max_bytes: int
    max_values: int = 100_000       # values after expanding every alias
    max_added_chars: int = 1 << 20  # characters the aliases add to those the text itself holds
    max_depth: int = 100            # collections inside collections


# routine.yaml, a schedule file, an agent note's YAML (vault/files.CONFIG_MAX_BYTES is this one)
CONFIG = YamlBudget("a config file", max_bytes=2 << 20)
# a note's properties: read for every note (graph, context, chat), so small, and aliases add little
PROPERTIES = YamlBudget("a note's properties", max_bytes=256 << 10, max_values=10_000, max_added_chars=16 << 10,
                        max_depth=50)
# a model's fenced `change` block, a proposal's values: a few lines
REPLY = YamlBudget("a change block", max_bytes=64 << 10, max_values=10_000, max_added_chars=16 << 10, max_depth=50)


UNMEASURED = 1024  # characters of a text without an &anchor that need no measuring (see _plainly_small)


@dataclass(frozen=True)
class YamlRead:
    """The data, and the node tree it was built from (for the lines of its keys), None when empty."""

    data: object
    node: yaml.Node | None


class _OverBudget(Exception):
    pass


def read_yaml(text: str, where: str, budget: YamlBudget, line_offset: int = 0) -> YamlRead:
    """Parse ``text`` (from ``where``: a file name or a description) within ``budget``; raises
    ``OutsideTextRefused`` with a located problem (line numbers shifted by ``line_offset``)."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > budget.max_bytes:
        raise _refused(where, None, f"refused: {budget.what} of {size:,} bytes is over the {budget.max_bytes:,} "
                                    "it may hold", "make it smaller (split it, or move the long text into a note).")
    node: yaml.Node | None = None
    try:
        loader = _LOADER(text)
        try:
            node = loader.get_single_node()
            if node is not None and not _plainly_small(text, budget):
                _measure(node, budget, len(text))
            data = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except _OverBudget as exc:
        raise _refused(where, 1 + line_offset, f"refused: {exc}",
                       "write the values out, or use fewer aliases and less nesting.") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        what = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise _refused(where, mark.line + 1 + line_offset if mark else None, f"YAML syntax error: {what}",
                       "correct the YAML at that line (quote a value holding ': ' or '#').") from None
    except RecursionError:
        raise _refused(where, 1 + line_offset, "refused: the YAML is nested too deeply",
                       "use less nesting.") from None
    except (ValueError, OverflowError) as exc:  # a date that is none (2026-13-40), an integer of 5,000 digits
        line = _bad_date_line(node) if node is not None else None
        if line is not None:
            raise _refused(where, line + line_offset, f"{exc} in a date",
                           "write a real date (2026-12-24), or quote the text.") from None
        why = "a number has more than 4,300 digits" if "digits" in str(exc) else str(exc).split(";")[0][:120]
        raise _refused(where, None, f"a value cannot be read ({why})", "quote it to keep it as text.") from None
    return YamlRead(data, node)


def load_yaml(text: str, where: str, budget: YamlBudget) -> object:
    """Only the data of ``read_yaml``."""
    return read_yaml(text, where, budget).data


def _refused(where: str, line: int | None, message: str, fix: str) -> OutsideTextRefused:
    """One sentence, the fix in it: a Problem is shown as it is, wherever it is listed."""
    return OutsideTextRefused(Problem(where, line, "", f"{message.rstrip('.')}; {fix.rstrip('.')}."))


def _plainly_small(text: str, budget: YamlBudget) -> bool:
    """True when ``text`` is within ``budget`` without measuring its tree (a note's properties, most
    often; measuring costs each a third more): nothing expands without an &anchor, a short text has
    fewer values than characters, and each level of nesting needs a `[`, `{`, `- ` or `:`."""
    return (len(text) <= UNMEASURED and "&" not in text
            and text.count("[") + text.count("{") + text.count("- ") + text.count(":") <= budget.max_depth)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [child for pair in node.value for child in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _measure(root: yaml.Node, budget: YamlBudget, text_chars: int) -> None:
    """Raise ``_OverBudget`` when ``root`` built would hold too many values, characters or levels.
    Linear in the distinct nodes (an aliased node is measured once), and no recursion."""
    memo: dict[int, tuple[int, int, int]] = {}  # id(node) -> (values, characters, depth), aliases expanded
    active: set[int] = set()  # nodes being measured: one met again below itself is a recursive anchor
    max_chars = text_chars + budget.max_added_chars
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if not done:
            if key in memo:
                continue
            if key in active:
                raise _OverBudget("an alias refers to itself (a recursive &anchor)")
            active.add(key)
            stack.append((node, True))
            stack.extend((child, False) for child in _children(node) if id(child) not in memo)
            continue
        values, chars, depth = 1, len(node.value) if isinstance(node, yaml.ScalarNode) else 0, 0
        for child in _children(node):
            c_values, c_chars, c_depth = memo[id(child)]
            values, chars, depth = values + c_values, chars + c_chars, max(depth, c_depth)
        depth += 1
        if values > budget.max_values:
            raise _OverBudget(f"it expands to more than {budget.max_values:,} values (an &anchor repeated "
                              "through *aliases)")
        if chars > max_chars:
            raise _OverBudget(f"its *aliases repeat its text to more than {max_chars:,} characters")
        if depth > budget.max_depth:
            raise _OverBudget(f"it is nested more than {budget.max_depth} levels deep")
        active.discard(key)
        memo[key] = (values, chars, depth)


def _bad_date_line(node: yaml.Node) -> int | None:
    """The 1-based line of the first scalar tagged a timestamp that does not construct."""
    stack = [node]
    seen: set[int] = set()
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, yaml.ScalarNode):
            if current.tag.endswith(":timestamp"):
                try:
                    datetime.date.fromisoformat(current.value[:10])
                except ValueError:
                    line: int = current.start_mark.line
                    return line + 1
        else:
            stack.extend(reversed(_children(current)))
    return None
