"""An agent library: a folder with a documented, versioned layout (docs/agent-library.md).

    LIBRARY/<agent>/<version>/manifest.json      name, version, description, author, locked,
                                                 tools, model, scopes, files (sha256 each)
    LIBRARY/<agent>/<version>/agent.md           the agent note as it is installed
    LIBRARY/<agent>/<version>/grounding/*.md     its grounding artifacts

Versions are whole numbers, one folder each, never rewritten: publishing makes the next one.
This module reads libraries and checks a version's files against its manifest.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from routine.config.model import Config, LibrarySource
from routine.errors import RoutineError, UsageError

FORMAT = 1
MANIFEST = "manifest.json"
NOTE = "agent.md"
GROUNDING = "grounding"


class LibraryError(RoutineError):
    """A library copy is damaged, tampered with, or asks for more than it may have."""


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@dataclass(frozen=True)
class Version:
    library: LibrarySource
    name: str
    number: int
    folder: Path
    manifest: dict

    @property
    def label(self) -> str:
        return f"{self.name}@{self.number}"


def library_named(config: Config, name_or_path: str) -> LibrarySource:
    """A library from routine.yaml's `libraries:` (or `general`), or a folder given as a path."""
    if name_or_path in config.libraries:
        return config.libraries[name_or_path]
    if "/" in name_or_path or name_or_path.startswith("."):
        from routine.config.schema import LIBRARY_TOOLS

        folder = Path(name_or_path).expanduser().resolve()
        return LibrarySource(folder.name, folder, LIBRARY_TOOLS)
    raise UsageError(f"There is no library named {name_or_path!r} (libraries: {', '.join(config.libraries)}).",
                     f"add it under `libraries:` in {config.path}, e.g. `libraries: {{shared: ~/Sync/agents}}`.")


def versions_in(folder: Path) -> list[int]:
    if not folder.is_dir():
        return []
    return sorted(int(p.name) for p in folder.iterdir() if p.is_dir() and p.name.isdigit())


def read_manifest(folder: Path, label: str) -> dict:
    try:
        data = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise LibraryError(f"{label} has no {MANIFEST}, so it cannot be checked or installed.",
                           "publish it again with `routine agent publish`.") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise LibraryError(f"{label}'s {MANIFEST} is not valid JSON ({exc}).",
                           "publish it again with `routine agent publish`.") from None
    if not isinstance(data, dict) or not isinstance(data.get("files"), dict):
        raise LibraryError(f"{label}'s {MANIFEST} has no `files` list of checksums.",
                           "publish it again with `routine agent publish`.")
    return data


def version(library: LibrarySource, name: str, number: int | None = None) -> Version:
    base = library.path / name.lower()
    numbers = versions_in(base)
    if not numbers:
        raise UsageError(f"The {library.name} library ({library.path}) has no agent {name!r}.",
                         f"see `routine library show {library.name}` for what it holds.")
    chosen = numbers[-1] if number is None else number
    if chosen not in numbers:
        raise UsageError(f"The {library.name} library has no version {chosen} of {name} "
                         f"(versions: {', '.join(map(str, numbers))}).", "pick one of those versions.")
    folder = base / str(chosen)
    return Version(library, name.lower(), chosen, folder, read_manifest(folder, f"{name}@{chosen}"))


def verify(found: Version) -> None:
    """Every file the manifest lists is there with its checksum, and nothing else is."""
    listed = found.manifest["files"]
    fix = (f"do not install it; publish it again from the original (`routine agent publish {found.name}`), "
           "or ask its author for a fresh copy.")
    for rel, digest in listed.items():
        path = found.folder / rel
        if ".." in Path(rel).parts or Path(rel).is_absolute():
            raise LibraryError(f"{found.label} in the {found.library.name} library lists {rel!r}, a path outside "
                               "its folder, so nothing was installed.", fix)
        if not path.is_file():
            raise LibraryError(f"{found.label} in the {found.library.name} library is missing {rel}, "
                               "so nothing was installed.", fix)
        if sha256(path) != digest:
            raise LibraryError(f"{found.label} in the {found.library.name} library failed its checksum: {rel} is not "
                               f"the file that was published (sha256 differs from {MANIFEST}), so nothing was "
                               "installed.", fix)
    # Hidden files (a sync tool's, the desktop's) are never installed, so they may be there.
    extra = sorted(rel for rel in (p.relative_to(found.folder).as_posix() for p in found.folder.rglob("*")
                                   if p.is_file() and not p.name.startswith("."))
                   if rel != MANIFEST and rel not in listed)
    if extra:
        raise LibraryError(f"{found.label} in the {found.library.name} library holds files its manifest does not "
                           f"list ({', '.join(extra)}), so nothing was installed.", fix)


def agents_in(library: LibrarySource) -> list[dict]:
    """One row per agent: its latest version's manifest (grounding named, never previewed here)."""
    rows: list[dict] = []
    if not library.path.is_dir():
        return rows
    for folder in sorted(p for p in library.path.iterdir() if p.is_dir() and versions_in(p)):
        numbers = versions_in(folder)
        try:
            manifest = read_manifest(folder / str(numbers[-1]), f"{folder.name}@{numbers[-1]}")
        except LibraryError as exc:
            rows.append({"name": folder.name, "version": numbers[-1], "error": exc.message})
            continue
        rows.append({"name": folder.name, "version": numbers[-1], "versions": numbers,
                     "description": manifest.get("description", ""), "author": manifest.get("author", ""),
                     "locked": bool(manifest.get("locked")), "tools": manifest.get("tools", []),
                     "model": manifest.get("model", {}), "grounding": manifest.get("grounding", [])})
    return rows


def preview(found: Version) -> list[dict]:
    """The grounding files of a version: names always, a preview of content only when unlocked."""
    items = []
    for rel in sorted(r for r in found.manifest["files"] if r.startswith(GROUNDING + "/")):
        item = {"file": rel}
        if not found.manifest.get("locked"):
            text = " ".join((found.folder / rel).read_text(encoding="utf-8", errors="replace").split())
            item["preview"] = text[:160]
        items.append(item)
    return items
