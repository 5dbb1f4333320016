"""Does the installed unit let through every host routine.yaml names?

`routine service install` writes the addresses of the configured hosts into the unit's
``IPAddressAllow=`` (``routine.host.units``). A host named in routine.yaml afterwards is refused under
the service, while `routine notify test` from a shell still reaches it. ``gaps`` finds such hosts
for `routine doctor` and `routine status`; ``refusal`` names one in the error of a send or fetch
that failed inside the service. (Under ``IPAddressDeny=`` a TCP connect is dropped, not refused:
the client waits for its timeout, so the allow-list is the only way to tell a filtered host from
a dead one.)
"""

from __future__ import annotations

import getpass
import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path

from routine.host import units
from routine.host.peers import Peer, PeerConfig, peers

Network = ipaddress.IPv4Network | ipaddress.IPv6Network

_WORDS = {"any": ("0.0.0.0/0", "::/0"), "localhost": ("127.0.0.0/8", "::1/128"),
          "link-local": ("169.254.0.0/16", "fe80::/64"), "multicast": ("224.0.0.0/4", "ff00::/8")}


@dataclass(frozen=True)
class Gap:
    """A host routine.yaml names that an installed unit does not let through."""

    unit: Path
    peer: Peer
    addresses: tuple[str, ...]

    def sentence(self) -> str:
        return (f"routine.yaml names {self.peer.host} ({self.peer.what}, {', '.join(self.addresses)}), which the "
                f"installed unit {self.unit} does not let through (IPAddressAllow=): under the service it is "
                "unreachable")

    @property
    def fix(self) -> str:
        if self.unit.name == units.USER_UNIT:
            return "run `routine service install --user` again: it lets through every host routine.yaml names"
        return "run `sudo routine service install` again: it lets through every host routine.yaml names"


def allow_list(unit_text: str) -> list[Network] | None:
    """The networks a unit lets through, or None when it filters nothing (no ``IPAddressDeny=any``)."""
    deny = False
    allowed: list[Network] = []
    for line in unit_text.splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "IPAddressDeny":
            deny = bool(value.strip()) and (deny or "any" in value.split())
        elif key.strip() == "IPAddressAllow":
            if not value.strip():
                allowed = []
            for word in value.split():
                for item in _WORDS.get(word, (word,)):
                    try:
                        allowed.append(ipaddress.ip_network(item, strict=False))
                    except ValueError:
                        continue
    return allowed if deny else None


def lets_through(allowed: list[Network], address: str) -> bool:
    ip = ipaddress.ip_address(address)
    return any(ip.version == net.version and ip in net for net in allowed)


def installed(person: str | None = None) -> list[Path]:
    """The units `routine service install` wrote for this person (system and user), those that exist."""
    who = person or getpass.getuser()
    candidates = [units.unit_dir(False) / units.unit_name(False, who), units.unit_dir(True) / units.USER_UNIT]
    return [p for p in dict.fromkeys(candidates) if p.is_file()]


def gaps(config: PeerConfig, unit_files: list[Path] | None = None) -> list[Gap]:
    """Each host of the config that an installed unit would refuse (names resolved now)."""
    found: list[Gap] = []
    hosts: list[Peer] | None = None
    for unit in installed() if unit_files is None else unit_files:
        try:
            allowed = allow_list(unit.read_text(encoding="utf-8"))
        except OSError:
            continue
        if allowed is None:
            continue
        hosts = peers(config) if hosts is None else hosts
        for peer in hosts:
            addresses = [str(ip) for ip in units.host_addresses(peer.host)]
            refused = tuple(a for a in addresses if not lets_through(allowed, a))
            if refused:
                found.append(Gap(unit, peer, refused))
    return found


def running_unit() -> Path | None:
    """The installed unit file this process runs under, or None outside one (a terminal, a test)."""
    if not os.environ.get("INVOCATION_ID"):
        return None
    try:
        cgroup = Path("/proc/self/cgroup").read_text()
    except OSError:
        return None
    for line in cgroup.splitlines():
        for part in reversed(line.split(":", 2)[-1].split("/")):
            if part == units.USER_UNIT or (part.startswith("routine@") and part.endswith(".service")):
                unit = units.unit_dir(part == units.USER_UNIT) / part
                return unit if unit.is_file() else None
    return None


def refusal(hosts: list[str]) -> str | None:
    """Under the service: one sentence when its unit's IP filter drops one of ``hosts``, else None."""
    unit = running_unit()
    if unit is None or not hosts:
        return None
    try:
        allowed = allow_list(unit.read_text(encoding="utf-8"))
    except OSError:
        return None
    if allowed is None:
        return None
    for host in hosts:
        dropped = [str(ip) for ip in units.host_addresses(host) if not lets_through(allowed, str(ip))]
        if dropped:
            gap = Gap(unit, Peer(host, "not let through"), tuple(dropped))
            return (f"refused by the service's IP filter: {unit.name} does not let through {host} "
                    f"({', '.join(dropped)}); {gap.fix}")
    return None
