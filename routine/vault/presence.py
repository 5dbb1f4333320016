"""Is the vault there? A missing or empty vault folder (an unmounted disk, a sync not yet done)
is a state to wait out, never a vault to rebuild: nothing is written into it, the search
index is not emptied, and notes routine has already handled are not "new" when it returns."""

from __future__ import annotations

import os
from pathlib import Path

from routine.errors import VaultMissing

FIX = "mount or sync the vault folder, or correct `vault:` in routine.yaml; routine carries on once it is back."


def vault_problem(vault: Path, empty_is_missing: bool = True) -> str | None:
    """Why the vault cannot be used now (a phrase), or None when it can."""
    try:
        with os.scandir(vault) as entries:
            if empty_is_missing and next(entries, None) is None:
                return f"the vault folder {vault} is empty (an unmounted disk or a sync not done yet?)"
    except FileNotFoundError:
        return f"the vault folder {vault} does not exist (an unmounted disk?)"
    except NotADirectoryError:
        return f"the vault {vault} is not a folder"
    except OSError as exc:
        return f"the vault folder {vault} cannot be read ({exc.strerror or exc})"
    return None


def require_vault(vault: Path, empty_is_missing: bool = False) -> None:
    """Raise VaultMissing when the vault folder is not there (so no write ever creates it)."""
    why = vault_problem(vault, empty_is_missing)
    if why:
        raise VaultMissing(f"{why[:1].upper()}{why[1:]}, so routine wrote nothing there.", FIX)
