"""The systemd units routine ships (``systemd/``), rendered with this machine's real paths.

The shipped files assume ``routine`` on the PATH and the default vault and state dir;
``render`` puts in the venv's ``routine``, the config, vault and state dir (the only writable
paths of the sandbox), and the addresses of every host the config makes routine talk to
(``routine.host.peers``: Ollama, the models' servers, the notify and calendar servers), resolved now:
the only ones the IP filter lets through besides loopback.
"""

from __future__ import annotations

import ipaddress
import os
import re
import socket
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from routine import paths
from routine.host.peers import Peer, PeerConfig, peers

SYSTEM_TEMPLATE = "routine@.service"
USER_UNIT = "routine.service"


@dataclass
class Install:
    """What goes into a rendered unit."""

    exec_start: list[str]
    config: Path
    state: Path
    writable: list[Path]
    environment: dict[str, str]
    allow_ips: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    resolved: list[Resolved] = field(default_factory=list)


@dataclass(frozen=True)
class Resolved:
    """A host the service talks to and the addresses its name stood for at install time."""

    peer: Peer
    addresses: tuple[str, ...]  # empty: the name did not resolve

    def said(self) -> str:
        """One line for `routine service install`: the name, why, and what it resolved to."""
        to = ", ".join(self.addresses) if self.addresses else "not resolved"
        return f"{self.peer.host} ({self.peer.what}) → {to}"


def unit_name(user_unit: bool, person: str) -> str:
    return USER_UNIT if user_unit else f"routine@{person}.service"


def shipped_text(user_unit: bool) -> str:
    return (paths.shipped("systemd") / (USER_UNIT if user_unit else SYSTEM_TEMPLATE)).read_text(encoding="utf-8")


def routine_command() -> list[str]:
    """How to start this very routine: the venv's ``routine`` script, else ``python -m routine``."""
    beside = Path(sys.executable).parent / "routine"  # not resolved: the venv's python is a symlink
    if beside.is_file() and os.access(beside, os.X_OK):
        return [str(beside.absolute())]
    return [str(Path(sys.executable).absolute()), "-m", "routine"]


def unit_dir(user_unit: bool) -> Path:
    """Where `routine service install` writes the unit (``ROUTINE_SYSTEMD_DIR`` for packagers, tests)."""
    if os.environ.get("ROUTINE_SYSTEMD_DIR"):
        return Path(os.environ["ROUTINE_SYSTEMD_DIR"]).expanduser()
    if user_unit:
        base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
        return Path(base) / "systemd" / "user"
    return Path("/etc/systemd/system")


class InstallConfig(PeerConfig, Protocol):
    """What a unit needs of the loaded config (``routine.config.model.Config``, a layer up)."""

    @property
    def path(self) -> Path: ...
    @property
    def vault(self) -> Path: ...
    @property
    def metrics_textfile(self) -> Path | None: ...


def gather(config: InstallConfig, state: Path) -> Install:
    """Paths, environment and addresses for ``config`` and ``state``."""
    writable = [config.vault, state]
    textfile = config.metrics_textfile
    if textfile is not None and not any(_inside(textfile, p) for p in writable):
        writable.append(textfile.parent)
    for p in list(writable):
        real = Path(os.path.realpath(p))
        if real != p and real not in writable:
            writable.append(real)  # a symlinked vault: the sandbox needs the real folder writable
    resolved = resolve(peers(config))
    allow = allowed_addresses(resolved)
    warnings = [f"could not resolve {r.peer.host} ({r.peer.what}): add its address to IPAddressAllow= in the unit, "
                "or run `routine service install` again once it resolves" for r in resolved if not r.addresses]
    env = {"ROUTINE_CONFIG": str(config.path.absolute()), "ROUTINE_STATE_DIR": str(state),
           "OLLAMA_HOST": config.ollama_host}
    return Install(exec_start=routine_command() + ["run"], config=config.path.absolute(), state=state,
                   writable=writable, environment=env, allow_ips=allow, warnings=warnings, resolved=resolved)


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.relative_to(folder)
        return True
    except ValueError:
        return False


def resolve(hosts: list[Peer]) -> list[Resolved]:
    """Each host's addresses now (an address stands for itself); loopback, always let through, left out."""
    found = []
    for peer in hosts:
        every = host_addresses(peer.host)
        if peer.host == "localhost" or (every and all(ip.is_loopback for ip in every)):
            continue
        found.append(Resolved(peer, tuple(str(ip) for ip in every if not ip.is_loopback)))
    return found


def host_addresses(host: str) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    """The addresses ``host`` stands for: itself when it is one, else what its name resolves to ([] if not)."""
    try:
        return [ipaddress.ip_address(host)]
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None)
    except (OSError, UnicodeError):
        return []
    found = []
    for info in infos:
        try:
            found.append(ipaddress.ip_address(str(info[4][0]).split("%")[0]))
        except ValueError:
            continue
    return list(dict.fromkeys(found))


def allowed_addresses(resolved: list[Resolved]) -> list[str]:
    """IPAddressAllow= besides localhost: every resolved address, and the DNS servers when a name was
    resolved (the service resolves it again at run time)."""
    found = [a for r in resolved for a in r.addresses]
    if any(not _is_address(r.peer.host) for r in resolved):
        found += [ns for ns in nameservers() if not ipaddress.ip_address(ns).is_loopback]
    return list(dict.fromkeys(found))


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        return False


def nameservers(resolv_conf: str = "/etc/resolv.conf") -> list[str]:
    try:
        text = Path(resolv_conf).read_text()
    except OSError:
        return []
    out = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] == "nameserver":
            try:
                out.append(str(ipaddress.ip_address(parts[1].split("%")[0])))
            except ValueError:
                continue
    return out


def quote(value: str) -> str:
    """One word of a unit file: specifiers escaped, quoted when it holds spaces or quotes."""
    value = value.replace("%", "%%")
    if re.search(r"[\s\"'\\;]", value):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return value


def render(text: str, install: Install) -> str:
    """The shipped unit ``text`` with the real paths of ``install`` in place of the defaults."""
    header = ("# Written by `routine service install` from routine's shipped unit. Run it again after\n"
              "# moving the vault, the state dir or routine itself, or after routine.yaml names another host\n"
              "# (Ollama, a model's server, a notify or calendar URL): only these get through IPAddressAllow=.\n")
    header += "".join(f"#   {r.said()}\n" for r in install.resolved)
    lines = text.splitlines()
    body = lines[next(i for i, line in enumerate(lines) if not line.startswith("#")):]
    out: list[str] = []
    env_done = False
    for line in body:
        key = line.split("=", 1)[0] if "=" in line and not line.startswith("#") else None
        if key == "ExecStart":
            line = "ExecStart=" + " ".join(quote(part) for part in install.exec_start)
        elif key == "ReadWritePaths":
            line = "ReadWritePaths=" + " ".join(quote(str(p)) for p in install.writable)
        elif key == "IPAddressAllow":
            line = "IPAddressAllow=" + " ".join(["localhost", *install.allow_ips])
        out.append(line)
        if key == "Environment" and not env_done:
            env_done = True
            out += [f"Environment={quote(f'{k}={v}')}" for k, v in install.environment.items()]
    return header + "\n".join(out) + "\n"
