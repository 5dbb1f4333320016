"""`routine agent publish NAME --to LIBRARY`: the agent note and its grounding as the next
version in a library folder (a new folder each time, made whole before it appears)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath

from routine.agents.library import (
    FORMAT,
    GROUNDING,
    MANIFEST,
    MAX_FILE_BYTES,
    MAX_PACKAGE_BYTES,
    NOTE,
    Version,
    read_manifest,
    sha256,
    versions_in,
)
from routine.config.model import AgentSpec, Config, LibrarySource
from routine.errors import UsageError
from routine.vault.frontmatter import parse_frontmatter, update_frontmatter
from routine.vault.notes import resolve_wikilink


def title_of(agent: AgentSpec) -> str:
    """The agent note's file name (Agents/Pricer.md -> 'Pricer'): its folder's name too."""
    return PurePosixPath(agent.source).stem


def _own_file(config: Config, agent: AgentSpec, rel: str) -> Path:
    """The vault file at ``rel`` if it is a regular file inside the vault, reached through no
    symlink and within the library's size cap (what an install would refuse, publish refuses)."""
    path = config.vault / rel
    if path.resolve() != config.vault.resolve() / rel or not path.is_file():
        raise UsageError(f"{agent.name}'s grounding {rel} is a symlink (or reached through one), so it cannot be "
                         "published: a library holds only the vault's own files.",
                         f"put the note itself in the vault, or take it out of {agent.source}'s grounding.")
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise UsageError(f"{agent.name}'s grounding {rel} is {size / (1 << 20):.1f} MB, over a library's limit of "
                         f"{MAX_FILE_BYTES >> 20} MB for one file.", "ground it on a shorter note.")
    return path


def _grounding_files(config: Config, agent: AgentSpec) -> dict[str, Path]:
    files: dict[str, Path] = {}
    for link in agent.grounding:
        rel = resolve_wikilink(config.vault, link)
        if rel is None:
            raise UsageError(f"{agent.name}'s grounding {link} is not a note in the vault, so it cannot be published.",
                             f"fix the link in {agent.source}, or remove it.")
        name = PurePosixPath(rel).name
        if name in files:
            raise UsageError(f"{agent.name} is grounded in two notes named {name}, which a library cannot tell apart.",
                             "rename one of them.")
        files[name] = _own_file(config, agent, rel)
    _own_file(config, agent, agent.source)
    total = sum(p.stat().st_size for p in files.values())
    if total > MAX_PACKAGE_BYTES:
        raise UsageError(f"{agent.name}'s grounding is {total / (1 << 20):.1f} MB, over a library's limit of "
                         f"{MAX_PACKAGE_BYTES >> 20} MB for one agent.", "ground it on fewer or shorter notes.")
    return files


def library_note(config: Config, agent: AgentSpec, number: int, files: dict[str, Path]) -> str:
    """The agent note as installed: grounding links point into its own folder, the version set."""
    text = (config.vault / agent.source).read_text(encoding="utf-8")
    split = parse_frontmatter(text)
    folder = f"{config.layout.agents}/{title_of(agent)}"
    links = [f"[[{folder}/{PurePosixPath(name).stem}]]" for name in files]
    updates = {"grounding": links, "version": number, "custom": True}
    if not split.data.get("author"):
        updates["author"] = agent.author or os.environ.get("USER", "")
    return update_frontmatter(split, updates) + split.body


def manifest_for(agent: AgentSpec, props: dict, number: int, files: dict[str, str]) -> dict:
    return {
        "format": FORMAT,
        "name": agent.name,
        "title": props["title"],
        "version": number,
        "description": agent.description or agent.role,
        "author": props.get("author") or "",
        "locked": agent.locked,
        "behaviour": agent.behaviour or None,
        "tools": list(agent.tools),
        "model": {"alias": agent.model, "capabilities": ["tools"] if agent.tools else []},
        "scopes": {"reads": props.get("reads") or [], "writes": props.get("writes") or []},
        "grounding": [rel for rel in files if rel.startswith(GROUNDING + "/")],
        "published": datetime.now(UTC).isoformat(timespec="seconds"),
        "files": files,
    }


def publish(config: Config, agent: AgentSpec, library: LibrarySource) -> Version:
    base = library.path / agent.name
    base.mkdir(parents=True, exist_ok=True)
    files = _grounding_files(config, agent)
    raw = parse_frontmatter((config.vault / agent.source).read_text(encoding="utf-8")).data
    for _ in range(20):
        number = (versions_in(base) or [0])[-1] + 1
        staging = Path(tempfile.mkdtemp(prefix=".publish-", dir=base))
        try:
            note = library_note(config, agent, number, files)
            (staging / NOTE).write_text(note, encoding="utf-8")
            (staging / GROUNDING).mkdir()
            for name, source in files.items():
                shutil.copyfile(source, staging / GROUNDING / name)
            sums = {p.relative_to(staging).as_posix(): sha256(p) for p in sorted(staging.rglob("*")) if p.is_file()}
            props = {**raw, "title": title_of(agent), "author": parse_frontmatter(note).data.get("author")}
            manifest = manifest_for(agent, props, number, sums)
            (staging / MANIFEST).write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
            os.rename(staging, base / str(number))  # fails if another publish took this number
        except OSError:
            shutil.rmtree(staging, ignore_errors=True)
            if (base / str(number)).exists():
                continue
            raise
        folder = base / str(number)
        return Version(library, agent.name, number, folder, read_manifest(folder, f"{agent.name}@{number}"))
    raise UsageError(f"Could not publish {agent.name}: the library folder kept changing.", "try again.")
