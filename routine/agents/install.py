"""`routine agent install NAME[@VERSION] --from LIBRARY`: checked, then copied into the vault.

Before anything is written: every file matches its manifest checksum, and the agent asks for
no tool the library may not grant and no scope beyond a custom agent's sandbox. The agent note
goes to Agents/<Title>.md and its grounding to Agents/<Title>/. What was installed is recorded
in Agents/<Title>/.installed.json (hashes of the files as written), so a later install can tell
the person's edits from its own copy: an edited copy is never replaced without --force, and
then the edited files are kept in Archive/Agents/ first.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path, PurePosixPath

from routine.agents.library import (
    GROUNDING,
    NOTE,
    LibraryError,
    Version,
    sha256,
    verify,
)
from routine.config.model import Config
from routine.errors import UsageError
from routine.vault.atomic import atomic_write
from routine.vault.frontmatter import parse_frontmatter, update_frontmatter
from routine.vault.scope import glob_match

RECORD = ".installed.json"


@dataclass(frozen=True)
class Installed:
    version: Version
    note: str                 # vault-relative
    files: tuple[str, ...]    # vault-relative, the note first
    replaced: tuple[str, ...]  # the person's edited files kept in the archive (with --force)
    model_note: str | None    # said when the agent's model alias is not in this config


def _refuse(found: Version, what: str, fix: str) -> LibraryError:
    return LibraryError(f"{found.label} from the {found.library.name} library {what}, so it was not installed.", fix)


def check_policy(config: Config, found: Version, props: dict, title: str) -> None:
    tools = set(props.get("tools") or []) | set(found.manifest.get("tools") or [])
    denied = sorted(tools - set(found.library.tools))
    if denied:
        raise _refuse(found, f"asks for the tool {', '.join(denied)}, which agents from this library may not have",
                      f"allow it with `libraries: {{{found.library.name}: {{path: ..., tools: [...]}}}}` in "
                      f"{config.path.name} if you trust it.")
    desk = f"{config.layout.agents}/{title}/**"
    scopes = [*(props.get("reads") or []), *(props.get("writes") or []),
              *found.manifest.get("scopes", {}).get("reads", []), *found.manifest.get("scopes", {}).get("writes", [])]
    wide = sorted({g for g in scopes if g != desk and not glob_match(desk, g.rstrip("*").rstrip("/") + "/x")})
    if wide:
        raise _refuse(found, f"asks to read or write {', '.join(wide)}; an agent from a library gets only its "
                      "grounding, its own folder and what you assign it", "assign it to a project or task instead.")
    write = props.get("write") or {}
    target = (write.get("append") or write.get("note") or "") if isinstance(write, dict) else "?"
    if target and not glob_match(desk, target):
        raise _refuse(found, f"writes its results to {target}, outside its own folder {desk[:-3]}",
                      "publish it again with a `write:` target in its own folder.")
    if props.get("approval") not in (None, "none", "required"):
        raise _refuse(found, "has an unknown approval setting", "publish it again.")


def _current_hashes(config: Config, files: list[str]) -> dict[str, str | None]:
    return {rel: sha256(config.vault / rel) if (config.vault / rel).is_file() else None for rel in files}


def edited_files(config: Config, title: str, targets: list[str]) -> list[str]:
    """Files at the targets that are not exactly what an earlier install wrote."""
    record_path = config.vault / config.layout.agents / title / RECORD
    try:
        written = json.loads(record_path.read_text(encoding="utf-8")).get("files", {})
    except (OSError, ValueError):
        written = {}
    current = _current_hashes(config, sorted(set(targets) | set(written)))
    return sorted(rel for rel, digest in current.items() if digest is not None and digest != written.get(rel))


def _targets(config: Config, found: Version, title: str) -> dict[str, Path]:
    note = f"{config.layout.agents}/{title}.md"
    out = {note: found.folder / NOTE}
    for rel in sorted(found.manifest["files"]):
        if rel.startswith(GROUNDING + "/"):
            out[f"{config.layout.agents}/{title}/{PurePosixPath(rel).name}"] = found.folder / rel
    return out


def _note_text(config: Config, source: Path) -> tuple[str, str | None]:
    text = source.read_text(encoding="utf-8")
    split = parse_frontmatter(text)
    alias = split.data.get("model")
    if alias in config.models:
        return text, None
    fallback = "general" if "general" in config.models else next(iter(config.models))
    said = f"its model alias {alias!r} is not in {config.path.name}; it runs on {fallback!r} (edit `model:` to change)."
    return update_frontmatter(split, {"model": fallback}) + split.body, said


def _archive(config: Config, rels: list[str], label: str) -> list[str]:
    stamp = datetime.now().strftime("%Y-%m-%d %H%M%S")
    kept = []
    for rel in rels:
        dest = config.vault / config.layout.archive / "Agents" / f"{label} replaced {stamp}" / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(config.vault / rel, dest)
        kept.append(dest.relative_to(config.vault).as_posix())
    return kept


def install(config: Config, found: Version, force: bool = False) -> Installed:
    verify(found)
    props = parse_frontmatter((found.folder / NOTE).read_text(encoding="utf-8")).data
    title = found.manifest.get("title") or found.name.capitalize()
    if not isinstance(title, str) or "/" in title or title.startswith("."):
        raise _refuse(found, f"names its note {title!r}", "publish it again.")
    check_policy(config, found, props, title)
    targets = _targets(config, found, title)
    edited = edited_files(config, title, list(targets))
    if edited and not force:
        raise UsageError(f"Not installed: you have changed {', '.join(edited)} since routine installed it "
                         "(or made it yourself), and an install would replace your changes.",
                         f"keep yours, or run `routine agent install {found.label} --from {found.library.name} --force`"
                         " (your files are kept in Archive/Agents/ first).")
    replaced = _archive(config, edited, title) if edited else []
    written, model_note = {}, None
    for rel, source in targets.items():
        path = config.vault / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if rel.endswith(f"{title}.md") and source.name == NOTE:
            text, model_note = _note_text(config, source)
        else:
            text = source.read_text(encoding="utf-8")
        atomic_write(path, text)
        written[rel] = sha256(path)
    record = {"library": found.library.name, "name": found.name, "version": found.number, "files": written}
    atomic_write(config.vault / config.layout.agents / title / RECORD, json.dumps(record, indent=2) + "\n")
    return Installed(found, next(iter(targets)), tuple(targets), tuple(replaced), model_note)
