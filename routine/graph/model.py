"""The graph's vocabulary: node and edge types, and what one note contributes (its facts)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from routine.jsonvalue import JSONObject, Parsed


class NodeType(str, Enum):
    PROJECT = "project"
    PERSON = "person"
    AGENT = "agent"
    ARTIFACT = "artifact"
    TASK = "task"
    OKRS = "okrs"
    OBJECTIVE = "objective"
    KEY_RESULT = "key_result"
    DAILY = "daily"
    WEEKLY = "weekly"
    DECISION = "decision"
    CHAT = "chat"
    NOTE = "note"

    @classmethod
    def of(cls, value: str | None) -> NodeType | None:
        try:
            return cls(str(value).strip().lower().replace("-", "_").replace(" ", "_")) if value else None
        except ValueError:
            return None


class EdgeType(str, Enum):
    MANAGER = "manager"
    MEMBERS = "members"
    OWNER = "owner"
    SHARED_WITH = "shared_with"
    DERIVED_FROM = "derived_from"
    GROUNDING = "grounding"
    SOURCES = "sources"
    KEY_RESULTS = "key_results"
    ASSIGNED_TO = "assigned_to"
    RESULT = "result"
    HAS_TASK = "has_task"   # a note → a task line in it
    PART_OF = "part_of"     # an objective or key result → its OKRs note; a key result → its objective
    LINKS_TO = "links_to"   # a body link
    READ = "read"           # from the run journal: an agent → a note in its context
    WROTE = "wrote"         # from the run journal: an agent → the note it wrote
    PROPERTY = "property"   # a link in any other property (the property's name is the edge's label)


@dataclass(frozen=True)
class NodeFact:
    id: str          # the note's vault path, or "<path>#task-N" / "<path>#<heading>" inside it
    type: NodeType
    label: str
    attrs: dict[str, str] = field(default_factory=dict)  # artifact_type, status, done, text, line…


@dataclass(frozen=True)
class EdgeFact:
    source: str      # a node id of this note
    target: str      # a wikilink target as written ("Builder", "OKRs#KR 1.1"), resolved when linked
    type: EdgeType
    label: str       # the property's name or the edge type's value


@dataclass
class NoteFacts:
    """Everything one note puts in the graph: its own node, its task and heading nodes, and the
    links out of them, unresolved. Re-reading one note replaces exactly this."""

    rel: str
    nodes: list[NodeFact]
    edges: list[EdgeFact]

    def to_dict(self) -> JSONObject:
        return {"rel": self.rel,
                "nodes": [{"id": n.id, "type": n.type.value, "label": n.label, "attrs": n.attrs} for n in self.nodes],
                "edges": [{"source": e.source, "target": e.target, "type": e.type.value, "label": e.label}
                          for e in self.edges]}

    @classmethod
    def from_dict(cls, d: Parsed) -> NoteFacts:  # a to_dict, as read from the graph's cache
        return cls(d["rel"], [NodeFact(n["id"], NodeType(n["type"]), n["label"], n.get("attrs") or {})
                              for n in d["nodes"]],
                   [EdgeFact(e["source"], e["target"], EdgeType(e["type"]), e["label"]) for e in d["edges"]])
