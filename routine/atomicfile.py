"""Replace a small file that is not a note (a metrics textfile, a unit file) atomically.

Notes go through ``routine.vault`` (which also guards against the person's concurrent edits);
this is for routine's own files that other programs read: a hidden temp file beside the
target, fsynced, given its mode, renamed over it. Unchanged content is not rewritten.
"""

from __future__ import annotations

import os
from pathlib import Path


def replace_if_changed(path: Path, text: str, mode: int = 0o644) -> bool:
    """Write ``text`` to ``path`` unless it holds exactly that already; True if written."""
    path = Path(path)
    try:
        if path.read_text(encoding="utf-8") == text:
            return False
    except (OSError, UnicodeDecodeError):
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.parent / f".{path.name}.{os.getpid()}.tmp"  # hidden, and no reader's suffix (.prom, .service)
    try:
        with open(temp, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, mode)  # explicit: the service's UMask=0077 would hide it from other readers
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except FileNotFoundError:
            pass
        raise
    return True
