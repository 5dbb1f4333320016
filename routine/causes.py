"""Why something failed, as one key per cause: what alerts are shared by, what health checks
watch, and what decides that a failed slot is retried once its dependency is back.

Keys: ``ollama:HOST`` (a model server not reachable; the key's word kept from when Ollama was the
only one, so alerts already open still match), ``model:MODEL@HOST`` (a model not pulled),
``vault-unwritable``, ``disk-full:state`` and ``disk-full:vault``.
"""

from __future__ import annotations

import errno
import sqlite3
from dataclasses import dataclass

from routine.errors import ModelMissing, ServerUnreachable, StateDiskFull, VaultUnwritable

DISK_FULL_ERRNOS = (errno.ENOSPC, errno.EDQUOT)
SQLITE_FULL = 13


@dataclass(frozen=True)
class Cause:
    key: str
    title: str  # the shared alert's title


_SERVER = "ollama"


def server(host: str) -> Cause:
    """A model server not reachable at ``host``."""
    return Cause(f"{_SERVER}:{host}", f"model server unreachable at {host.split('://')[-1]}")


def disk_full(where: str) -> Cause:
    return Cause(f"disk-full:{where}", f"{where} disk full")


VAULT_UNWRITABLE = Cause("vault-unwritable", "vault not writable")


def describe(key: str) -> str:
    """What a cause key is about, for a sentence: "Ollama at http://…", "the vault"."""
    kind, _, rest = key.partition(":")
    model, _, host = rest.rpartition("@")
    return {_SERVER: f"the model server at {rest}", "model": f"the model {model} at {host}",
            "vault-unwritable": "the vault", "disk-full": f"space on the {rest} disk"}.get(kind, key)


def cause_of(exc: BaseException) -> Cause | None:
    """The shared cause of a failure, or None for one that is the run's own (a bad reply…)."""
    if isinstance(exc, ServerUnreachable):
        return server(exc.host)
    if isinstance(exc, ModelMissing):
        return Cause(f"model:{exc.model}@{exc.host}", f"model {exc.model} missing")
    if isinstance(exc, VaultUnwritable):
        return disk_full("vault") if exc.disk_full else VAULT_UNWRITABLE
    if is_disk_full(exc):
        return disk_full("state")
    return None


def is_disk_full(exc: BaseException) -> bool:
    """An OSError or SQLite error saying the disk (or the quota) is full, or routine's own
    ``StateDiskFull`` (a state database that could not be opened for lack of room)."""
    if isinstance(exc, StateDiskFull):
        return True
    if isinstance(exc, OSError):
        return exc.errno in DISK_FULL_ERRNOS
    if isinstance(exc, sqlite3.Error):
        return getattr(exc, "sqlite_errorcode", None) == SQLITE_FULL or "disk is full" in str(exc)
    return False
