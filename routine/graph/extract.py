"""One note → its facts: its type, its task lines, its OKR headings and every link out, typed by
where the link stands (pure: text in, ``NoteFacts`` out; nothing is resolved here).

Types follow the shared vault conventions: an agent as ``config.loader.is_agent_note`` declares
(nothing else is one), an artifact as ``projects.artifacts`` decides
(``type: intellectual`` or ``type: artifact``; its kind is the node's ``artifact_type``), the
``type:`` property where present, else the
folder (``People/`` person, ``Daily/`` daily, ``Weekly/`` weekly,
``Projects/<Name>/<Name>.md`` project, ``Plans/OKRs.md`` okrs, ``Chats/`` or a ``chat:``
property chat). A link in a property is an edge named after the property; a task's
``[assignee:: [[X]]]`` is ``assigned_to`` and ``[result:: [[Y]]]`` is ``result``; any other
body link is ``links_to`` (at most ``vault.budget.MAX_LINKS`` of them, from the note's first
``MAX_LINES`` lines and ``MAX_BYTES``: a pasted note of 100,000 links costs what 2,000 do). Task
lines are the person's, read by ``routine.projects.tasks`` (a checkbox in routine's generated
sections or notes is a copy, ``routine.vault.provenance``).
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from routine.config.loader import is_agent_note
from routine.graph.model import EdgeFact, EdgeType, NodeFact, NodeType, NoteFacts
from routine.jsonvalue import Parsed
from routine.projects.artifacts import artifact_type_of
from routine.projects.model import AGENTS
from routine.projects.tasks import TaskState, parse_line
from routine.vault import budget
from routine.vault.frontmatter import parse_frontmatter
from routine.vault.notes import hidden_ranges, in_ranges, link_targets, wikilinks
from routine.vault.okrs import OkrKind, okr_items
from routine.vault.provenance import is_routines_note, person_text

_FOLDER_TYPES = {"People": NodeType.PERSON, "Daily": NodeType.DAILY,
                 "Weekly": NodeType.WEEKLY, "Chats": NodeType.CHAT}
_PROPERTY_EDGES = {e.value: e for e in (EdgeType.MANAGER, EdgeType.MEMBERS, EdgeType.OWNER, EdgeType.SHARED_WITH,
                                        EdgeType.DERIVED_FROM, EdgeType.GROUNDING, EdgeType.SOURCES,
                                        EdgeType.KEY_RESULTS, EdgeType.RESULT)}
_OKR_NODES = {OkrKind.OBJECTIVE: NodeType.OBJECTIVE, OkrKind.KEY_RESULT: NodeType.KEY_RESULT}
_NODE_ATTRS = ("status", "qa", "goal", "role", "behaviour", "agent")
_FIELD_LINKS = re.compile(r"([A-Za-z_][\w-]*)::[ \t]*((?:!?\[\[[^\[\]\n]+\]\][ \t,]*)+)")


def note_type(rel: str, properties: Parsed) -> NodeType:
    if artifact_type_of(properties) is not None:
        return NodeType.ARTIFACT
    if is_agent_note(rel, properties, AGENTS):  # the one declaration; an agent's own folder holds no agents
        return NodeType.AGENT
    declared = NodeType.of(properties.get("type")) if isinstance(properties.get("type"), str) else None
    if declared is not None and declared is not NodeType.AGENT:
        return declared
    parts = PurePosixPath(rel).parts
    stem = PurePosixPath(rel).stem
    if len(parts) == 3 and parts[0] == "Projects" and parts[1] == stem:
        return NodeType.PROJECT
    if rel == "Plans/OKRs.md":
        return NodeType.OKRS
    if properties.get("chat"):
        return NodeType.CHAT
    return _FOLDER_TYPES.get(parts[0], NodeType.NOTE) if len(parts) > 1 else NodeType.NOTE


def _property_links(value: object) -> list[str]:
    if isinstance(value, list):
        return [t for item in value for t in _property_links(item)]
    if isinstance(value, str):
        return link_targets(value)
    return []


def extract(rel: str, text: str) -> NoteFacts:
    text = budget.text(rel, text, "the knowledge graph")
    split = parse_frontmatter(text.removeprefix("\ufeff").replace("\r\n", "\n"))
    props, body = split.data, split.body
    kind = note_type(rel, props)
    attrs = {
        k: str(props[k]) for k in _NODE_ATTRS if isinstance(props.get(k), (str, int, float)) and props.get(k) != ""
    }
    kind_of_artifact = artifact_type_of(props)  # the kind as the decider says, never `artifact_type:` as typed
    if kind_of_artifact is not None:
        attrs["artifact_type"] = kind_of_artifact.value
    if props.get("custom") is True:
        attrs["custom"] = "true"
    for scope in ("reads", "writes"):  # an agent's scopes, shown on its view
        if kind is NodeType.AGENT and isinstance(props.get(scope), list):
            attrs[scope] = ", ".join(str(g) for g in props[scope])
    nodes = [NodeFact(rel, kind, PurePosixPath(rel).stem, attrs)]
    edges: list[EdgeFact] = []
    for key, value in props.items():
        if key == "type":
            continue
        edge = _PROPERTY_EDGES.get(str(key), EdgeType.PROPERTY)
        edges += [EdgeFact(rel, target, edge, str(key)) for target in _property_links(value)]
    prose = body if is_routines_note(rel, props.get("tags")) else _tasks(rel, body, nodes, edges)
    if kind is NodeType.OKRS:
        _okr_headings(rel, body, nodes, edges)
    edges += [EdgeFact(rel, target, EdgeType.LINKS_TO, EdgeType.LINKS_TO.value)
              for target in budget.links(rel, wikilinks(prose), "the knowledge graph")]
    return NoteFacts(rel, nodes, _unique(edges))


def _tasks(rel: str, body: str, nodes: list[NodeFact], edges: list[EdgeFact]) -> str:
    """The person's task lines become task nodes with their own edges (a checkbox of routine's is a
    copy: ``routine.vault.provenance``); returns the body without them."""
    hidden = hidden_ranges(body)
    kept, last, count, start = [], 0, 0, 0
    for i, (line, theirs) in enumerate(zip(body.split("\n"), person_text(rel, body).split("\n"))):
        line_start, start = start, start + len(line) + 1
        task = None if in_ranges(line_start, hidden) else parse_line(rel, i, theirs)
        if task is None:
            continue
        count += 1
        task_id = f"{rel}#task-{count}"
        task_attrs = {"done": "true" if task.state is TaskState.DONE else "false", "text": task.text,
                      "line": str(i + 1)}
        if task.due:
            task_attrs["due"] = task.due
        nodes.append(NodeFact(task_id, NodeType.TASK, task.text[:80] or f"task {count}", task_attrs))
        edges.append(EdgeFact(rel, task_id, EdgeType.HAS_TASK, EdgeType.HAS_TASK.value))
        in_fields = set()
        for field_match in _FIELD_LINKS.finditer(line):
            name = field_match[1].lower()
            edge = EdgeType.ASSIGNED_TO if name == "assignee" else _PROPERTY_EDGES.get(name, EdgeType.PROPERTY)
            label_name = edge.value if edge is EdgeType.ASSIGNED_TO else name
            for target in link_targets(field_match[2]):
                in_fields.add(target)
                edges.append(EdgeFact(task_id, target, edge, label_name))
        edges += [EdgeFact(task_id, t, EdgeType.LINKS_TO, EdgeType.LINKS_TO.value)
                  for t in link_targets(line) if t not in in_fields]
        kept.append(body[last:line_start])
        last = line_start + len(line)
    kept.append(body[last:])
    return "".join(kept)


def _okr_headings(rel: str, body: str, nodes: list[NodeFact], edges: list[EdgeFact]) -> None:
    """Objectives and key results in the OKRs note as nodes, named so that ``[[OKRs#KR 1.1]]`` finds them."""
    note_link = rel.removesuffix(".md")
    for item in okr_items(body):
        node_id = f"{rel}#{item.name}"
        if any(n.id == node_id for n in nodes):
            continue
        parent = note_link if item.objective is None else f"{note_link}#{item.objective}"
        nodes.append(NodeFact(node_id, _OKR_NODES[item.kind], item.line[:80], {}))
        edges.append(EdgeFact(node_id, parent, EdgeType.PART_OF, EdgeType.PART_OF.value))


def _unique(edges: list[EdgeFact]) -> list[EdgeFact]:
    seen, out = set(), []
    for edge in edges:
        key = (edge.source, edge.target, edge.type, edge.label)
        if key not in seen:
            seen.add(key)
            out.append(edge)
    return out
