"""`routine agent publish NAME --to LIBRARY`: the agent note (and, with ``with_grounding``, its
grounding) as the next version in a library folder (a new folder each time, made whole before it
appears). What goes out is checked first: a URL the one redaction would hide a secret of, an e-mail
address or a phone number refuses the publish (``force`` publishes anyway)."""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import Enum
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from routine.agents.authoring import login_name
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
from routine.redact import HIDDEN, URL, redact_url
from routine.vault.frontmatter import parse_frontmatter, update_frontmatter
from routine.vault.notes import resolve_wikilink

if TYPE_CHECKING:
    from routine.jsonvalue import JSONObject, Parsed


EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b")
# A phone number as people write them: `+49 30 1234567`, `(030) 123-4567`, `555-123-4567`.
PHONE = re.compile(r"(?<![\w+])(?:\+\d{1,3}[ /-]?)?(?:\(\d{1,5}\)[ /-]?)?\d{2,5}(?:[ /-]\d{2,8}){1,4}(?![\w-])")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_SECRET_QUERY = re.compile(r"[?&#](?:[\w-]*(?:token|key|secret|pass|password|sig|auth)[\w-]*)=", re.IGNORECASE)


def _secret_url(url: str) -> bool:
    """A URL the one redaction (routine/redact.py) would hide a secret of: a host that may be a
    token, a user or password, or a query that carries a key or token. A plain web link is not one."""
    netloc = re.split(r"[/?#]", url.partition("://")[2], maxsplit=1)[0]
    return redact_url(url).endswith(HIDDEN) or "@" in netloc or bool(_SECRET_QUERY.search(url))


def _phone(found: str) -> bool:
    digits = sum(ch.isdigit() for ch in found)
    if found.startswith("+"):
        return 7 <= digits <= 15
    return 8 <= digits <= 15 and not _DATE.fullmatch(found.strip())


def personal_data(text: str) -> tuple[int, str] | None:
    """The first line (1-based) of ``text`` holding an e-mail address, a phone number or a URL
    with a secret, and what it holds; None when there is none."""
    for number, line in enumerate(text.splitlines(), 1):
        urls = [m[0] for m in URL.finditer(line)]
        if any(_secret_url(u) for u in urls):
            return number, "a URL with a secret in it"
        bare = URL.sub(" ", line)
        if EMAIL.search(bare):
            return number, "an e-mail address"
        if any(_phone(m[0]) for m in PHONE.finditer(bare)):
            return number, "a phone number"
    return None


class AuthorFrom(Enum):
    NOTE = "the agent note's author:"
    CONFIG = "routine.yaml's author:"
    LOGIN = "your login name; set author: in routine.yaml to choose it"


@dataclass(frozen=True)
class Published:
    """A published version and what went out: (library path, vault path, bytes) per file, the
    grounding notes left out (without ``with_grounding``), the author and where it came from."""

    version: Version
    files: tuple[tuple[str, str, int], ...]
    left_out: tuple[str, ...]
    author: str
    author_from: AuthorFrom


def author_of(config: Config, agent: AgentSpec) -> tuple[str, AuthorFrom]:
    """The author a library records: routine.yaml's `author:`, else the note's own `author:` (when
    it is not just the login name `agent new` wrote), else the login name."""
    if config.author:
        return config.author, AuthorFrom.CONFIG
    login = login_name()
    if agent.author and agent.author != login:
        return agent.author, AuthorFrom.NOTE
    return login, AuthorFrom.LOGIN


def _check_outgoing(config: Config, rels: list[str]) -> None:
    for rel in rels:
        found = personal_data((config.vault / rel).read_text(encoding="utf-8", errors="replace"))
        if found is not None:
            line, what = found
            raise UsageError(f"{rel} line {line} holds {what}, so it was not published: a library is shared.",
                             f"remove it from {rel}, or add --force to publish anyway.")


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


def library_note(config: Config, agent: AgentSpec, number: int, files: dict[str, Path], author: str = "") -> str:
    """The agent note as installed: grounding links point into its own folder, the version set."""
    text = (config.vault / agent.source).read_text(encoding="utf-8")
    split = parse_frontmatter(text)
    folder = f"{config.layout.agents}/{title_of(agent)}"
    links = [f"[[{folder}/{PurePosixPath(name).stem}]]" for name in files]
    updates = {"grounding": links, "version": number, "custom": True, "author": author or author_of(config, agent)[0]}
    return update_frontmatter(split, updates) + split.body


def manifest_for(agent: AgentSpec, props: Parsed, number: int, files: dict[str, str]) -> JSONObject:
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


def publish(config: Config, agent: AgentSpec, library: LibrarySource, *, with_grounding: bool = False,
            force: bool = False) -> Published:
    """Publish ``agent`` as the next version; grounding notes only ``with_grounding``. Nothing is
    written when what would go out holds personal data, unless ``force``."""
    grounding = _grounding_files(config, agent)
    rels = {name: path.relative_to(config.vault).as_posix() for name, path in grounding.items()}
    files = grounding if with_grounding else {}
    if not force:
        _check_outgoing(config, [agent.source, *(rels[name] for name in files)])
    author, author_from = author_of(config, agent)
    version = _write_version(config, agent, library, files, author)
    listed = [(NOTE, agent.source, (version.folder / NOTE).stat().st_size)]
    listed += [(f"{GROUNDING}/{name}", rels[name], (version.folder / GROUNDING / name).stat().st_size)
               for name in files]
    left_out = tuple(rels[name] for name in grounding if name not in files)
    return Published(version, tuple(listed), left_out, author, author_from)


def _write_version(config: Config, agent: AgentSpec, library: LibrarySource, files: dict[str, Path],
                   author: str) -> Version:
    base = library.path / agent.name
    base.mkdir(parents=True, exist_ok=True)
    raw = parse_frontmatter((config.vault / agent.source).read_text(encoding="utf-8")).data
    for _ in range(20):
        number = (versions_in(base) or [0])[-1] + 1
        staging = Path(tempfile.mkdtemp(prefix=".publish-", dir=base))
        try:
            note = library_note(config, agent, number, files, author)
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
