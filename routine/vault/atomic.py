"""Atomic note writes: a note is either its old bytes or its new bytes, never half of each.

The text goes to a hidden temp file beside the note (a leading '.' keeps Obsidian, sync
tools and our own file watcher away from it), is fsynced, and then renamed over the note;
the folder is fsynced so the rename survives a power cut (a Jetson on a desk does lose power).
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
import secrets
import stat
import time
from pathlib import Path

from routine.errors import NoteExists, RoutineError

TEMP_MARKER = ".routine-tmp-"

# Called with (path, bytes) just before routine puts bytes at path, and (path, None) before it
# removes a note: the daemon's vault watcher learns what its own writes look like, so they never
# trigger anything, while the person's next edit of the same note does.
_write_listeners: list = []


def add_write_listener(listener) -> None:
    _write_listeners.append(listener)


def remove_write_listener(listener) -> None:
    if listener in _write_listeners:
        _write_listeners.remove(listener)


def _announce(path: Path, data: bytes | None) -> None:
    for listener in list(_write_listeners):
        try:
            listener(Path(path), data)
        except Exception:  # a listener's bug must never stop a write
            import logging

            logging.getLogger(__name__).exception("write listener failed")


class NotARegularFile(RoutineError):
    """Something other than a regular file sits where a note should be."""


class NoteChanged(Exception):
    """The note's bytes changed between routine reading it and replacing it (the person was
    typing). The caller reads again and redoes its change; nothing was written."""


def _encode(text: str) -> bytes:
    # surrogateescape gives back, unchanged, bytes of a note that were not valid UTF-8.
    return text.encode("utf-8", errors="surrogateescape")


def _temp_name(path: Path) -> str:
    # Keep the whole name under the 255-byte limit of most file systems. The writer's pid is in
    # the name, so a sweep can tell a leftover (its process is gone) from a write under way.
    stem = path.name.encode("utf-8", errors="surrogateescape")[:150].decode("utf-8", errors="ignore")
    return f".{stem}{TEMP_MARKER}{os.getpid()}-{secrets.token_hex(4)}"


_LEFTOVER = re.compile(re.escape(TEMP_MARKER) + r"(?:(\d+)-)?[0-9a-f]{8}\Z")
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
                _remove_quietly(path)
                removed.append(path.relative_to(vault_root).as_posix())
    return removed


def _write_temp(path: Path, data: bytes) -> Path:
    """Write ``data`` to a new hidden file beside ``path``, fsynced; returns its path."""
    for _ in range(100):
        temp = path.parent / _temp_name(path)
        try:
            # 0o666 and O_EXCL: the umask applies as for any new note, and no file is reused.
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
        except FileExistsError:
            continue
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
        except BaseException:
            _remove_quietly(temp)
            raise
        return temp
    raise FileExistsError(errno.EEXIST, "no free temp file name", str(path.parent))


def _remove_quietly(path: Path) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:  # some file systems (FUSE, SMB) cannot fsync a folder; the rename stands
        pass
    finally:
        os.close(fd)


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
    data = text if isinstance(text, bytes) else _encode(text)
    late = _replace(path, data, expected)
    if late is not None and expected is not None:
        _carry_over(path, expected, data, late)


def _replace(path: Path, data: bytes, expected: bytes | None, check: bool = True) -> bytes | None:
    """One rename, checked first against ``expected`` (unless ``check`` is off); returns the old
    file's bytes when they are not ``expected`` after the rename (a save landed on it)."""
    temp = _write_temp(path, data)
    old = None
    try:
        try:
            # O_NONBLOCK: a named pipe at the note's path must not hang the write (it is refused).
            old = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK)
            st = os.fstat(old)
            if not stat.S_ISREG(st.st_mode):
                raise NotARegularFile(f"{path} is not a regular file (a pipe, a device?), so routine did not replace it.",
                                      "remove it, or point the step at a note.")
            os.chmod(temp, stat.S_IMODE(st.st_mode))
        except FileNotFoundError:
            pass
        if expected is not None and check:
            current = _read_fd(old) if old is not None else None
            # Text the person added at the end meanwhile is carried over after the rename;
            # any other edit means the change must be worked out again from their text.
            if current is None or not current.startswith(expected):
                raise NoteChanged(str(path))
        _announce(path, data)
        os.replace(temp, path)
    except BaseException:
        _remove_quietly(temp)
        if old is not None:
            os.close(old)
        raise
    fsync_dir(path.parent)
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
    from routine.vault.merge import merge3

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
        while data:
            data = data[os.write(fd, data):]
        os.fsync(fd)
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

    The fully written temp file is hard-linked to the name, which fails if the name exists:
    a note that appears meanwhile is never replaced. File systems without hard links (FAT on
    an SD card, some FUSE mounts) get an O_EXCL create instead, which is just as safe for the
    note already there, though a crash mid-write could leave the new note partial.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = _encode(text)
    temp = _write_temp(path, data)
    try:
        _announce(path, data)
        os.link(temp, path)
    except FileExistsError:
        raise NoteExists(f"A note already exists at {path}; routine never replaces a whole note.",
                         "nothing to do: the new text was not written there.") from None
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK, errno.EXDEV, errno.ENOSYS):
            raise
        _create_exclusive(path, data)
    finally:
        _remove_quietly(temp)
    fsync_dir(path.parent)


def _create_exclusive(path: Path, data: bytes) -> None:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | os.O_NOFOLLOW, 0o666)
    except FileExistsError:
        raise NoteExists(f"A note already exists at {path}; routine never replaces a whole note.",
                         "nothing to do: the new text was not written there.") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        _remove_quietly(path)  # ours, half-written: no person's words in it
        raise


def remove_note(path: Path) -> None:
    """Remove a note routine itself wrote or moved (an archived proposal's old place)."""
    _announce(Path(path), None)
    os.unlink(path)
    fsync_dir(Path(path).parent)
