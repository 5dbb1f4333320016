"""`routine service install [--user] [--print]`: install and start the systemd unit.

The system unit (``routine@PERSON.service``, run as the person whose vault it is) needs root
to install: run with sudo, or without it to get the file staged and the exact commands to
run. The user unit installs into the person's own service manager. Where systemd cannot be
reached (a container, CI), the unit is written and the commands are printed instead.
Environment: ``ROUTINE_SYSTEMD_DIR`` writes units to another folder; ``ROUTINE_SYSTEMCTL``
names the systemctl to run (both for packagers and tests).
"""

from __future__ import annotations

import argparse
import getpass
import os
import pwd
import shlex
import shutil
import subprocess
from pathlib import Path

from routine import paths
from routine.atomicfile import replace_if_changed
from routine.config.loader import load_config
from routine.errors import EXIT_JOB_FAILED, UsageError
from routine.host import daemonlock as lock
from routine.host import units


def run(args: argparse.Namespace) -> int:
    if getattr(args, "service_command", None) != "install":
        raise UsageError("Say what to do with the service.", "run `routine service install [--user]`.")
    person, home = _person(args.user)
    if os.geteuid() == 0 and not args.user and "ROUTINE_CONFIG" not in os.environ and not args.config:
        _as_person(home)  # under sudo: the person's config and state, not root's

    config = load_config(args.config)
    state = paths.state_dir().absolute()
    install = units.gather(config, state)
    name = units.unit_name(args.user, person)
    text = units.render(units.shipped_text(args.user), install)
    scope = ["--user"] if args.user else []
    if args.print:
        print(text, end="")
        print(f"\n# To install: write the above to {units.unit_dir(args.user) / name}, then:")
        for command in _commands(scope, name):
            print("#   " + shlex.join(command))
        return 0
    if install.resolved:
        print("The unit's IP filter lets through loopback and these hosts (resolved now):")
        for resolved in install.resolved:
            print(f"  {resolved.said()}")
    for warning in install.warnings:
        print(f"warning: {warning}")
    if not config.vault.is_dir():
        raise UsageError(f"The vault {config.vault} does not exist.", f"run `routine init {config.vault}` first.")
    _mkdir_for(state, person)
    target_dir = units.unit_dir(args.user)
    can_manage = args.user or os.geteuid() == 0 or "ROUTINE_SYSTEMD_DIR" in os.environ
    target = (target_dir if can_manage else state / "systemd") / name
    changed = replace_if_changed(target, text, mode=0o644)
    print(f"{'Wrote' if changed else 'Unchanged:'} {target}")
    if not can_manage:
        return _print_steps([["install", "-m", "0644", str(target), str(target_dir / name)], *_commands([], name)],
                            "As root, install and start it:", sudo=True)
    systemctl = _systemctl(args.user)
    if systemctl is None:
        return _print_steps(
            _commands(scope, name), "systemd is not running here; where it is, run:", sudo=not args.user
        )
    return _enable(systemctl, scope, name, changed, args.user, person, state)


def _person(user_unit: bool) -> tuple[str, Path]:
    """Whose vault: the person running this, or under sudo the one who ran sudo."""
    name = getpass.getuser()
    if os.geteuid() == 0 and not user_unit:
        name = os.environ.get("SUDO_USER") or name
        if name == "root":
            raise UsageError("The service would run as root.",
                             "run `routine service install` as the person whose vault it is (with sudo, or "
                             "without it to get the commands to run), or use --user.")
    try:
        return name, Path(pwd.getpwnam(name).pw_dir)
    except KeyError:
        return name, Path.home()


def _as_person(home: Path) -> None:
    os.environ["HOME"] = str(home)
    for var in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR"):
        os.environ.pop(var, None)


def _mkdir_for(folder: Path, person: str) -> None:
    """Create ``folder`` (the sandbox needs it to exist), owned by the person under sudo."""
    missing = [p for p in [folder, *folder.parents] if not p.exists()]
    folder.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0 and missing:
        try:
            entry = pwd.getpwnam(person)
        except KeyError:
            return
        for p in missing:
            os.chown(p, entry.pw_uid, entry.pw_gid)


def _commands(scope: list[str], name: str) -> list[list[str]]:
    return [["systemctl", *scope, "daemon-reload"], ["systemctl", *scope, "enable", "--now", name]]


def _systemctl(user_unit: bool) -> str | None:
    """The systemctl to run, or None when no service manager can be reached here."""
    if os.environ.get("ROUTINE_SYSTEMCTL"):
        return os.environ["ROUTINE_SYSTEMCTL"]
    binary = shutil.which("systemctl")
    if binary is None or not Path("/run/systemd/system").is_dir():  # systemd is not PID 1
        return None
    if user_unit:
        runtime = os.environ.get("XDG_RUNTIME_DIR")
        if not runtime or not (Path(runtime) / "systemd" / "private").exists():
            return None  # no user manager (a bare su, a container): print the commands
    return binary


def _print_steps(commands: list[list[str]], intro: str, sudo: bool) -> int:
    print(intro)
    for command in commands:
        print("  " + ("sudo " if sudo else "") + shlex.join(command))
    return 0


def _enable(systemctl: str, scope: list[str], name: str, changed: bool, user_unit: bool, person: str,
            state: Path) -> int:
    active = _quiet([systemctl, *scope, "is-active", "--quiet", name]) == 0
    steps = [[systemctl, *scope, "daemon-reload"]]
    running = None if active else lock.holder(state)
    if running:
        print(f"A routine daemon (pid {running}) runs outside this unit (in a terminal?): enabling the service "
              f"without starting it. Stop that daemon, then: {shlex.join(['systemctl', *scope, 'start', name])}")
        steps.append([systemctl, *scope, "enable", name])
    else:
        steps.append([systemctl, *scope, "enable", "--now", name])
        if active and changed:
            steps.append([systemctl, *scope, "restart", name])  # the new unit takes effect now
    for command in steps:
        proc = subprocess.run(command, capture_output=True, text=True)
        if proc.returncode != 0:
            print(f"routine: `{shlex.join(command)}` failed: {(proc.stderr or proc.stdout).strip()}")
            return EXIT_JOB_FAILED
    shown = f"systemctl {'--user ' if user_unit else ''}status {name}"
    logs = f"journalctl {'--user ' if user_unit else ''}-u {name}"
    print(f"Enabled {name}. See it with `{shown}` and `{logs}`.")
    if user_unit and not Path("/var/lib/systemd/linger", person).exists():
        print(f"So that it also runs while you are logged out: loginctl enable-linger {person}")
    return 0


def _quiet(command: list[str]) -> int:
    try:
        return subprocess.run(command, capture_output=True).returncode
    except OSError:
        return 1
