"""Writing the views into the vault as canvases (``Routine/Graphs/*.canvas``).

A canvas is written only when its content changed, atomically through the vault layer (whose
own-write announcement keeps the vault watcher from taking it for the person's edit), and never
over a canvas without our header node (the person's). Where each of our nodes was last put is
kept in the state dir, so a node the person moved is told from one we laid out.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from routine import paths
from routine.graph import canvas
from routine.graph.graph import KnowledgeGraph
from routine.graph.model import NodeType
from routine.graph.views import View, ViewKind, agent_view, project_view, workspace_view

log = logging.getLogger(__name__)

GRAPHS_DIR = "Routine/Graphs"
HEADER = ("Made by routine from your notes and its run journal; refreshed when they change. Move or "
          "resize nodes freely: they keep their place. Colours: purple projects, green tasks, cyan agents, "
          "yellow people, orange artifacts, red key results.")


def canvas_rel(kind: str, label: str) -> str:
    safe = "".join(ch for ch in label if ch not in '\\/:*?"<>|#^[]').strip() or "unnamed"
    return f"{GRAPHS_DIR}/Workspace.canvas" if kind == ViewKind.WORKSPACE else f"{GRAPHS_DIR}/{kind.title()} {safe}.canvas"


def all_views(graph: KnowledgeGraph) -> list[tuple[str, View, str]]:
    """(canvas path, view, header) for the workspace, every project and every agent."""
    out = [(canvas_rel(ViewKind.WORKSPACE, ""), workspace_view(graph), HEADER)]
    with graph.lock:
        nodes = sorted(graph.g.nodes(data=True))
    for node, data in nodes:
        if data.get("type") == NodeType.PROJECT.value:
            out.append((canvas_rel(ViewKind.PROJECT, data["label"]), project_view(graph, node), HEADER))
        elif data.get("type") == NodeType.AGENT.value:
            scopes = "".join(f"\n**{k}:** {data[k]}" for k in ("reads", "writes") if data.get(k))
            out.append((canvas_rel(ViewKind.AGENT, data["label"]), agent_view(graph, node), HEADER + scopes))
    return out


class CanvasWriter:
    def __init__(self, vault: Path, registry: Path | None = None):
        self.vault = Path(vault)
        self.registry_path = registry or paths.state_dir() / "graph-canvases.json"
        try:
            self.registry: dict[str, dict] = json.loads(self.registry_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            self.registry = {}  # unknown: places on disk are all taken as the person's
        self.refused: set[str] = set()

    def refresh(self, graph: KnowledgeGraph) -> list[str]:
        """Write every view whose canvas changed; returns the canvases written."""
        written = [rel for rel, view, header in all_views(graph) if self.write(rel, view, header)]
        self._save_registry()
        return written

    def write(self, rel: str, view: View, header: str = HEADER) -> bool:
        from routine.vault.atomic import NoteChanged, atomic_write

        path = self.vault / rel
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            raw = None
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
        doc = canvas.merge(canvas.build(view, header), existing, self.registry.get(rel) if existing else {})
        moved = doc.pop("moved")
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
        return True

    def _save_registry(self) -> None:
        from routine.atomicfile import replace_if_changed

        self.registry_path.parent.mkdir(parents=True, exist_ok=True)
        replace_if_changed(self.registry_path, json.dumps(self.registry, sort_keys=True), mode=0o600)
