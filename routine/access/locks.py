"""Which agents are locked, and what grounds them, read from the agent notes as they stand now.

Read from each note's properties alone (not through the full agent parse), so a locked agent
whose note has some other problem (an unknown model alias, say) still keeps its grounding
hidden from the others. A note is read again only when its mtime or size changed.
"""

from __future__ import annotations

import threading
from pathlib import Path

from routine.vault.files import read_text
from routine.vault.frontmatter import split_frontmatter

# note path -> ((mtime_ns, size), (note rel, grounding links) or None when not locked)
_SEEN: dict[str, tuple[tuple[int, int], tuple[str, tuple[str, ...]] | None]] = {}
_LOCK = threading.Lock()


def _locked(path: Path, rel: str) -> tuple[str, tuple[str, ...]] | None:
    props = split_frontmatter(read_text(path))[0]
    if props.get("locked") is not True or not props.get("agent"):
        return None
    links = props.get("grounding") or ()
    return rel, tuple(str(link) for link in (links if isinstance(links, list) else [links]) if link)


def locked_grounding(vault: Path, agents_folder: str) -> list[tuple[str, tuple[str, ...]]]:
    """(agent note's vault-relative path, its grounding links) for every locked agent."""
    folder = Path(vault) / agents_folder
    found = []
    with _LOCK:
        for path in sorted(folder.glob("*.md")) if folder.is_dir() else ():
            try:
                st = path.stat()
                key = (st.st_mtime_ns, st.st_size)
                seen = _SEEN.get(str(path))
                if seen is None or seen[0] != key:
                    seen = _SEEN[str(path)] = (key, _locked(path, path.relative_to(vault).as_posix()))
            except OSError:
                continue
            if seen[1] is not None:
                found.append(seen[1])
    return found
