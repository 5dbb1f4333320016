"""YAML frontmatter (Obsidian "properties"): split, join, and edit without damage.

A person writes frontmatter by hand, with comments, their own quoting and their own key
order, and sometimes YAML that does not parse. Routine must add its provenance keys without
rewriting the rest, and must never drop a block it cannot read (principle 2). So editing
works line by line on the top-level keys it owns, and a block that does not parse is kept
verbatim and left alone.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

import yaml

from routine.errors import OutsideTextRefused
from routine.jsonvalue import JSONValue, Parsed
from routine.outside.yamlread import PROPERTIES, load_yaml

# The opening line must be exactly '---'; the closing one '---' (Obsidian does not take '...').
_OPENING = re.compile(r"---[ \t]*\r?\n")
_CLOSING = re.compile(r"^---[ \t]*\r?$", re.MULTILINE)
# A top-level mapping key at column 0: plain, or quoted. Not a list item, comment or '---'.
_TOP_KEY = re.compile(
    r"""^(?:"(?P<dq>[^"]*)"|'(?P<sq>[^']*)'|(?P<plain>[^\s#'"\-?:,\[\]{}&*!|>%@`][^:#]*?))[ \t]*:(?:[ \t\r\n]|$)"""
)


class _Dumper(yaml.SafeDumper):  # type: ignore[misc]  # PyYAML ships no types: its classes are Any
    """safe_dump, except an empty value is written as `key:` (Obsidian's empty property)."""


class FlowList(list[JSONValue]):
    """A list written on one line (`[a, b]`), as Obsidian writes a list property."""


class FlowMap(dict[str, JSONValue]):
    """A mapping written on one line (`{agent: x, run: y}`): routine's one bookkeeping property."""


_Dumper.add_representer(type(None), lambda dumper, _: dumper.represent_scalar("tag:yaml.org,2002:null", ""))
_Dumper.add_representer(FlowList, lambda dumper, v: dumper.represent_sequence("tag:yaml.org,2002:seq", v,
                                                                               flow_style=True))
_Dumper.add_representer(FlowMap, lambda dumper, v: dumper.represent_mapping("tag:yaml.org,2002:map", v,
                                                                            flow_style=True))


def dump_yaml(data: Mapping[str, object]) -> str:
    # A wide line: a flow list or a long value stays on its one line (a property is one line).
    text: str = yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, default_flow_style=False,
                          width=1 << 16)
    return text


@dataclass(frozen=True)
class FrontmatterSplit:
    """A note's text cut at the end of its frontmatter. ``block + body`` is the text itself."""

    data: Parsed = field(default_factory=dict)  # the parsed properties ({} if none or unreadable)
    body: str = ""                             # everything after the closing '---' line
    block: str = ""                            # the frontmatter verbatim, '---' lines included
    readable: bool = True                      # False: a block exists but is not a YAML mapping
    error: str | None = None                   # why it is unreadable, for the person


def parse_frontmatter(text: str) -> FrontmatterSplit:
    opening = _OPENING.match(text)
    if not opening:
        return FrontmatterSplit(body=text)
    closing = _CLOSING.search(text, opening.end())
    if not closing:  # no closing line: Obsidian shows it as text, and so do we
        return FrontmatterSplit(body=text)
    end = closing.end()
    if text.startswith("\n", end):
        end += 1
    block, body = text[:end], text[end:]
    inner = text[opening.end():closing.start()]
    try:  # the one bounded reader: 334 bytes of aliases are not 5.8 million characters of properties
        data = load_yaml(inner, "properties", PROPERTIES)
    except OutsideTextRefused as exc:
        return FrontmatterSplit(body=body, block=block, readable=False,
                                error=f"its frontmatter is not read: {exc.problem.message.rstrip('.')}")
    if data is None:
        data = {}
    if not isinstance(data, dict):
        return FrontmatterSplit(body=body, block=block, readable=False,
                                error="its frontmatter is not a list of properties")
    return FrontmatterSplit(data=data, body=body, block=block)


def split_frontmatter(text: str) -> tuple[Parsed, str]:
    """(properties, body). Unreadable frontmatter gives ({}, the whole text), so that
    ``join_frontmatter(*split_frontmatter(text))`` never loses a line of it."""
    split = parse_frontmatter(text)
    if not split.readable:
        return {}, text
    return split.data, split.body


def join_frontmatter(frontmatter: Mapping[str, object], body: str) -> str:
    if not frontmatter:
        return body
    return f"---\n{dump_yaml(frontmatter)}---\n{body}"


def _key_of(line: str) -> str | None:
    match = _TOP_KEY.match(line)
    if not match:
        return None
    return next(group for group in (match["dq"], match["sq"], match["plain"]) if group is not None).strip()


def _flow_depth(text: str, depth: int) -> int:
    """``depth`` (open ``{``/``[`` of a flow collection) after ``text``: brackets in quoted strings
    and in a comment do not count."""
    quote = None
    for i, ch in enumerate(text):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"" and (i == 0 or text[i - 1] in " \t[{,:"):
            quote = ch
        elif ch == "#" and (i == 0 or text[i - 1] in " \t"):
            break
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth = max(0, depth - 1)
    return depth


@dataclass
class _Item:
    key: str | None  # None: a comment or text before the first key
    text: str


def _chunks(inner: str) -> list[_Item]:
    """Cut YAML text into top-level items: [key or None, text]. Indented lines, list items
    and blank lines belong to the item above them (block scalars, lists under a key), and so do
    the lines of a flow map or list the item opened until it closes, indented or not."""
    chunks: list[_Item] = []
    depth = 0  # open brackets of the flow collection the last item's value began
    for line in inner.splitlines(keepends=True):
        if depth:
            chunks[-1].text += line
            depth = _flow_depth(line, depth)
            continue
        key = _key_of(line)
        if key is not None:
            value = line.split(":", 1)[1].lstrip() if not line.startswith(("'", '"')) else ""
            depth = _flow_depth(value, 0) if value.startswith(("{", "[")) else 0
        starts_item = key is not None or line.startswith("#") or not chunks
        if starts_item:
            chunks.append(_Item(key, line))
        else:
            chunks[-1].text += line
    return chunks


_ANCHOR = re.compile(r"[^:\n]*:[ \t]*(?P<anchor>&[^\s,\[\]{}]+)(?=\s)")  # `key: &name value`


def _replace_chunk(old: str, key: str, value: object, newline: str) -> str:
    text = dump_yaml({key: value})
    anchor = _ANCHOR.match(old)
    if anchor:  # the person's aliases (`copy: *r`) follow the value their anchor names
        head, _, rest = text.partition(":")
        text = f"{head}: {anchor['anchor']}{rest}"
    trailing_blank = old[len(old.rstrip("\r\n \t")):]
    # Keep the blank lines the person left after this item.
    extra = trailing_blank.count("\n") - 1
    new = text + (newline * extra if extra > 0 else "")
    return new.replace("\n", newline) if newline != "\n" else new


def update_frontmatter(split: FrontmatterSplit, updates: Mapping[str, object], remove: tuple[str, ...] = ()) -> str:
    """The frontmatter block with ``updates`` set and the keys in ``remove`` taken out,
    everything else byte-for-byte as it was.

    Keys already present are rewritten in place (keeping their position); new keys go at the
    end. An unreadable block is returned unchanged: routine never guesses at broken YAML.
    """
    if not split.readable:
        return split.block
    if not split.block:
        return join_frontmatter(updates, "") if updates else ""
    if not updates and not any(key in split.data for key in remove):
        return split.block
    first_end = split.block.index("\n") + 1
    newline = "\r\n" if split.block[:first_end].endswith("\r\n") else "\n"
    closing = _CLOSING.search(split.block, first_end)
    if closing is None:  # not a block parse_frontmatter cut: leave it as it is
        return split.block
    opening, inner, tail = (
        split.block[:first_end],
        split.block[first_end : closing.start()],
        split.block[closing.start() :],
    )
    chunks = [chunk for chunk in _chunks(inner) if chunk.key is None or chunk.key not in remove]
    pending = dict(updates)
    for chunk in chunks:
        if chunk.key is not None and chunk.key in pending:
            chunk.text = _replace_chunk(chunk.text, chunk.key, pending.pop(chunk.key), newline)
    new_inner = "".join(chunk.text for chunk in chunks)
    if new_inner and not new_inner.endswith("\n"):
        new_inner += newline
    for key, value in pending.items():
        added = dump_yaml({key: value})
        new_inner += added.replace("\n", newline) if newline != "\n" else added
    expected = {key: value for key, value in {**split.data, **updates}.items() if key not in remove}
    for key, value in updates.items():  # an alias of a value set follows it
        if key in split.data and _ANCHOR.match(next((c.text for c in chunks if c.key == key), "")):
            expected.update({k: value for k, v in split.data.items() if k != key and v == split.data[key]})
    try:
        verified = load_yaml(new_inner, "properties", PROPERTIES) == expected
    except OutsideTextRefused:
        verified = False
    if not verified:
        # Our line editing met YAML it does not understand (anchors, flow maps, duplicates):
        # write the whole mapping instead. Comments go, but no property is lost.
        new_inner = dump_yaml(expected)
        if newline != "\n":
            new_inner = new_inner.replace("\n", newline)
    return opening + new_inner + tail
