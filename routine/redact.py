"""Secrets stay in routine.yaml: the one way a URL is shown or stored anywhere else.

A notification URL (Apprise: `tgram://BOT_TOKEN/CHAT`, `pover://USER@TOKEN`, `pbul://TOKEN`,
`slack://A/B/C`, `json://host/secret-path`, `ntfys://user:pass@host/topic`, `mailtos://user:pass@…`)
or a calendar URL (`https://user:pass@cal.lan/private-TOKEN/basic.ics?key=…`) can carry its secret
in any part of it. ``redact_url`` keeps the scheme and a host that reads as a host name (an IP
address, lower-case names of short labels) with its port, and drops everything else: user and
password, path, query, fragment, and a host that may itself be a token (mixed case, long, or
lower-case letters and digits mixed back and forth). ``redact_text`` does the
same to every URL inside a text. Every output routine makes (the CLI, logs, the journal, alerts,
notifications, prompts, hence the search index) passes its URLs through these.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import PurePosixPath

URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.\-]{0,15}://[^\s<>\"'`]+")
_HOST_PORT = re.compile(r"(\[[0-9a-fA-F:.]+\]|[^:\[\]]*)(?::(\d{1,5}))?")
# A host name as people write them (lower case, short labels: `nas`, `ntfy.lan`, `hooks.slack.com`);
# an IP address. A token is long, mixed case or holds `:` or `.`-joined random parts: hidden.
_HOST = re.compile(r"(\d{1,3}\.){3}\d{1,3}|\[[0-9a-fA-F:.]+\]|[a-z0-9-]{1,24}(\.[a-z0-9-]{1,24})*")
HIDDEN = "…"


def _token_like(label: str) -> bool:
    """A lower-case label that reads as a token, not a name: long (`o3kfh3kd8s7d6f5g4h`), or letters
    and digits mixed back and forth (`a1b2c3d4`; `server1234`, `nas-01` are names)."""
    if re.fullmatch(r"(\d{1,3}\.){3}\d{1,3}", label) or label.isdigit():
        return False
    switches = sum(1 for a, b in zip(label, label[1:]) if a.isdigit() != b.isdigit() and a.isalnum() and b.isalnum())
    return len(label) >= 17 or (len(label) >= 8 and switches >= 3)


def redact_url(url: str) -> str:
    """``url`` as it may be shown: `scheme://host:port`, or `scheme://…` when the host may be a
    secret; a text without `://` (a file's path) is returned as it is."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    netloc = re.split(r"[/?#]", rest, maxsplit=1)[0]
    found = _HOST_PORT.fullmatch(netloc.rpartition("@")[2])
    if found is None or not _HOST.fullmatch(found[1]) or any(map(_token_like, found[1].split("."))):
        return f"{scheme}://{HIDDEN}"
    return f"{scheme}://{found[1]}" + (f":{found[2]}" if found[2] else "")


def redact_text(text: str) -> str:
    """``text`` with every URL in it shown as ``redact_url`` shows it; the sentence's own punctuation
    after a URL (`… at http://nas:11434.`) stays the sentence's, so the host is still shown."""
    return URL.sub(_shown, text) if "://" in text else text


def _shown(found: re.Match[str]) -> str:
    url = found[0].rstrip(".,;:!?)")
    return redact_url(url) + found[0][len(url):]


def source_name(source: str) -> str:
    """The name of a thing the config gives only as a URL or a path (a calendar without `name:`):
    a path's file name without `.ics`; a URL's host as ``redact_url`` shows it (`calendar` when the
    host may be a secret) and a short hash of the whole URL, so two calendars on one host differ and
    the name stays the same from run to run. No other part of a URL (user, password, path, query:
    `private.ics?token=…`, `fam-PW@host`, `/published/2/TOKEN`) ever becomes part of a name, which
    reaches file names, prompts, the journal and the log."""
    if "://" not in source:
        stem = PurePosixPath(source.rstrip("/")).name.removesuffix(".ics")
        return stem or source
    host = redact_url(source).partition("://")[2]
    label = "calendar" if host == HIDDEN else host.replace(":", "-")
    return f"{label}-{hashlib.sha256(source.encode()).hexdigest()[:4]}"
