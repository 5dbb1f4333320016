"""The hosts routine talks to, as the config names them: the Ollama host, the models' own servers
(`api_base`), the servers behind the notify URLs and channels (ntfy, Telegram: where answers come
from too), the calendars' URLs and the MCP servers' (a URL, or the `hosts` a sandboxed server may
reach).

A notify URL does not always name its server: `ntfy://topic` goes to ntfy.sh, `tgram://…` to
api.telegram.org, `mailto://me@gmail.com` to smtp.gmail.com. Apprise knows each scheme's server,
so ``notify_hosts`` asks it: the URL's plugin is made to send, in this thread only, with name
lookups answered by a refusal that records the host asked for. Nothing leaves the machine.
`routine service install` lets these hosts through the unit's IP filter (``routine.host.units``), and
``routine.host.unitcheck`` says when routine.yaml names one the installed unit does not allow.
"""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol
from urllib.parse import urlsplit


@dataclass(frozen=True)
class Peer:
    host: str  # a name or an address, as asked for
    what: str  # why routine talks to it: "Ollama", "model fast", "notify (ntfy)", "calendar family"


class _ModelAddress(Protocol):
    @property
    def api_base(self) -> str | None: ...


class _Channel(Protocol):
    KEY: ClassVar[str]

    @property
    def servers(self) -> tuple[str, ...]: ...


class _Notify(Protocol):
    @property
    def urls(self) -> tuple[str, ...]: ...
    @property
    def active(self) -> Sequence[_Channel]: ...


class _Calendar(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def source(self) -> str: ...


class _McpAddress(Protocol):
    @property
    def url(self) -> str | None: ...
    @property
    def hosts(self) -> tuple[str, ...]: ...


class PeerConfig(Protocol):
    """What the peers are read from (``routine.config.model.Config``, a layer up)."""

    @property
    def ollama_host(self) -> str: ...
    @property
    def models(self) -> Mapping[str, _ModelAddress]: ...
    @property
    def notify(self) -> _Notify: ...
    @property
    def calendars(self) -> Sequence[_Calendar]: ...
    @property
    def mcp_servers(self) -> Mapping[str, _McpAddress]: ...


def peers(config: PeerConfig) -> list[Peer]:
    """Every host the config makes routine talk to, each once (the first reason kept)."""
    found = [Peer(h, "Ollama") for h in [url_host(config.ollama_host)] if h]
    found += [Peer(h, f"model {name}") for name, alias in config.models.items()
              if alias.api_base for h in [url_host(alias.api_base)] if h]
    for url in config.notify.urls:
        found += [Peer(h, f"notify ({scheme(url)})") for h in notify_hosts(url)]
    found += [Peer(h, f"notify ({channel.KEY}, with answers)") for channel in config.notify.active
              for h in channel.servers]
    found += [Peer(h, f"calendar {c.name}") for c in config.calendars
              if c.source.startswith(("http://", "https://")) for h in [url_host(c.source)] if h]
    for name, server in config.mcp_servers.items():  # a URL's server; a sandboxed program's allowed hosts
        found += [Peer(h, f"MCP server {name}") for h in [url_host(server.url or "")] if h]
        found += [Peer(h, f"MCP server {name}") for h in (url_host(given) for given in server.hosts) if h]
    first: dict[str, Peer] = {}
    for peer in found:
        first.setdefault(peer.host, peer)
    return list(first.values())


def url_host(url: str) -> str | None:
    """The host of an http(s) URL or of a bare ``host:port``."""
    try:
        return urlsplit(url if "://" in url else f"http://{url}").hostname
    except ValueError:
        return None


def scheme(url: str) -> str:
    """A notify URL's scheme: all of it that logs show (the rest may hold a token)."""
    return url.partition("://")[0] or "?"


def notify_hosts(url: str) -> list[str]:
    """The hosts Apprise would connect to for ``url``, found without sending anything."""
    import apprise

    plugin = apprise.Apprise.instantiate(url, suppress_exceptions=True)
    if not plugin:
        return []
    with _recording() as asked:
        try:
            plugin.notify(body="routine: which host is this?", title="routine")
        except Exception:  # noqa: BLE001 - a plugin's own error: the hosts asked for so far still count
            pass
    return list(dict.fromkeys(asked))


_PROBE = threading.local()
_PATCH = threading.Lock()


class _Asked(socket.gaierror):
    """A lookup refused on purpose: the host is recorded, nothing is sent."""


@contextmanager
def _recording() -> Iterator[list[str]]:
    """Name lookups in this thread fail and are recorded; other threads look up as ever."""
    asked: list[str] = []
    real = socket.getaddrinfo

    def lookup(host: Any, *args: Any, **kwargs: Any) -> Any:
        if getattr(_PROBE, "asked", None) is None:
            return real(host, *args, **kwargs)
        _PROBE.asked.append(host.decode() if isinstance(host, bytes) else str(host))
        raise _Asked(socket.EAI_NONAME, "routine: not sent (finding the host only)")

    quiet = logging.getLogger("apprise")
    level = quiet.level
    with _PATCH:
        socket.getaddrinfo = lookup
        _PROBE.asked = asked
        quiet.setLevel(logging.CRITICAL)  # the refused "send" is no failure to report
        try:
            yield asked
        finally:
            _PROBE.asked = None
            socket.getaddrinfo = real
            quiet.setLevel(level)
