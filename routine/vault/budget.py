"""What extracting facts from one note may cost: the work per change is bounded by the change,
not by the note (issue 46). A note pasted with 10,000 links, or a million lines, gives the graph,
the index's link metadata and the task reader at most these; the rest is left out and said once
in the log per note and size (a saved note that grows again is said again).

- ``MAX_LINKS``: links taken from one note (the graph's `links_to` edges, the index's `links`
  metadata of its chunks);
- ``MAX_LINES`` and ``MAX_BYTES``: how much of a note the graph's extraction reads (its
  properties, tasks, OKR headings and links come from the first part).
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict

log = logging.getLogger(__name__)

MAX_LINKS = 2_000
MAX_LINES = 20_000
MAX_BYTES = 1 << 20  # characters, in fact: a note is read as text
_REMEMBERED = 512  # cuts remembered, so each is said once (the oldest forgotten first)
_said: OrderedDict[tuple[str, str, int], None] = OrderedDict()
_lock = threading.Lock()


def links(rel: str, found: list[str], reader: str) -> list[str]:
    """``found`` (a note's links, in order) cut to ``MAX_LINKS``."""
    if len(found) <= MAX_LINKS:
        return found
    _say(rel, reader, len(found), f"{len(found)} links: {reader} takes the first {MAX_LINKS}")
    return found[:MAX_LINKS]


def text(rel: str, body: str, reader: str) -> str:
    """``body`` cut to its first ``MAX_LINES`` lines and ``MAX_BYTES`` characters (at a line's end
    where the first part has one)."""
    if len(body) <= MAX_BYTES and body.count("\n") < MAX_LINES:
        return body
    cut = body[:MAX_BYTES]
    parts = cut.split("\n", MAX_LINES)
    if len(parts) > MAX_LINES:
        cut = "\n".join(parts[:MAX_LINES]) + "\n"
    elif cut.rfind("\n") > len(cut) // 2:  # at a line's end, unless that leaves out half (one long line)
        cut = cut[:cut.rfind("\n") + 1]
    _say(rel, reader, len(body), f"{len(body)} characters in {body.count(chr(10)) + 1} lines: {reader} reads "
                                 f"the first {len(cut)} characters, {MAX_LINES} lines or {MAX_BYTES >> 20} MiB at most")
    return cut


def _say(rel: str, reader: str, size: int, what: str) -> None:
    key = (rel, reader, size)
    with _lock:
        if key in _said:
            return
        _said[key] = None
        while len(_said) > _REMEMBERED:
            _said.popitem(last=False)
    log.warning("%s is larger than routine reads at once (%s); the rest is left out; split the note", rel, what)
