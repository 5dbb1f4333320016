"""The one atomic file writer: a file is either its old bytes or its new bytes, and stays so
after a power cut (a Jetson on a desk does lose power).

The bytes go to a hidden temp file beside the target (a leading '.' and no reader's suffix keep
Obsidian, sync tools, node_exporter, systemd and our own watcher away from it), are fsynced,
given their mode, and renamed over the target (or hard-linked to a new name); then the folder
is fsynced so the rename itself survives. Notes go through ``routine.vault.atomic``, which adds
its checks (the person's concurrent edits) on top of these pieces; routine's own files (the
metrics textfile, units, the index meta, the seal key) call ``replace``/``create`` directly.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from pathlib import Path

TEMP_MARKER = ".routine-tmp-"

# Errors of a file system that cannot hard-link (FAT on an SD card, some FUSE mounts).
_NO_LINKS = (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK, errno.EXDEV, errno.ENOSYS)


def _as_bytes(data: str | bytes) -> bytes:
    # surrogateescape gives back, unchanged, bytes of a note that were not valid UTF-8.
    return data if isinstance(data, bytes) else data.encode("utf-8", errors="surrogateescape")


def temp_name(path: Path) -> str:
    """A hidden name beside ``path``: under the 255-byte limit of most file systems, with the
    writer's pid (a sweep tells a leftover from a write under way) and a random part."""
    stem = path.name.encode("utf-8", errors="surrogateescape")[:150].decode("utf-8", errors="ignore")
    return f".{stem}{TEMP_MARKER}{os.getpid()}-{secrets.token_hex(4)}"


def remove_quietly(path: Path) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def write_temp(path: Path, data: bytes, mode: int | None = None) -> Path:
    """Write ``data`` to a new hidden file beside ``path``, fsynced; returns its path. ``mode``
    is set explicitly (a service's UMask=0077 would hide it from other readers); without it the
    umask applies as for any new file."""
    for _ in range(100):
        temp = path.parent / temp_name(path)
        try:
            # O_EXCL: no file is reused, whichever thread or process writes beside it.
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
        except FileExistsError:
            continue
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            if mode is not None:
                os.chmod(temp, mode)
        except BaseException:
            remove_quietly(temp)
            raise
        return temp
    raise FileExistsError(errno.EEXIST, "no free temp file name", str(path.parent))


def fsync_dir(folder: Path) -> None:
    """Make a rename, link or unlink in ``folder`` durable."""
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


def commit(temp: Path, path: Path) -> None:
    """Rename the written ``temp`` over ``path`` and make it durable; the temp is gone after."""
    try:
        os.replace(temp, path)
    except BaseException:
        remove_quietly(temp)
        raise
    fsync_dir(path.parent)


def commit_file(temp: Path, path: Path) -> None:
    """A file another library wrote at ``temp`` (beside ``path``) made durable, then renamed over
    ``path`` (``commit``): e.g. the search model exported once to ONNX."""
    fd = os.open(temp, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    commit(temp, path)


def replace(path: Path, data: str | bytes, mode: int | None = None) -> None:
    """Replace (or create) the file at ``path`` with ``data``, atomically and durably. It keeps
    the mode of the file it replaces unless ``mode`` is given."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if mode is None:
        try:
            mode = stat.S_IMODE(os.stat(path).st_mode)
        except FileNotFoundError:
            pass
    commit(write_temp(path, _as_bytes(data), mode), path)


def replace_if_changed(path: Path, text: str, mode: int = 0o644) -> bool:
    """Write ``text`` to ``path`` unless it holds exactly that already; True if written."""
    path = Path(path)
    try:
        if path.read_text(encoding="utf-8") == text:
            return False
    except (OSError, UnicodeDecodeError):
        pass
    replace(path, text, mode)
    return True


def create(path: Path, data: str | bytes, mode: int | None = None) -> None:
    """Create a new file at ``path``; FileExistsError if anything is there already.

    The fully written temp file is hard-linked to the name, which fails if the name exists: a
    file that appears meanwhile is never replaced. File systems without hard links get an
    O_EXCL create instead, as safe for the file already there, though a crash mid-write could
    leave the new file partial.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = _as_bytes(data)
    temp = write_temp(path, data, mode)
    try:
        os.link(temp, path)
    except FileExistsError:
        raise
    except OSError as exc:
        if exc.errno not in _NO_LINKS:
            raise
        _create_exclusive(path, data, 0o666 if mode is None else mode)
    finally:
        remove_quietly(temp)
    fsync_dir(path.parent)


def _create_exclusive(path: Path, data: bytes, mode: int) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | os.O_NOFOLLOW, mode)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        remove_quietly(path)  # ours, half-written: nobody's words in it
        raise


def append_durably(fd: int, data: bytes) -> None:
    """Write all of ``data`` to an O_APPEND ``fd`` and fsync it."""
    while data:
        data = data[os.write(fd, data):]
    os.fsync(fd)


def secret_key(path: Path) -> bytes:
    """The 32 random bytes kept at ``path`` (mode 0600), made once: a second process that races to
    make it uses the first one's (the proposals' seal, the answers' tokens)."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    key = secrets.token_bytes(32)
    try:
        create(path, key, mode=0o600)
    except FileExistsError:  # another process made it first: use theirs
        return path.read_bytes()
    return key
