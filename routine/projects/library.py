"""The library of cognitive artifacts: `Templates/Artifacts/*.md` in the vault (shipped by
`routine init`, extendable by the person: any note there is a template), instantiated into a
case file on request (`routine artifact new`) or when the person approves the project
manager's recommendation (``recommendation``)."""

from __future__ import annotations

from pathlib import Path

from routine import paths
from routine.errors import NoteExists, UsageError
from routine.projects.artifacts import ArtifactType, artifact_type_of, type_properties
from routine.projects.model import Project
from routine.vault.atomic import atomic_create
from routine.vault.frontmatter import join_frontmatter, parse_frontmatter

LIBRARY = "Templates/Artifacts"


def templates(vault: Path) -> dict[str, Path]:
    """Template name -> file: the vault's own first, then the shipped ones it lacks."""
    found: dict[str, Path] = {}
    for folder in (Path(vault) / LIBRARY, paths.shipped("vault_templates") / LIBRARY):
        for path in sorted(folder.glob("*.md")) if folder.is_dir() else ():
            found.setdefault(path.stem, path)
    return found


def template_named(vault: Path, name: str) -> tuple[str, Path]:
    library = templates(vault)
    key = name.strip().removesuffix(".md").lower()
    for stem, path in library.items():
        if stem.lower() == key:
            return stem, path
    raise UsageError(f"There is no artifact template {name!r} in {LIBRARY}/.",
                     f"templates: {', '.join(sorted(library)) or 'none'}; add your own as a note in {LIBRARY}/.")


def instance_text(
    vault: Path, template: str, owner: str | None, shared_with: list[str], derived_from: list[str]
) -> str:
    """The template's text with its artifact properties set for this case file."""
    _, path = template_named(vault, template)
    split = parse_frontmatter(path.read_text(encoding="utf-8"))
    props = dict(split.data) if split.readable else {}
    props.update(type_properties(props, artifact_type_of(props) or ArtifactType.COGNITIVE))
    props.update({"status": "draft", "qa": props.get("qa") or "none"})
    if owner:
        props["owner"] = f"[[{owner}]]"
    props["shared_with"] = [f"[[{m}]]" for m in shared_with]
    props["derived_from"] = [f"[[{d}]]" for d in derived_from]
    tags = [t for t in (props.get("tags") or []) if t != "routine/template"]
    props["tags"] = tags or ["routine/artifact"]
    return join_frontmatter(props, split.body if split.readable else path.read_text(encoding="utf-8"))


def free_name(vault: Path, project: Project, stem: str) -> str:
    for n in range(1, 100):
        rel = f"{project.folder}/{stem}{'' if n == 1 else f' {n}'}.md"
        if not (Path(vault) / rel).exists():
            return rel
    raise UsageError(f"Too many notes named {stem!r} in {project.folder}/.", "rename or archive old ones.")


def instantiate(vault: Path, project: Project, template: str, owner: str | None = None) -> str:
    """A new note in the case file from the template; never replaces a note. Returns its path."""
    stem, _ = template_named(vault, template)
    text = instance_text(vault, stem, owner, [m.name for m in project.members], [project.name])
    for _ in range(3):
        rel = free_name(vault, project, stem)
        try:
            atomic_create(Path(vault) / rel, text)
            return rel
        except NoteExists:
            continue
    raise UsageError(f"Could not create {stem} in {project.folder}/: names kept appearing.", "try again.")
