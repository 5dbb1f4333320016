"""An agent library: a folder with a documented, versioned layout (docs/agent-library.md).

    LIBRARY/<agent>/<version>/manifest.json      name, version, description, author, locked,
                                                 tools, model, scopes, files (sha256 each)
    LIBRARY/<agent>/<version>/agent.md           the agent note as it is installed
    LIBRARY/<agent>/<version>/grounding/*.md     its grounding artifacts

Versions are whole numbers, one folder each, never rewritten: publishing makes the next one.
This module reads libraries and checks a version's files against its manifest.

A library is someone else's folder, so a version is read as a package of regular files inside
its own folder and nothing else: a symlink anywhere in it (a file, ``grounding/``, the version
folder) is refused, as is a pipe or a device; a file over ``MAX_FILE_BYTES`` or a package over
``MAX_PACKAGE_BYTES`` too. What is checked is what is installed: ``verify`` returns the bytes it
hashed.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from routine.config.model import Config, LibrarySource
from routine.config.schema import LIBRARY_TOOLS
from routine.errors import NoteUnreadable, RoutineError, UsageError
from routine.vault.files import read_regular, shown

if TYPE_CHECKING:
    from routine.jsonvalue import Parsed

FORMAT = 1
MANIFEST = "manifest.json"
NOTE = "agent.md"
GROUNDING = "grounding"
MAX_FILE_BYTES = 1 << 20      # one file of a package (an agent note, a grounding note, the manifest)
MAX_PACKAGE_BYTES = 8 << 20   # all of a version's files together


class LibraryError(RoutineError):
    """A library copy is damaged, tampered with, or asks for more than it may have."""


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class Version:
    library: LibrarySource
    name: str
    number: int
    folder: Path
    manifest: Parsed  # manifest.json as read_manifest checked it

    @property
    def label(self) -> str:
        return f"{self.name}@{self.number}"


def library_named(config: Config, name_or_path: str) -> LibrarySource:
    """A library from routine.yaml's `libraries:` (or `general`), or a folder given as a path."""
    if name_or_path in config.libraries:
        return config.libraries[name_or_path]
    if "/" in name_or_path or name_or_path.startswith("."):
        folder = Path(name_or_path).expanduser().resolve()
        return LibrarySource(folder.name, folder, LIBRARY_TOOLS)
    raise UsageError(f"There is no library named {name_or_path!r} (libraries: {', '.join(config.libraries)}).",
                     f"add it under `libraries:` in {config.path}, e.g. `libraries: {{shared: ~/Sync/agents}}`.")


def versions_in(folder: Path) -> list[int]:
    if not folder.is_dir():
        return []
    return sorted(int(p.name) for p in folder.iterdir() if p.is_dir() and p.name.isdigit())


def read_manifest(folder: Path, label: str) -> Parsed:
    fix = "publish it again with `routine agent publish`."
    if (folder / MANIFEST).is_symlink():
        raise LibraryError(f"{label}'s {MANIFEST} is a symlink; a library holds only regular files.", fix)
    try:
        data = json.loads(read_regular(folder / MANIFEST, MAX_FILE_BYTES, f"{label}'s {MANIFEST}").decode("utf-8"))
    except NoteUnreadable as exc:
        raise LibraryError(exc.message, fix) from None
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
    if not name or name.startswith(".") or any(ch in name for ch in "/\\\0"):
        raise UsageError(f"{shown(name)!r} is not an agent's name in a library.",
                         f"see `routine library show {library.name}` for the names it holds.")
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


def _fix(found: Version) -> str:
    return (f"do not install it; publish it again from the original (`routine agent publish {found.name}`), "
            "or ask its author for a fresh copy.")


def _where(found: Version) -> str:
    return f"{found.label} in the {found.library.name} library"


def package_files(found: Version) -> dict[str, int]:
    """Every file of the version (relative path -> size), hidden files left out, walked without
    following a link; a link, a pipe or a device anywhere, or a file or package over its size
    cap, is a LibraryError naming it."""
    where = _where(found)
    for outer in (found.folder.parent, found.folder):
        if outer.is_symlink():
            raise LibraryError(f"{where} is reached through a symlink ({shown(outer)}); an agent package takes only "
                               "regular files inside its own folder, so nothing was installed.",
                               "replace the link with the folder itself, or ask its author for a copy without links.")
    return own_files(found.folder, where, "nothing was installed", _fix(found))


def own_files(root: Path, where: str, outcome: str, fix: str) -> dict[str, int]:
    """The regular files inside ``root`` (relative path -> size), hidden ones left out, walked
    without following a link: a package someone else made (a library version, an exported agent
    folder). A link, a pipe or a device anywhere, or a file over MAX_FILE_BYTES or all of them
    over MAX_PACKAGE_BYTES, is a LibraryError: "<where> holds …, so <outcome>." """
    files: dict[str, int] = {}
    stack = [(os.fspath(root), "")]
    while stack:
        folder, prefix = stack.pop()
        with os.scandir(folder) as entries:
            for entry in entries:
                rel = prefix + entry.name
                if entry.name.startswith("."):
                    continue  # a sync tool's, the desktop's, a .venv: never read, so it may be there
                mode = entry.stat(follow_symlinks=False).st_mode
                if stat.S_ISLNK(mode):
                    raise LibraryError(f"{where} holds a symlink, {shown(rel)}; an agent package takes only regular "
                                       f"files inside its own folder, so {outcome}.",
                                       "replace the link with the file itself (or ask its author for a copy without "
                                       "links), then try again.")
                if stat.S_ISDIR(mode):
                    stack.append((entry.path, rel + "/"))
                elif not stat.S_ISREG(mode):
                    raise LibraryError(f"{where} holds {shown(rel)}, which is not a regular file, so {outcome}.", fix)
                else:
                    files[rel] = entry.stat(follow_symlinks=False).st_size
    big = sorted(rel for rel, size in files.items() if size > MAX_FILE_BYTES)
    if big:
        raise LibraryError(f"{where} holds {shown(big[0])}, {files[big[0]] / (1 << 20):.1f} MB, over the limit of "
                           f"{MAX_FILE_BYTES >> 20} MB for one file of an agent, so {outcome}.",
                           "ground the agent on smaller notes and publish it again.")
    if sum(files.values()) > MAX_PACKAGE_BYTES:
        raise LibraryError(f"{where} holds {sum(files.values()) / (1 << 20):.1f} MB of files, over the limit of "
                           f"{MAX_PACKAGE_BYTES >> 20} MB for one agent, so {outcome}.",
                           "ground the agent on fewer or smaller notes and publish it again.")
    return files


def verify(found: Version) -> dict[str, bytes]:
    """Every file the manifest lists is there with its checksum, and nothing else is; the
    contents as checked (what an install writes, never read a second time)."""
    listed = found.manifest["files"]
    where, fix = _where(found), _fix(found)
    present = package_files(found)
    checked: dict[str, bytes] = {}
    for rel, expected in listed.items():
        if not isinstance(rel, str) or ".." in Path(rel).parts or Path(rel).is_absolute():
            raise LibraryError(f"{where} lists {rel!r}, a path outside its folder, so nothing was installed.", fix)
        if rel not in present:
            raise LibraryError(f"{where} is missing {rel}, so nothing was installed.", fix)
        try:
            data = read_regular(found.folder / rel, MAX_FILE_BYTES, f"{found.label}'s {rel}")
        except (NoteUnreadable, OSError) as exc:
            raise LibraryError(f"{where}: {getattr(exc, 'message', exc)}", fix) from None
        if digest(data) != expected:
            raise LibraryError(f"{where} failed its checksum: {rel} is not the file that was published (sha256 "
                               f"differs from {MANIFEST}), so nothing was installed.", fix)
        checked[rel] = data
    extra = sorted(rel for rel in present if rel != MANIFEST and rel not in listed)
    if extra:
        raise LibraryError(f"{where} holds files its manifest does not list ({', '.join(map(shown, extra))}), so "
                           "nothing was installed.", fix)
    return checked


class LibraryAgent(TypedDict, total=False):
    """An agent in a library, as `routine library show` lists it: its latest version's manifest."""

    name: str
    version: int
    error: str  # its manifest could not be read (then name and version are all there is)
    versions: list[int]
    description: str
    author: str
    locked: bool
    tools: list[str]
    model: Parsed  # the manifest's {alias, capabilities}
    grounding: list[str]


def agents_in(library: LibrarySource) -> list[LibraryAgent]:
    """One row per agent: its latest version's manifest (grounding named, never previewed here)."""
    rows: list[LibraryAgent] = []
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


def preview(found: Version) -> list[dict[str, str]]:
    """The grounding files of a version: names always, a preview of content only when unlocked
    (and only of the package's own regular files: a link is named, never followed)."""
    present = package_files(found) if not found.manifest.get("locked") else {}
    items: list[dict[str, str]] = []
    for rel in sorted(r for r in found.manifest["files"] if r.startswith(GROUNDING + "/")):
        item = {"file": rel}
        if rel in present:
            text = read_regular(found.folder / rel, MAX_FILE_BYTES).decode("utf-8", errors="replace")
            item["preview"] = " ".join(text.split())[:160]
        items.append(item)
    return items
