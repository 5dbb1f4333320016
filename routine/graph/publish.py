"""Writing the views into the vault as canvases (``Routine/Graphs/*.canvas``).

A canvas is written only when its content changed, atomically through the vault layer (whose
own-write announcement keeps the vault watcher from taking it for the person's edit), and never
over a canvas without our header node (the person's). Where each of our nodes was last put is
kept in the state dir, so a node the person moved is told from one we laid out.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from routine import paths
from routine.atomicfile import replace_if_changed
from routine.graph import canvas, legibility
from routine.graph.graph import KnowledgeGraph, Touched
from routine.graph.model import NodeType
from routine.graph.views import View, ViewKind, agent_view, project_view, workspace_view
from routine.vault.atomic import NoteChanged, atomic_write
from routine.vault.presence import vault_problem

log = logging.getLogger(__name__)

GRAPHS_DIR = "Routine/Graphs"
WORKSPACE_LINKS = ("assigned_to", "manager", "members", "has_task")
HEADER = ("Made by routine from your notes and its run journal; refreshed when they change. Move or "
          "resize cards freely: they keep their place. The colours are in the legend on the left.")


def canvas_rel(kind: str, label: str) -> str:
    safe = "".join(ch for ch in label if ch not in '\\/:*?"<>|#^[]').strip() or "unnamed"
    return (
        f"{GRAPHS_DIR}/Workspace.canvas" if kind == ViewKind.WORKSPACE else f"{GRAPHS_DIR}/{kind.title()} {safe}.canvas"
    )


@dataclass(frozen=True)
class Canvas:
    """One canvas to keep: where it goes and which view it shows (the view is cut when needed)."""

    rel: str
    kind: str
    node: str | None  # the project or agent note; None for the workspace
    header: str

    def view(self, graph: KnowledgeGraph) -> View:
        if self.node is None:  # the workspace
            return workspace_view(graph)
        if self.kind == ViewKind.PROJECT:
            return project_view(graph, self.node)
        return agent_view(graph, self.node) if self.kind == ViewKind.AGENT else workspace_view(graph)

    def may_have_changed(self, graph: KnowledgeGraph, shown: set[str], touched: Touched) -> bool:
        """Could what changed alter this view? A node of it changed; a link between two of its
        nodes, or one that brings a node in (by the rules of its kind), came or went."""
        if shown & touched.nodes or any(u in shown and v in shown for u, v, _ in touched.edges):
            return True
        g = graph.g
        if self.kind == ViewKind.AGENT:
            return any(self.node in (u, v) for u, v, _ in touched.edges)
        if self.kind == ViewKind.PROJECT and self.node is not None:
            folder = self.node.rsplit("/", 1)[0] + "/"
            return (any(u in shown or v == self.node for u, v, _ in touched.edges)
                    or any(str(g.nodes[n]["note"] if n in g else n).startswith(folder) for n in touched.nodes))
        kinds = (NodeType.TASK.value, NodeType.PROJECT.value)  # the workspace: tasks and projects, and who does them
        return (any(t in WORKSPACE_LINKS and u in shown for u, _, t in touched.edges)
                or any(n in g and g.nodes[n].get("type") in kinds for n in touched.nodes))


def canvases(graph: KnowledgeGraph) -> list[Canvas]:
    """Every project, every agent, and the workspace (last: it may link to the project canvases)."""
    out = []
    with graph.lock:
        nodes = sorted(graph.g.nodes(data=True))
    for node, data in nodes:
        if data.get("type") == NodeType.PROJECT.value:
            out.append(Canvas(canvas_rel(ViewKind.PROJECT, data["label"]), ViewKind.PROJECT, node, HEADER))
        elif data.get("type") == NodeType.AGENT.value:
            scopes = "".join(f"\n**{k}:** {data[k]}" for k in ("reads", "writes") if data.get(k))
            out.append(Canvas(canvas_rel(ViewKind.AGENT, data["label"]), ViewKind.AGENT, node, HEADER + scopes))
    return [*out, Canvas(canvas_rel(ViewKind.WORKSPACE, ""), ViewKind.WORKSPACE, None, HEADER)]


class CanvasWriter:
    def __init__(self, vault: Path, registry: Path | None = None,
                 on_blocked: Callable[[str, str], None] | None = None):
        self.vault = Path(vault)
        self.on_blocked = on_blocked  # (canvas, sentence): once per canvas whose place is taken (an alert)
        self.registry_path = registry or paths.state_dir() / "graph-canvases.json"
        try:
            saved = self.registry_path.read_text(encoding="utf-8")
            self.registry: dict[str, dict[str, canvas.Placement]] = json.loads(saved)
        except (OSError, ValueError):
            self.registry = {}  # unknown: places on disk are all taken as the person's
        self.refused: set[str] = set()
        self._shown: dict[str, set[str]] = {}  # canvas -> the nodes its view had last time
        self._laid: dict[str, tuple[str, str]] = {}  # canvas -> (its view, the layout built for it), as JSON

    def refresh(self, graph: KnowledgeGraph) -> list[str]:
        """Write every canvas whose view changed since the last refresh; returns those written.
        Only views the changed nodes may touch are cut again (one note saved: a few views)."""
        if vault_problem(self.vault):  # an unmounted (missing or empty) vault: nothing is written into it
            return []
        touched = graph.take_touched()
        written = []
        for item in canvases(graph):
            shown = self._shown.get(item.rel)
            if shown is not None and touched is not None and not item.may_have_changed(graph, shown, touched):
                continue
            with graph.lock:
                view = item.view(graph)
                projects = {n: canvas_rel(ViewKind.PROJECT, d["label"]) for n, d in view.nodes.items()
                            if d.get("type") == NodeType.PROJECT.value}
            self._shown[item.rel] = set(view.nodes)
            if self.write(item.rel, self._existing(view), item.header, projects.__getitem__):
                written.append(item.rel)
        self._save_registry()
        return written

    def _existing(self, view: View) -> View:
        """The view without the notes no longer in the vault (a proposal routine moved to the archive
        itself, before the graph heard of it): no card points at a missing file."""
        gone = {n for n, d in view.nodes.items() if not (self.vault / str(d.get("note", n))).is_file()}
        if not gone:
            return view
        return View(view.kind, view.name, view.title, view.center,
                    {n: d for n, d in view.nodes.items() if n not in gone},
                    [e for e in view.edges if e[0] not in gone and e[1] not in gone])

    def write(self, rel: str, view: View, header: str = HEADER, canvas_of: canvas.CanvasOf | None = None) -> bool:
        path = self.vault / rel
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            raw = None
        except OSError as exc:  # a folder (or a file that cannot be read) where the canvas goes
            self._blocked(rel, exc)
            return False
        existing = None
        if raw is not None:
            try:
                existing = json.loads(raw.decode("utf-8"))
            except ValueError:
                existing = None
            if not isinstance(existing, dict) or not canvas.is_ours(existing):
                if rel not in self.refused:
                    log.warning("%s is a canvas of yours (no routine header node): the graph view is not written "
                                "there; rename yours to get routine's back.", rel)
                    self.refused.add(rel)
                return False
        doc = canvas.merge(self._layout(rel, view, header, canvas_of), existing,
                           self.registry.get(rel) if existing else {})
        moved = doc.pop("moved", [])
        wrong = canvas.problems(doc)
        if wrong:  # a bug of ours; never hand Obsidian a canvas it cannot open
            log.error("the canvas %s was not written: %s", rel, "; ".join(wrong[:3]))
            return False
        self.registry[rel] = canvas.placements(doc, moved)
        if existing == doc:
            return False
        try:
            atomic_write(path, json.dumps(doc, ensure_ascii=False) + "\n", expected=raw)  # no indent: C-fast
        except NoteChanged:  # Obsidian saved it just now: the next refresh merges that
            return False
        except OSError as exc:  # Routine/Graphs itself a file, a read-only folder
            self._blocked(rel, exc)
            return False
        self.refused.discard(rel)
        return True

    def _layout(self, rel: str, view: View, header: str, canvas_of: canvas.CanvasOf | None) -> legibility.Canvas:
        """``canvas.build`` for the view, laid out again only when the view changed: a run that
        touched a node of the view without changing what it shows (most runs) costs no layout."""
        projects = {n: canvas_of(n) for n, d in view.nodes.items()
                    if canvas_of is not None and d.get("type") == NodeType.PROJECT.value}
        key = json.dumps([view.as_dict(), header, projects], sort_keys=True, default=str)
        cached = self._laid.get(rel)
        if cached is None or cached[0] != key:
            cached = (key, json.dumps(canvas.build(view, header, canvas_of)))
            self._laid[rel] = cached
        fresh: legibility.Canvas = json.loads(cached[1])
        return fresh  # a fresh copy: merging places the person's cards into it

    def _blocked(self, rel: str, exc: OSError) -> None:
        """Said once per canvas (log and alert), never a traceback on every change."""
        if rel in self.refused:
            return
        self.refused.add(rel)
        what = "a folder" if isinstance(exc, IsADirectoryError) else f"something routine cannot use ({exc.strerror})"
        sentence = (f"{rel} is {what}, so the knowledge graph's canvas is not written there; move or rename it "
                    "and routine writes the canvas at the next change.")
        log.warning("%s", sentence)
        if self.on_blocked is not None:
            self.on_blocked(rel, sentence)

    def _save_registry(self) -> None:
        self.registry_path.parent.mkdir(parents=True, exist_ok=True)
        replace_if_changed(self.registry_path, json.dumps(self.registry, sort_keys=True), mode=0o600)
