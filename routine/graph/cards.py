"""One graph node as a canvas card (pure): what it shows, how big it must be for that, its colour
and the layer its kind asks for; the legend of colours; which links carry a label.

A note is a file card (it opens the note); a task line or a key result is a text card naming the
note it is in. A card is as tall as its text needs (``legibility.text_height``), long task text
wrapped in a wider card.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import NotRequired, TypedDict

from routine.graph.legibility import CanvasNode, text_height, text_width
from routine.graph.model import EdgeType, NodeType

FILE_H, TEXT_W, FILE_W = 70, 340, 300
# Obsidian's preset colours: 1 red, 2 orange, 3 yellow, 4 green, 5 cyan, 6 purple.
COLORS = {NodeType.PROJECT: "6", NodeType.TASK: "4", NodeType.AGENT: "5", NodeType.PERSON: "3",
          NodeType.ARTIFACT: "2", NodeType.KEY_RESULT: "1", NodeType.OBJECTIVE: "1", NodeType.DECISION: "2"}
COLOR_NAMES = {"1": "red", "2": "orange", "3": "yellow", "4": "green", "5": "cyan", "6": "purple"}
LEGEND_NAMES = {NodeType.KEY_RESULT: "key result", NodeType.OKRS: "OKRs", NodeType.DECISION: "decision"}
# Top to bottom: the project, who works on it (and the notes holding its tasks), the tasks, what
# they make, what that derives from.
RANKS = {NodeType.PROJECT: 0, NodeType.OBJECTIVE: 0, NodeType.OKRS: 0, NodeType.KEY_RESULT: 1,
         NodeType.PERSON: 1, NodeType.AGENT: 1, NodeType.TASK: 2, NodeType.ARTIFACT: 3, NodeType.DECISION: 3}
OTHER_RANK, HOLDER_RANK = 4, 3
# Links whose colour and direction already say what they are (a task's arrow to a person is its
# assignee; a note's to a task holds it): drawn without a label.
UNLABELLED = {EdgeType.MEMBERS.value, EdgeType.HAS_TASK.value, EdgeType.ASSIGNED_TO.value,
              EdgeType.LINKS_TO.value, EdgeType.PART_OF.value, EdgeType.KEY_RESULTS.value}
EDGE_COLORS = {EdgeType.ASSIGNED_TO.value: "4", EdgeType.HAS_TASK.value: "4", EdgeType.RESULT.value: "4",
               EdgeType.MEMBERS.value: "6", EdgeType.MANAGER.value: "6", EdgeType.OWNER.value: "2",
               EdgeType.SHARED_WITH.value: "2", EdgeType.DERIVED_FROM.value: "2", EdgeType.KEY_RESULTS.value: "1",
               EdgeType.PART_OF.value: "1", EdgeType.GROUNDING.value: "5", EdgeType.READ.value: "5",
               EdgeType.WROTE.value: "5"}


class CardContent(TypedDict):
    """What a card shows: ``{"type": "file", "file": …}`` or ``{"type": "text", "text": …}``."""

    type: str
    file: NotRequired[str]
    text: NotRequired[str]


class EdgeStyle(TypedDict, total=False):
    label: str
    color: str


@dataclass(frozen=True)
class CardFace:
    content: CardContent
    width: int
    height: int
    kind: NodeType

    def node(self, node_id: str, x: int, y: int) -> CanvasNode:
        node = placed(node_id, self.content, x, y, self.width, self.height)
        if self.kind in COLORS:
            node["color"] = COLORS[self.kind]
        return node


def placed(node_id: str, content: CardContent, x: int, y: int, width: int, height: int) -> CanvasNode:
    """A card at its place: its id, what it shows, then where (the order Obsidian writes)."""
    if "file" in content:
        return {"id": node_id, "type": content["type"], "file": content["file"], "x": x, "y": y, "width": width,
                "height": height}
    if "text" in content:
        return {"id": node_id, "type": content["type"], "text": content["text"], "x": x, "y": y, "width": width,
                "height": height}
    return {"id": node_id, "type": content["type"], "x": x, "y": y, "width": width, "height": height}


def kind_of(data: Mapping[str, str]) -> NodeType:
    return NodeType.of(data.get("type")) or NodeType.NOTE


def rank(data: Mapping[str, str], holds_tasks: bool) -> int:
    kind = kind_of(data)
    if holds_tasks and kind not in RANKS:
        return HOLDER_RANK
    return RANKS.get(kind, OTHER_RANK)


def face(graph_id: str, data: Mapping[str, str]) -> CardFace:
    """A file card for a note, a text card for a task line or a key result inside one, sized to fit."""
    kind = kind_of(data)
    if "#" not in graph_id:
        name = graph_id.rsplit("/", 1)[-1].removesuffix(".md")
        return CardFace({"type": "file", "file": graph_id}, text_width(name, FILE_W, 200), FILE_H, kind)
    note = data.get("note", graph_id.split("#", 1)[0])
    link = f"[[{note.removesuffix('.md')}|{note.rsplit('/', 1)[-1].removesuffix('.md')}]]"
    if kind is NodeType.TASK:
        box = "x" if data.get("done") == "true" else " "
        due = f" 📅 {data['due']}" if data.get("due") else ""
        text = f"- [{box}] {data.get('text') or data.get('label')}{due}\n\nin {link}"
    else:
        text = f"**{data.get('label', graph_id)}**\n\nin {link}"
    return text_card(text, kind)


def text_card(text: str, kind: NodeType, widest: int = TEXT_W) -> CardFace:
    width = text_width(text, widest)
    height = -(-text_height(text, width) // 10) * 10  # up to a tidy ten
    return CardFace({"type": "text", "text": text}, width, height, kind)


def legend(kinds: list[NodeType]) -> list[tuple[str, CardFace]]:
    """What the colours mean: one small card per colour shown (and one for no colour), in that
    colour, naming the kinds it marks; each with the name its id is made from."""
    by_color: dict[str, list[NodeType]] = {}
    for kind in kinds:
        by_color.setdefault(COLORS.get(kind, ""), []).append(kind)
    return [(",".join(k.value for k in same), text_card(", ".join(map(_legend_name, same)),
                                                        same[0], 240)) for same in by_color.values()]


def _legend_name(kind: NodeType) -> str:
    return LEGEND_NAMES.get(kind, kind.value.replace("_", " "))


def edge_style(kind: str, label: str) -> EdgeStyle:
    """A link's colour and, where colour and direction do not say it, its label."""
    style = EdgeStyle() if kind in UNLABELLED else EdgeStyle(label=label)
    if kind in EDGE_COLORS:
        style["color"] = EDGE_COLORS[kind]
    return style
