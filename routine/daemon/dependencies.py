"""What the daemon depends on, checked: each model server whose residency routine manages, the
vault readable and writable, free space where routine writes (the state dir and the vault), the
scheduler and the watcher.

Each check is a ``Check`` with the cause key (``routine.causes``) it clears when it passes, so
a shared alert resolves itself and a slot that failed on it is retried.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from routine.causes import VAULT_UNWRITABLE, disk_full
from routine.causes import server as server_cause
from routine.errors import RoutineError
from routine.models import providers

if TYPE_CHECKING:
    from routine.config.model import Config

MIN_FREE_BYTES = 32 * 2**20  # below this a disk counts as full: SQLite and atomic writes need room
SERVER_TIMEOUT = 3.0
SERVER = "ollama"  # a managed model server's check, named as status and the metrics (check="ollama") show it


@dataclass
class Check:
    name: str           # SERVER | vault | state disk | vault disk | scheduler | watcher
    target: str         # a host or a path
    ok: bool
    detail: str = ""    # why not, for the person
    cause: str | None = None  # the cause key this check clears when it passes
    models: set[str] = field(default_factory=set)  # for SERVER: the models pulled there

    def sentence(self) -> str:
        return f"{self.name} ({self.target}): {self.detail}"

    def as_dict(self) -> dict[str, str | bool]:
        return {"name": self.name, "target": self.target, "ok": self.ok, "detail": self.detail}


def server(host: str) -> Check:
    try:
        models = providers.pulled(host, timeout=SERVER_TIMEOUT)
    except RoutineError as exc:
        return Check(SERVER, host, False, "not reachable: " + exc.message, server_cause(host).key)
    return Check(SERVER, host, True, cause=server_cause(host).key, models=models)


def vault(root: Path) -> Check:
    """Readable (listed) and writable (access(2): permissions and a read-only mount). No probe
    file is written: a file created every minute would churn sync tools and the watcher."""
    try:
        os.listdir(root)
    except OSError as exc:
        return Check("vault", str(root), False, f"not readable: {exc.strerror or exc}", VAULT_UNWRITABLE.key)
    if not os.access(root, os.W_OK | os.X_OK):
        try:
            read_only = bool(os.statvfs(root).f_flag & os.ST_RDONLY)
        except OSError:
            read_only = False
        why = "its file system is mounted read-only" if read_only else "permission denied"
        return Check("vault", str(root), False, f"not writable: {why}", VAULT_UNWRITABLE.key)
    return Check("vault", str(root), True, cause=VAULT_UNWRITABLE.key)


def free_space(name: str, path: Path, cause: str) -> Check:
    try:
        free = shutil.disk_usage(path).free
    except OSError as exc:
        return Check(name, str(path), False, f"cannot be measured: {exc.strerror or exc}", cause)
    if free < MIN_FREE_BYTES:
        return Check(name, str(path), False, f"full: {free / 2**20:.1f} MiB free, routine needs "
                     f"{MIN_FREE_BYTES / 2**20:.0f} MiB", cause)
    return Check(name, str(path), True, cause=cause)


def check_all(config: Config, state_dir: Path) -> list[Check]:
    """Every dependency of the config in force (each managed model server, the vault, both disks)."""
    checks = [server(host) for host in config.managed_hosts]
    checks.append(vault(config.vault))
    checks.append(free_space("state disk", state_dir, disk_full("state").key))
    checks.append(free_space("vault disk", config.vault, disk_full("vault").key))
    return checks


def clears(checks: list[Check], cause: str) -> bool | None:
    """Whether the checks show ``cause`` gone (True), still there (False), or cannot tell (None)."""
    if cause.startswith("model:"):
        model, _, host = cause[len("model:"):].rpartition("@")
        found = next((c for c in checks if c.name == SERVER and c.target == host), None)
        if found is None:
            return None
        return found.ok and model in found.models
    found = next((c for c in checks if c.cause == cause), None)
    return None if found is None else found.ok
