"""`routine agent install NAME[@VERSION] --from LIBRARY`: checked, then copied into the vault.

Before anything is written: every file matches its manifest checksum, and the agent asks for
no tool the library may not grant and no scope beyond a custom agent's sandbox. The agent note
goes to Agents/<Title>.md and its grounding to Agents/<Title>/. What was installed is recorded
in Agents/<Title>/.installed.json (hashes of the files as written), so a later install can tell
the person's edits from its own copy: an edited copy is never replaced without --force, and
then the edited files are kept in Archive/Agents/ first.

What a library says is checked as an attacker's input would be: the package is only its own
regular files (``library.verify``); scopes and the write target are normalised before the
policy looks at them (``Agents/Dots/../../**`` is ``**``); the note's title must be a plain
note name; and the installed note's ``grounding:`` is exactly the package's own grounding
files: links the library's note makes to other notes (the person's ``Plans/OKRs``) are left
out and said so, so a library agent never grounds on, nor (locked) hides, the person's notes.
"""

from __future__ import annotations

import json
import posixpath
import shutil
from dataclasses import dataclass
from datetime import datetime
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from routine.agents.library import (
    GROUNDING,
    NOTE,
    LibraryError,
    Version,
    sha256,
    verify,
)
from routine.config.model import Config, WriteSpec
from routine.errors import UsageError
from routine.vault.atomic import atomic_write
from routine.vault.files import shown
from routine.vault.frontmatter import parse_frontmatter, update_frontmatter
from routine.vault.scope import glob_match

if TYPE_CHECKING:
    from routine.jsonvalue import Parsed

RECORD = ".installed.json"


@dataclass(frozen=True)
class Installed:
    version: Version
    note: str                 # vault-relative
    files: tuple[str, ...]    # vault-relative, the note first
    replaced: tuple[str, ...]  # the person's edited files kept in the archive (with --force)
    model_note: str | None    # said when the agent's model alias is not in this config
    grounding_note: str | None = None  # said when the library's note named grounding outside the package


def _refuse(found: Version, what: str, fix: str) -> LibraryError:
    return LibraryError(f"{found.label} from the {found.library.name} library {what}, so it was not installed.", fix)


MAX_TITLE = 100
_TITLE_BANNED = set('/\\:*?"<>|#^[]%')


def check_title(found: Version, title: object) -> str:
    """The note's title as a plain note name (Agents/<Title>.md), else one sentence."""
    if (isinstance(title, str) and title.strip() == title and title and not title.startswith(".")
            and len(title) <= MAX_TITLE and not any(ch in _TITLE_BANNED or ord(ch) < 32 or ord(ch) == 127
                                                    for ch in title)):
        return title
    said = shown(title)[:60] + ("…" if len(shown(title)) > 60 else "") if isinstance(title, str) else repr(title)[:60]
    length = f" ({len(title)} characters)" if isinstance(title, str) else ""
    raise _refuse(found, f"names its note {said!r}{length}, which is not a plain note name (at most {MAX_TITLE} "
                         "characters; no slash, control character or any of \\ : * ? \" < > | # ^ [ ] %)",
                  "ask its author to publish it again under a short plain title.")


def normalised(glob: object) -> str:
    """A scope or target as the policy must see it: ``a/b/../../**`` is ``**``; a path that
    climbs out of the vault or is absolute stays recognisable as such (``..``, ``/``)."""
    text = str(glob).replace("\\", "/")
    if text.startswith("/"):
        return text
    return posixpath.normpath(text) if text else text


def check_policy(config: Config, found: Version, props: Parsed, title: str) -> None:
    tools = set(props.get("tools") or []) | set(found.manifest.get("tools") or [])
    denied = sorted(tools - set(found.library.tools))
    if denied:
        raise _refuse(found, f"asks for the tool {', '.join(denied)}, which agents from this library may not have",
                      f"allow it with `libraries: {{{found.library.name}: {{path: ..., tools: [...]}}}}` in "
                      f"{config.path.name} if you trust it.")
    desk = f"{config.layout.agents}/{title}/**"
    scopes = [*(props.get("reads") or []), *(props.get("writes") or []),
              *found.manifest.get("scopes", {}).get("reads", []), *found.manifest.get("scopes", {}).get("writes", [])]
    wide = sorted({str(g) for g in scopes if normalised(g) != desk and (
        normalised(g).startswith(("/", "..")) or not glob_match(desk, normalised(g).rstrip("*").rstrip("/") + "/x"))})
    if wide:
        raise _refuse(found, f"asks to read or write {', '.join(wide)}; an agent from a library gets only its "
                      "grounding, its own folder and what you assign it", "assign it to a project or task instead.")
    write = props.get("write") or {}
    spec = WriteSpec.from_dict(write) if isinstance(write, dict) else None
    target = spec.dest if spec else ("?" if write else "")
    if target and (normalised(target).startswith(("/", "..")) or not glob_match(desk, normalised(target))):
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


def _targets(config: Config, found: Version, title: str) -> dict[str, str]:
    """Vault path -> the package file it is installed from (the note first)."""
    note = f"{config.layout.agents}/{title}.md"
    out = {note: NOTE}
    for rel in sorted(found.manifest["files"]):
        if rel.startswith(GROUNDING + "/"):
            out[f"{config.layout.agents}/{title}/{PurePosixPath(rel).name}"] = rel
    return out


def _note_text(config: Config, text: str, title: str, own: list[str]) -> tuple[str, str | None, str | None]:
    """The agent note as installed: grounded on exactly the package's own files (``own``,
    vault-relative), a custom agent, on a model alias this config has. Also what to tell the
    person about the model and about grounding left out."""
    split = parse_frontmatter(text)
    links = [f"[[{rel[:-3] if rel.endswith('.md') else rel}]]" for rel in own]
    named = split.data.get("grounding") or []
    named = [named] if isinstance(named, str) else named if isinstance(named, list) else [named]
    folder = f"{config.layout.agents}/{title}/"
    foreign = [str(link) for link in named
               if not str(link).strip().removeprefix("[[").removesuffix("]]").split("|")[0].startswith(folder)]
    grounding_said = None
    if foreign:
        grounding_said = (f"its note named grounding outside its package ({', '.join(foreign)}); an agent from a "
                          f"library grounds only on its own files, so those were left out (add them to "
                          f"{config.layout.agents}/{title}.md yourself if you want it to read them).")
    updates: dict[str, object] = {"grounding": links, "custom": True}
    alias = split.data.get("model")
    said = None
    if alias not in config.models:
        fallback = "general" if "general" in config.models else next(iter(config.models))
        said = (f"its model alias {alias!r} is not in {config.path.name}; "
                f"it runs on {fallback!r} (edit `model:` to change).")
        updates["model"] = fallback
    return update_frontmatter(split, updates) + split.body, said, grounding_said


def _archive(config: Config, rels: list[str], label: str) -> list[str]:
    stamp = datetime.now().strftime("%Y-%m-%d %H%M%S")
    kept = []
    for rel in rels:
        dest = config.vault / config.layout.archive / "Agents" / f"{label} replaced {stamp}" / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(config.vault / rel, dest)
        kept.append(dest.relative_to(config.vault).as_posix())
    return kept


def _decoded(found: Version, rel: str, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise _refuse(found, f"holds {rel}, which is not UTF-8 text", "ask its author for a fresh copy.") from None


def install(config: Config, found: Version, force: bool = False) -> Installed:
    checked = verify(found)
    if NOTE not in checked:
        raise _refuse(found, f"has no {NOTE} listed in its manifest", "publish it again.")
    note_text = _decoded(found, NOTE, checked[NOTE])
    props = parse_frontmatter(note_text).data
    title = check_title(found, found.manifest.get("title") or found.name.capitalize())
    check_policy(config, found, props, title)
    targets = _targets(config, found, title)
    edited = edited_files(config, title, list(targets))
    if edited and not force:
        raise UsageError(f"Not installed: you have changed {', '.join(edited)} since routine installed it "
                         "(or made it yourself), and an install would replace your changes.",
                         f"keep yours, or run `routine agent install {found.label} --from {found.library.name} --force`"
                         " (your files are kept in Archive/Agents/ first).")
    replaced = _archive(config, edited, title) if edited else []
    note = next(iter(targets))
    own = [rel for rel in targets if rel != note]
    written = {}
    texts = {rel: _decoded(found, source, checked[source]) for rel, source in targets.items()}
    texts[note], model_note, grounding_note = _note_text(config, note_text, title, own)
    for rel, text in texts.items():
        path = config.vault / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, text)
        written[rel] = sha256(path)
    record = {"library": found.library.name, "name": found.name, "version": found.number, "files": written}
    atomic_write(config.vault / config.layout.agents / title / RECORD, json.dumps(record, indent=2) + "\n")
    return Installed(found, note, tuple(targets), tuple(replaced), model_note, grounding_note)
