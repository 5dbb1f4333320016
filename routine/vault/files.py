"""The one safe way to look at files in the vault (and at routine's own config files).

Everything here is hostile-input proof: a file name that is not UTF-8 is skipped (and logged
once) instead of crashing SQLite or JSON later; only regular files are read, opened without
blocking, so a named pipe or ``/dev/zero`` at a note's path is refused at once; and nothing is
read past a size cap.
"""

from __future__ import annotations

import errno
import logging
import os
import stat
from pathlib import Path

from routine.errors import NoteUnreadable
from routine.outside.yamlread import CONFIG as CONFIG_YAML

log = logging.getLogger("routine.vault")

NOTE_MAX_BYTES = 8 << 20     # a note larger than this is not read (no model context holds it)
CONFIG_MAX_BYTES = CONFIG_YAML.max_bytes  # routine.yaml, a schedule file, an agent note's YAML

_warned: set[str] = set()


def decodable(name: str) -> bool:
    """True when a name from os.listdir/os.walk is real UTF-8 (no surrogate escapes)."""
    try:
        name.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def shown(name: str | os.PathLike[str]) -> str:
    """A name fit for a message or a log line, whatever bytes it holds."""
    return os.fsencode(name).decode("utf-8", "backslashreplace")


def skip_undecodable(rel: str) -> bool:
    """True (and a warning, once per name) when ``rel`` cannot be a note's name."""
    if decodable(rel):
        return False
    if rel not in _warned and len(_warned) < 10_000:
        _warned.add(rel)
        log.warning("skipping %s: its name is not valid UTF-8; rename it to use it as a note", shown(rel))
    return True


def _kind(mode: int) -> str:
    for test, what in ((stat.S_ISFIFO, "a named pipe"), (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder")):
        if test(mode):
            return what
    return "not a regular file"


def read_regular(path: str | os.PathLike[str], limit: int = NOTE_MAX_BYTES, label: str | None = None) -> bytes:
    """The bytes of the regular file at ``path``, at most ``limit`` of them.

    FileNotFoundError when there is nothing there; NoteUnreadable (one sentence and the fix) for
    a pipe, a device, a folder, a symlink loop or a file larger than ``limit``. Never blocks.
    """
    label = label or shown(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0))
    except IsADirectoryError:
        raise NoteUnreadable(f"{label} is a folder, not a file.", "remove or rename the folder.") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise NoteUnreadable(f"{label} is a symlink loop.", "remove or fix the symlink.") from None
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            raise FileNotFoundError(exc.errno, exc.strerror, str(path)) from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NoteUnreadable(f"{label} is {_kind(st.st_mode)}, not a regular file; routine reads only files.",
                                 "replace it with a regular file or remove it.")
        if st.st_size > limit:
            raise NoteUnreadable(f"{label} is {st.st_size / (1 << 20):.1f} MB, over routine's limit of "
                                 f"{limit / (1 << 20):.0f} MB for such a file.", "split it into smaller files.")
        os.set_blocking(fd, True)
        chunks, total = [], 0
        while total <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > limit:  # it grew while we read
            raise NoteUnreadable(f"{label} grew past routine's limit of {limit / (1 << 20):.0f} MB while it was read.",
                                 "split it into smaller files.")
        return b"".join(chunks)
    finally:
        os.close(fd)


BINARY_SHARE = 20  # one byte in this many not UTF-8 (after the first few): not text, whatever the name


def binary_reason(raw: bytes) -> str | None:
    """Why ``raw`` is no note's text (a NUL byte; many bytes that are not UTF-8), else None. A
    stray Latin-1 byte in a real note is still text (replaced when read)."""
    if b"\x00" in raw:
        return "it holds NUL bytes: a binary file, not text"
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        bad = raw.decode("utf-8", errors="replace").count("\ufffd")
        if bad > 8 and bad * BINARY_SHARE > len(raw):
            return f"{bad:,} of its {len(raw):,} bytes are not UTF-8: a binary file, not text"
    return None


def decode_note(raw: bytes, label: str) -> str:
    """A note's bytes as text (bytes that are not UTF-8 replaced); a binary file named ``.md`` is
    NoteUnreadable, so it is neither indexed nor given to a model as text."""
    why = binary_reason(raw)
    if why is not None:
        raise NoteUnreadable(f"{label} is left out: {why}.", "rename it without `.md`, or save it as UTF-8 text.")
    return raw.decode("utf-8", errors="replace")


def read_text(path: str | os.PathLike[str], limit: int = NOTE_MAX_BYTES) -> str:
    """A regular file's text, bytes that are not UTF-8 replaced. Anything else (a pipe, a device,
    a loop, a file past ``limit``, a binary file) is an OSError, so code that skips unreadable notes
    skips these."""
    try:
        return decode_note(read_regular(path, limit), shown(path))
    except NoteUnreadable as exc:
        raise OSError(errno.EINVAL, exc.message, os.fspath(path)) from None


def readable(path: str | os.PathLike[str]) -> bool:
    """True for an existing regular file (through symlinks); False for a loop, pipe, nothing."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def vault_files(vault_root: Path) -> list[str]:
    """Every file of the vault outside hidden folders and not hidden itself, vault-relative.

    Names that are not UTF-8 are skipped (logged once); so are links that lead nowhere or
    in a loop, and anything that is not a regular file (a pipe, a socket). Linked folders are
    not entered (a link may point back up and loop).
    """
    found: list[str] = []
    stack = [(os.fspath(vault_root), "")]
    while stack:
        folder, prefix = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            rel = prefix + entry.name
            if entry.name.startswith(".") or skip_undecodable(rel):
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append((entry.path, rel + "/"))
                elif entry.is_file():  # follows a link; False for a loop, a dangling link, a pipe
                    found.append(rel)
            except OSError:
                continue
    return found
