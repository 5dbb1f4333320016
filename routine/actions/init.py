"""`routine init [VAULT]`: the vault skeleton, the config file and the default schedules.

Never overwrites: an existing note, config or schedule file is kept as it is and reported.
"""

from __future__ import annotations

import argparse
import re
import shutil
from pathlib import Path

from routine import paths
from routine.config.loader import load_config
from routine.errors import UsageError

DEFAULT_VAULT = "~/Vault"


def run(args: argparse.Namespace) -> int:
    config_path = paths.config_file(args.config)
    vault = _vault_from(args.vault, config_path)
    created, kept = [], []

    if config_path.exists():
        _same_vault_or_say_so(vault, config_path)
        kept.append(str(config_path))
    else:
        config_path.parent.mkdir(parents=True, exist_ok=True)
        example = (paths.shipped("schedules").parent / "routine.example.yaml").read_text(encoding="utf-8")
        text = re.sub(r"(?m)^vault:.*$", f"vault: {_yaml_str(str(vault))}", example, count=1)
        config_path.write_text(text, encoding="utf-8")
        created.append(str(config_path))

    schedules = config_path.parent / "schedules"
    for src in sorted(paths.shipped("schedules").glob("*.yaml")):
        _copy_new(src, schedules / src.name, created, kept, label=str(schedules / src.name))

    templates = paths.shipped("vault_templates")
    vault.mkdir(parents=True, exist_ok=True)
    for src in sorted(templates.rglob("*")):
        rel = src.relative_to(templates)
        dest = vault / rel
        if src.is_dir():
            dest.mkdir(parents=True, exist_ok=True)
        elif src.name == ".keep":  # marks a folder the skeleton needs, not a note
            dest.parent.mkdir(parents=True, exist_ok=True)
        else:
            _copy_new(src, dest, created, kept, label=rel.as_posix())

    print(f"Vault: {vault}")
    print(f"Config: {config_path}")
    for path in created:
        print(f"  created {path}")
    if kept:
        print(f"  kept {len(kept)} existing file{'s' if len(kept) != 1 else ''} as they were")
    print("Next: `routine doctor`, then `routine fire strategist`.")
    return 0


def _same_vault_or_say_so(vault: Path, config_path: Path) -> None:
    """A config that already names another vault is kept, and a person asking for a new one is told."""
    configured = load_config(config_path).vault
    if configured.expanduser().resolve() != vault.expanduser().resolve():
        raise UsageError(
            f"{config_path} already uses the vault {configured}; nothing was created in {vault}.",
            f"to switch, set `vault: {vault}` in {config_path} and run `routine init` again; "
            f"for a second setup, `routine --config OTHER.yaml init {vault}`.")


def _vault_from(arg: str | None, config_path: Path) -> Path:
    if arg:
        return Path(arg).expanduser().resolve()
    if config_path.exists():
        return load_config(config_path).vault
    return Path(DEFAULT_VAULT).expanduser()


def _copy_new(src: Path, dest: Path, created: list[str], kept: list[str], label: str) -> None:
    if dest.exists() or dest.is_symlink():
        kept.append(label)
        return
    dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        # "x": never replace a file that appeared since we looked.
        with open(dest, "xb") as out, open(src, "rb") as inp:
            shutil.copyfileobj(inp, out)
    except FileExistsError:
        kept.append(label)
        return
    except OSError as exc:
        raise UsageError(f"Could not create {dest}: {exc.strerror}.", "check that the folder is writable.") from None
    created.append(label)


def _yaml_str(value: str) -> str:
    return value if re.fullmatch(r"[\w./~-]+", value) else '"' + value.replace('"', '\\"') + '"'
