"""Artifacts: notes of a case file that are typed and owned.

A note is an artifact when ``artifact_type_of`` says so, the one place that decides: its
`type:` is the kind as a person types it (`cognitive`, `intellectual`, `information product`,
in any case, with a space, hyphen or underscore), or `type: artifact` with `artifact_type:`
(the older form, still read and kept). Other properties (shared conventions): `owner`,
`shared_with`, `derived_from`, `status`, `qa` (passed | failed | needed | none). routine adds
`qa_sha`: the hash of the body that passed QA, so a later edit is seen (``stale_after_edit``)
and the note goes back to `qa: needed`. A change of kind is written in the note's own form
(``type_properties``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from routine.jsonvalue import Parsed
from routine.projects.model import PROJECTS, as_list, link_target
from routine.projects.tasks import case_file_notes
from routine.vault.frontmatter import parse_frontmatter, update_frontmatter
from routine.vault.notes import read_note, resolve_wikilink, wikilinks
from routine.vault.sections import content_sha
from routine.vault.writer import _rewrite

if TYPE_CHECKING:
    from routine.vault.notes import NoteText

_E = TypeVar("_E", bound=Enum)


class ArtifactType(str, Enum):
    COGNITIVE = "cognitive"
    INTELLECTUAL = "intellectual"
    INFORMATION_PRODUCT = "information-product"

    @classmethod
    def parse(cls, value: object) -> ArtifactType | None:
        """The kind a person wrote: 'Information Product', 'information_product', 'Intellectual'…"""
        if not isinstance(value, str):
            return None
        try:
            return cls("-".join(re.split(r"[-_\s]+", value.strip().lower())))
        except ValueError:
            return None

    @property
    def spoken(self) -> str:
        """As a person says it: 'information product'."""
        return self.value.replace("-", " ")


LEGACY_TYPE = "artifact"  # `type: artifact` + `artifact_type:` (the older form)
VOCABULARY = ", ".join(k.spoken for k in ArtifactType)  # "cognitive, intellectual, information product"


def _declared_type(props: Parsed) -> str:
    value = props.get("type")
    return value.strip() if isinstance(value, str) else ""


def artifact_type_of(props: Parsed) -> ArtifactType | None:
    """The one definition of "this note is an artifact", and of which kind (None: it is not one)."""
    declared = _declared_type(props)
    if declared.lower() == LEGACY_TYPE:
        return ArtifactType.parse(props.get("artifact_type")) or ArtifactType.COGNITIVE
    return ArtifactType.parse(declared)


def _spelled(kind: ArtifactType, like: str) -> str:
    """``kind`` written as the person wrote their type ('Intellectual' -> 'Information Product')."""
    sep = next((c for c in (" ", "_", "-") if c in like), " " if like[:1].isupper() else "-")
    words = kind.value.split("-")
    return sep.join(w.capitalize() for w in words) if like[:1].isupper() else sep.join(words)


def type_properties(props: Parsed, kind: ArtifactType) -> Parsed:
    """The properties that make (or keep) a note with ``props`` an artifact of ``kind``, in the
    note's own form: `artifact_type:` beside `type: artifact`, else `type:` as the person spells it."""
    declared = _declared_type(props)
    if declared.lower() == LEGACY_TYPE:
        return {"artifact_type": kind.value}
    return {"type": _spelled(kind, declared) if ArtifactType.parse(declared) else kind.value}


class QAState(str, Enum):
    PASSED = "passed"
    FAILED = "failed"
    NEEDED = "needed"
    NONE = "none"


@dataclass(frozen=True)
class Artifact:
    rel: str
    artifact_type: ArtifactType
    owner: str | None
    shared_with: tuple[str, ...]
    derived_from: tuple[str, ...]
    status: str
    qa: QAState
    qa_sha: str | None
    declared_type: str  # its `type:` as written ("artifact", "Intellectual"…)

    @property
    def name(self) -> str:
        return self.rel.rsplit("/", 1)[-1].removesuffix(".md")

    def retyped(self, kind: ArtifactType) -> Parsed:
        """The properties that make it ``kind``, in its own form."""
        return type_properties({"type": self.declared_type}, kind)


def _enum(kind: type[_E], value: object, default: _E) -> _E:
    try:
        return kind(str(value).strip().lower())
    except ValueError:
        return default


def artifact_from(rel: str, props: Parsed) -> Artifact | None:
    kind = artifact_type_of(props)
    if kind is None:
        return None
    return Artifact(rel=rel, artifact_type=kind,
                    owner=link_target(props.get("owner")) or None,
                    shared_with=tuple(link_target(x) for x in as_list(props.get("shared_with")) if link_target(x)),
                    derived_from=tuple(link_target(x) for x in as_list(props.get("derived_from")) if link_target(x)),
                    status=str(props.get("status") or ""), qa=_enum(QAState, props.get("qa") or "none", QAState.NONE),
                    qa_sha=str(props["qa_sha"]) if props.get("qa_sha") else None, declared_type=_declared_type(props))


def read_artifact(vault: Path, rel: str) -> Artifact | None:
    try:
        note = read_note(vault, rel)
    except OSError:
        return None
    return artifact_from(rel, note.frontmatter)


_TYPED = re.compile(rb"^type[ \t]*:", re.MULTILINE)  # only a note with a `type:` can be an artifact
_SEEN: dict[str, tuple[tuple[int, int, int], Artifact | None]] = {}  # path -> ((mtime_ns, size, inode), artifact)


def artifacts_in(vault: Path, folder: str = PROJECTS) -> list[Artifact]:
    """Every artifact under ``folder`` (all case files by default).

    Every run asks (ownership is a scope), so it is cheap: a note whose head has no `type:`
    property is never parsed, and a parsed one is kept until its mtime or size changes.
    """
    found = []
    for rel in case_file_notes(vault, folder):
        path = Path(vault) / rel
        try:
            stat = path.stat()
            key = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
            cached = _SEEN.get(str(path))
            if cached is None or cached[0] != key:
                if not path.is_file():  # a pipe or a device named like a note: never opened
                    continue
                with open(path, "rb") as fh:
                    head = fh.read(4096)
                artifact = read_artifact(vault, rel) if head.startswith(b"---") and _TYPED.search(head) else None
                cached = _SEEN[str(path)] = (key, artifact)
        except OSError:
            continue
        if cached[1] is not None:
            found.append(cached[1])
    return found


CITING_PROPERTIES = ("sources", "derived_from")  # where a note names what it stands on, besides its links


def cited_notes(vault: Path, rel: str, props: Parsed, text: str) -> list[str]:
    """The notes ``text`` (of the note ``rel`` with ``props``) cites, each once, in order: its
    `sources:` and `derived_from:`, then its wikilinks; those that resolve to a note, itself left out."""
    named = [str(v) for key in CITING_PROPERTIES for v in as_list(props.get(key)) if v not in (None, "")]
    found: list[str] = []
    for target in [*named, *wikilinks(text)]:
        cited = resolve_wikilink(vault, target)
        if cited is not None and cited != rel and cited not in found:
            found.append(cited)
    return found


def body_sha(vault: Path, rel: str) -> str | None:
    try:
        return content_sha(read_note(vault, rel).body)
    except OSError:
        return None


def stale_after_edit(vault: Path, artifact: Artifact) -> bool:
    """A promoted (or passed) artifact whose text changed since its QA pass."""
    if artifact.qa != QAState.PASSED or not artifact.qa_sha:
        return False
    return body_sha(vault, artifact.rel) != artifact.qa_sha


def set_properties(vault: Path, rel: str, updates: Mapping[str, object]) -> None:
    """Set properties of a note (atomically, only on the bytes read)."""
    def change(current: NoteText | None) -> str | None:
        if current is None:
            return None
        split = parse_frontmatter(current.text)
        if not split.readable:
            return None
        block = update_frontmatter(split, updates)
        return None if block == split.block else block + split.body

    _rewrite(Path(vault) / rel, rel, change)


def mark_needs_qa(vault: Path, artifact: Artifact) -> bool:
    """After an edit to a passed artifact: `qa: needed`, and back to intellectual. True if changed."""
    if not stale_after_edit(vault, artifact):
        return False
    updates = {"qa": QAState.NEEDED.value}
    if artifact.artifact_type == ArtifactType.INFORMATION_PRODUCT:
        updates.update(artifact.retyped(ArtifactType.INTELLECTUAL))
    set_properties(vault, artifact.rel, updates)
    return True
