"""Where routine keeps its files: config, state, runtime, and the files it ships.

One environment variable per kind so tests (and people) can isolate them:
``ROUTINE_CONFIG`` (the config file), ``ROUTINE_STATE_DIR`` (journal, job store, index),
``ROUTINE_RUNTIME_DIR`` (control socket). Otherwise the XDG base directories apply; the CLI
also looks for the system unit's socket in ``/run/routine/USER``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

APP = "routine"


def _xdg(var: str, default: str) -> Path:
    value = os.environ.get(var)
    return Path(value) if value else Path.home() / default


def config_file(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The config file: ``--config``, else ``ROUTINE_CONFIG``, else the XDG location."""
    if explicit:
        return Path(explicit).expanduser()
    if os.environ.get("ROUTINE_CONFIG"):
        return Path(os.environ["ROUTINE_CONFIG"]).expanduser()
    return _xdg("XDG_CONFIG_HOME", ".config") / APP / "routine.yaml"


def state_dir() -> Path:
    if os.environ.get("ROUTINE_STATE_DIR"):
        return Path(os.environ["ROUTINE_STATE_DIR"]).expanduser()
    return _xdg("XDG_STATE_HOME", ".local/state") / APP


def runtime_dir() -> Path:
    if os.environ.get("ROUTINE_RUNTIME_DIR"):
        return Path(os.environ["ROUTINE_RUNTIME_DIR"]).expanduser()
    base = os.environ.get("XDG_RUNTIME_DIR")
    # Without a runtime dir (a bare ssh session, a container) the state dir is the safe fallback.
    return Path(base) / APP if base else state_dir() / "run"


def system_runtime_dir(user: str | None = None) -> Path:
    """Where the system unit (routine@USER.service) keeps its control socket: its
    RuntimeDirectory, which exists without a login session."""
    import getpass

    return Path("/run") / APP / (user or getpass.getuser())


def journal_file() -> Path:
    return state_dir() / "journal.sqlite3"


def shipped(name: str) -> Path:
    """A folder routine ships (``vault_templates``, ``schedules``, ``systemd``).

    From a checkout or an editable install it sits beside the package; from a wheel it is
    installed as data under ``<prefix>/share/routine``.
    """
    beside = Path(__file__).resolve().parent.parent / name
    if beside.is_dir():
        return beside
    return Path(sys.prefix) / "share" / APP / name
