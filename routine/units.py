"""The systemd units routine ships (``systemd/``), rendered with this machine's real paths.

The shipped files assume ``routine`` on the PATH and the default vault and state dir;
``render`` puts in the venv's ``routine``, the config, vault and state dir (the only writable
paths of the sandbox), and the addresses of the configured Ollama hosts (the only ones the
IP filter lets through besides loopback).
"""

from __future__ import annotations

import ipaddress
import os
import re
import socket
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol
from urllib.parse import urlsplit

from routine import paths

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


class _ModelAddress(Protocol):
    @property
    def api_base(self) -> str | None: ...


class InstallConfig(Protocol):
    """What a unit needs of the loaded config (``routine.config.model.Config``, a layer up)."""

    @property
    def path(self) -> Path: ...
    @property
    def vault(self) -> Path: ...
    @property
    def ollama_host(self) -> str: ...
    @property
    def models(self) -> Mapping[str, _ModelAddress]: ...
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
    hosts = [config.ollama_host] + [a.api_base for a in config.models.values() if a.api_base]
    allow, warnings = addresses(hosts)
    env = {"ROUTINE_CONFIG": str(config.path.absolute()), "ROUTINE_STATE_DIR": str(state),
           "OLLAMA_HOST": config.ollama_host}
    return Install(exec_start=routine_command() + ["run"], config=config.path.absolute(), state=state,
                   writable=writable, environment=env, allow_ips=allow, warnings=warnings)


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.relative_to(folder)
        return True
    except ValueError:
        return False


def addresses(urls: list[str]) -> tuple[list[str], list[str]]:
    """IP addresses the service may reach besides loopback, and warnings for hosts not resolved."""
    found: list[str] = []
    warnings: list[str] = []
    named = False
    for url in dict.fromkeys(urls):
        host = urlsplit(url if "://" in url else f"http://{url}").hostname
        if not host or host == "localhost":
            continue
        try:
            ips = [ipaddress.ip_address(host)]
        except ValueError:
            named = True
            try:
                ips = [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in socket.getaddrinfo(host, None)]
            except (OSError, ValueError):
                warnings.append(f"could not resolve {host}; add its address to IPAddressAllow= in the unit")
                continue
        found += [str(ip) for ip in ips if not ip.is_loopback]
    if named:  # names are resolved at run time too: let the DNS servers through
        found += [ns for ns in nameservers() if not ipaddress.ip_address(ns).is_loopback]
    return list(dict.fromkeys(found)), warnings


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
              "# moving the vault, the state dir or routine itself, or after changing the Ollama hosts.\n")
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
