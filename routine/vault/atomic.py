"""Atomic note writes: a note is either its old bytes or its new bytes, never half of each.

Built on the one writer, ``routine.atomicfile`` (a hidden temp file beside the note, fsynced,
renamed over it, the folder fsynced), with what notes need on top: the note's mode kept, a
symlinked note updated where it points, the watcher told our bytes first, nothing written over
a note that changed since it was read, and a save landing during the rename carried over.
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path

from routine import atomicfile
from routine.atomicfile import TEMP_MARKER, fsync_dir, remove_quietly, write_temp
from routine.errors import NoteExists, RoutineError
from routine.vault.merge import merge3

__all__ = ["TEMP_MARKER", "NoteChanged", "NotARegularFile", "atomic_create", "atomic_write", "fsync_dir",
           "note_lock", "remove_note", "sweep_temp_files"]

# Called right after routine put bytes at a path (or removed the note there), with the note's lock
# held (``note_lock``): (path, the bytes written or None: removed, the bytes they replaced or None:
# there were none). The daemon's vault watcher reads a note under that same lock, so it sees the
# note either before a write or after it and told of it, never in between: routine's own writes
# never trigger anything, and a save of the person's, before or after routine's, always does.
WriteListener = Callable[[Path, "bytes | None", "bytes | None"], None]
_write_listeners: list[WriteListener] = []


def add_write_listener(listener: WriteListener) -> None:
    _write_listeners.append(listener)


def remove_write_listener(listener: WriteListener) -> None:
    if listener in _write_listeners:
        _write_listeners.remove(listener)


def _announce(path: Path, data: bytes | None, before: bytes | None = None) -> None:
    for listener in list(_write_listeners):
        try:
            listener(Path(path), data, before)
        except Exception:  # a listener's bug must never stop a write
            import logging

            logging.getLogger(__name__).exception("write listener failed")


class NotARegularFile(RoutineError):
    """Something other than a regular file sits where a note should be."""


class NoteChanged(Exception):
    """The note's bytes changed between routine reading it and replacing it (the person was
    typing). The caller reads again and redoes its change; nothing was written."""


_LEFTOVER = re.compile(re.escape(TEMP_MARKER) + r"(?:(\d+)-)?[0-9a-f]{8}\Z")
# Routine's own threads check and rename one note in turn, and the vault watcher reads it in turn
# with them: a lock per note, from a fixed set (a daemon that runs for months writes many notes;
# two notes may share a lock, which only orders them). Reentrant: a write listener may read the note.
_PATH_LOCKS = tuple(threading.RLock() for _ in range(64))
STALE_SECONDS = 3600.0  # a temp file this old is a leftover whatever its pid says (pids are reused)


def _is_leftover(path: Path, pid: str | None) -> bool:
    try:
        age = time.time() - os.lstat(path).st_mtime
    except OSError:
        return False
    if age > STALE_SECONDS or (pid is None and age > 60):
        return True
    if pid is None:
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OverflowError):
        return False
    return False


def sweep_temp_files(vault_root: Path) -> list[str]:
    """Remove temp files left by a routine process that died mid-write (kill -9, power cut):
    hidden, but sync tools see them. Returns the vault-relative paths removed."""
    removed = []
    for folder, subfolders, files in os.walk(vault_root):
        subfolders[:] = [d for d in subfolders if d not in (".git", ".obsidian", ".trash")]
        for name in files:
            match = _LEFTOVER.search(name) if name.startswith(".") else None
            path = Path(folder, name)
            if match and _is_leftover(path, match.group(1)):
                remove_quietly(path)
                removed.append(path.relative_to(vault_root).as_posix())
    return removed


def _real_target(path: Path) -> Path:
    # Writing through a symlinked note must update the note it points to, not replace the link.
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def atomic_write(path: Path, text: str | bytes, *, expected: bytes | None = None) -> None:
    """Replace (or create) the file at ``path`` with ``text``, atomically.

    ``expected``: the bytes the caller read; if the file no longer holds exactly them when
    the rename is due, nothing is written and NoteChanged is raised. A save that lands on the
    old file after that check (the editor opened it just before the rename) is not lost: once
    nobody holds the old file open for writing, its bytes are read, and the person's edit is
    carried onto the new version (``vault/merge.py``).
    """
    path = _real_target(Path(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    data = text if isinstance(text, bytes) else text.encode("utf-8", errors="surrogateescape")
    late = _replace(path, data, expected)
    if late is not None and expected is not None:
        _carry_over(path, expected, data, late)


def note_lock(path: Path) -> threading.RLock:
    """The lock routine holds while it writes the note at ``path`` (any spelling of it)."""
    return _PATH_LOCKS[hash(os.path.realpath(path)) % len(_PATH_LOCKS)]


def _replace(path: Path, data: bytes, expected: bytes | None, check: bool = True) -> bytes | None:
    """One rename, checked first against ``expected`` (unless ``check`` is off: then it carries a
    save of the person's over, and is not announced as routine's own); returns the old file's bytes
    when they are not ``expected`` after the rename (a save landed on it). Two of routine's threads
    never check and rename the same note at once: both would pass the check, and the second rename
    would drop the first one's change (two task pickups finishing together)."""
    with note_lock(path):
        return _replace_locked(path, data, expected, check)


def _replace_locked(path: Path, data: bytes, expected: bytes | None, check: bool) -> bytes | None:
    temp = write_temp(path, data)
    old = None
    try:
        try:
            # O_NONBLOCK: a named pipe at the note's path must not hang the write (it is refused).
            old = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK)
            st = os.fstat(old)
            if not stat.S_ISREG(st.st_mode):
                raise NotARegularFile(
                    f"{path} is not a regular file (a pipe, a device?), so routine did not replace it.",
                    "remove it, or point the step at a note.",
                )
            os.chmod(temp, stat.S_IMODE(st.st_mode))
        except FileNotFoundError:
            pass
        current = _read_fd(old) if old is not None and (expected is not None or _write_listeners) else None
        if expected is not None and check:
            # Text the person added at the end meanwhile is carried over after the rename;
            # any other edit means the change must be worked out again from their text.
            if current is None or not current.startswith(expected):
                raise NoteChanged(str(path))
        atomicfile.commit(temp, path)
        if check:
            _announce(path, data, current)
    except BaseException:
        remove_quietly(temp)
        if old is not None:
            os.close(old)
        raise
    if old is None:
        return None
    if expected is None:
        os.close(old)
        return None
    try:
        _wait_for_writers(old)
        late = _read_fd(old)
    finally:
        os.close(old)
    return late if late != expected else None


def _read_fd(fd: int) -> bytes:
    chunks, offset = [], 0
    while chunk := os.pread(fd, 1 << 20, offset):
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def _wait_for_writers(fd: int, limit: float = 2.0) -> None:
    """Until no process holds the replaced file open for writing (a read lease is granted only
    then; it is dropped at once). Nobody can open it anew: its name now holds the new file."""
    try:
        if os.fstat(fd).st_nlink != 0:  # still reachable by another hard link: no lease games
            return
    except OSError:
        return
    deadline = time.monotonic() + limit
    pause = 0.0005
    while True:
        try:
            fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)
            fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
            return
        except OSError as exc:
            if exc.errno != errno.EAGAIN or time.monotonic() > deadline:
                return  # leases unsupported here (network file system, not the owner): read now
        time.sleep(pause)  # an editor is between its open and its close: a few milliseconds
        pause = min(pause * 2, 0.02)


def _carry_over(path: Path, base: bytes, ours: bytes, theirs: bytes) -> None:
    """The person's save (``base`` → ``theirs``) landed on the replaced file: put their edit into
    the note, which now holds ``ours`` plus whatever they saved since. No compare before this
    rename (an editor saving every few milliseconds would win every time): what lands on the
    file it replaces is carried over in the next round, which only grows shorter."""
    for _ in range(100):
        if theirs.startswith(base):  # they appended (a log, a quick capture): append it here too
            _append_in_place(path, theirs[len(base):])
            return
        wanted = merge3(base, ours, theirs)
        if wanted is None:
            wanted = theirs  # the same lines changed on both sides: the person's words win
        disk = _read_or_none(path)
        if disk is None:
            disk = b""
        if disk != ours:
            wanted = merge3(ours, wanted, disk) or disk + b"\n" + wanted
        late = _replace(path, wanted, disk, check=False)
        if late is None:
            return
        base, ours, theirs = disk, wanted, late
    import logging

    logging.getLogger(__name__).error("%s: a save landing while routine wrote could not be carried over", path)


def _append_in_place(path: Path, data: bytes) -> None:
    """Add the person's appended bytes at the end of the note, as their editor would have: an
    O_APPEND write interleaves safely with their next appends, where a rename would race them."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o666)
    try:
        if os.fstat(fd).st_size and not _ends_with_newline(path) and not data.startswith(b"\n"):
            data = b"\n" + data
        atomicfile.append_durably(fd, data)
    finally:
        os.close(fd)


def _ends_with_newline(path: Path) -> bool:
    with open(path, "rb") as handle:
        handle.seek(-1, os.SEEK_END)
        return handle.read(1) == b"\n"


def _read_or_none(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def atomic_create(path: Path, text: str) -> None:
    """Create a new file at ``path`` with ``text``; NoteExists if anything is there already.

    A note that appears meanwhile is never replaced (``atomicfile.create``).
    """
    data = text.encode("utf-8", errors="surrogateescape")
    with note_lock(path):
        try:
            atomicfile.create(path, data)
        except FileExistsError:
            raise NoteExists(f"A note already exists at {path}; routine never replaces a whole note.",
                             "nothing to do: the new text was not written there.") from None
        _announce(Path(path), data)


def remove_note(path: Path) -> None:
    """Remove a note routine itself wrote or moved (an archived proposal's old place)."""
    with note_lock(path):
        os.unlink(path)
        _announce(Path(path), None)
    fsync_dir(Path(path).parent)
