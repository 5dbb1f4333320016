"""Alerts for the person: notes in the vault's Alerts/ folder.

The journal and the log are for us; an alert note is where the person, who lives in
Obsidian, actually sees that something needs them. Alerts are written by the runtime, not by
an agent, so no agent scope applies.

Failures that share a cause (``routine.causes``: Ollama unreachable at a host, a model not
pulled, the vault unwritable, a disk full) share one open note: each new occurrence counts in
it (``count``, ``last_seen``, ``affected``) instead of writing another note. When the cause is
gone the note resolves itself and says so; a note the person already closed is left alone,
and the next occurrence opens a new one.
"""

from __future__ import annotations

import glob
import logging
import re
from datetime import datetime
from pathlib import Path

from routine.config.model import Config
from routine.config.notify import Priority, Topic
from routine.errors import NoteExists
from routine.jsonvalue import Parsed
from routine.person.notifications import Message, notify
from routine.redact import redact_text
from routine.statedb import set_aside_files
from routine.vault import NoteChanged, atomic_create, atomic_write, join_frontmatter, load_note_text, split_frontmatter
from routine.vault.presence import vault_problem
from routine.vault.provenance import ALERT_TAG

log = logging.getLogger(__name__)

MAX_AFFECTED = 20  # names listed in a shared alert; the count keeps counting
OPEN = "open"


def raise_alert(config: Config, now: datetime, title: str, message: str, fix: str | None = None,
                run_id: str | None = None, agent: str | None = None, cause: str | None = None,
                affected: str | None = None) -> str | None:
    """Write ``Alerts/<date> <time> <title>.md``, or count in the open note of the same
    ``cause``; returns its vault path (None if it could not be written). A URL in any of them is
    shown without its secrets (``routine.redact``): the note is read by agents and indexed."""
    title, message, fix = redact_text(title), redact_text(message), redact_text(fix) if fix else fix
    cause = redact_text(cause) if cause else cause
    try:
        if cause is not None:
            existing = open_alert_for(config, cause)
            if existing is not None:
                _count_in(config, existing, now, run_id, affected or agent)
                return existing
        rel = _create(config, now, title, message, fix, run_id, agent, cause, affected or agent)
    except OSError as exc:  # an alert must never turn one failure into two
        log.error("could not write the alert %r: %s", title, exc)
        rel = None
    body = f"{message}\nFix: {fix}" if fix else message
    # Unwritten (the vault is away, a disk is full): the phone is then the only place the person
    # can learn it, once a day.
    key = f"alert:{rel}" if rel else f"alert:{cause or title}:{now:%Y-%m-%d}"
    notify(config, Message(Topic.ALERTS, key, title, f"{body}\n({rel or 'no alert note: the vault is unavailable'})",
                           note=rel), now)
    return rel


def resolve_alerts(config: Config, now: datetime, cause_prefix: str, why: str) -> list[str]:
    """Close every open alert whose cause starts with ``cause_prefix``, saying ``why``."""
    cause_prefix = redact_text(cause_prefix)  # as raise_alert stored it

    resolved = []
    for rel, _ in _open_cause_alerts(config):
        note = _load(config, rel)
        if note is None or not str(note[0].get("cause", "")).startswith(cause_prefix):
            continue
        _, body, raw = note
        stamp = f"{now:%a %d %b %H:%M}"
        try:
            _rewrite(config, rel, raw, {"status": "resolved", "resolved": now.isoformat(timespec="seconds")},
                     body.rstrip("\n") + f"\n\n**Resolved by itself** {stamp}: {why}\n")
        except (OSError, NoteChanged) as exc:
            log.warning("could not mark the alert %s resolved: %s", rel, exc)
            continue
        log.info("alert resolved: %s (%s)", rel, why)
        resolved.append(rel)
        notify(config, Message(Topic.ALERTS, f"resolved:{rel}", f"Resolved: {_named(rel)}",
                               f"{why}\n({rel})", note=rel, priority=Priority.LOW), now)
    return resolved


def _named(rel: str) -> str:
    """An alert note's title: its name without the date and time it was raised."""
    return re.sub(r"^\d{4}-\d{2}-\d{2} \d{4} ", "", Path(rel).stem)


def open_alert_for(config: Config, cause: str) -> str | None:
    return next((rel for rel, c in _open_cause_alerts(config) if c == cause), None)


def open_causes(config: Config) -> list[str]:
    """The causes of the open shared alerts."""
    return [c for _, c in _open_cause_alerts(config)]


def alert_set_aside(config: Config, now: datetime, state_dir: Path) -> list[str]:
    """One alert for each damaged state file set aside (``routine.statedb``) that has none yet,
    open or closed; returns the notes written."""
    written = []
    for item in set_aside_files(state_dir):
        title = f"{item.name} damaged, set aside as {item.path.name}"
        if any(_folder(config).glob(f"* {glob.escape(_safe_title(title))}.md")):
            continue
        fix = ("Nothing to do for routine to work: the new file fills again as it runs. Keep the old one to read "
               f"its history with sqlite3, or delete {item.path} once you no longer need it") \
            if item.path.suffix == ".sqlite3" else (f"nothing is paused now: pause again if you meant to "
                                                    f"(`routine pause`); {item.path} keeps what was written")
        rel = raise_alert(config, now, title, item.sentence, fix + "; `routine doctor` lists the files kept aside.")
        if rel:
            written.append(rel)
    return written


# --- notes ------------------------------------------------------------------------------------

def _folder(config: Config) -> Path:
    return config.vault / config.layout.alerts


def _open_cause_alerts(config: Config) -> list[tuple[str, str]]:
    """(vault path, cause) of each open alert note that has a cause, newest first."""
    folder = _folder(config)
    if not folder.is_dir():
        return []
    found = []
    for path in sorted(folder.glob("*.md"), reverse=True)[:200]:
        rel = path.relative_to(config.vault).as_posix()
        note = _load(config, rel)
        if note and note[0].get("cause") and note[0].get("status", OPEN) == OPEN:
            found.append((rel, str(note[0]["cause"])))
    return found


def _load(config: Config, rel: str) -> tuple[Parsed, str, bytes] | None:
    try:
        text = load_note_text(config.vault / rel)
    except OSError:
        return None
    if text is None:
        return None
    data, body = split_frontmatter(text.text)
    return data, body, text.raw


def _rewrite(config: Config, rel: str, raw: bytes, updates: Parsed, body: str) -> None:
    data, _ = split_frontmatter(raw.decode("utf-8", errors="surrogateescape"))
    atomic_write(config.vault / rel, join_frontmatter({**data, **updates}, body), expected=raw)


def _count_in(config: Config, rel: str, now: datetime, run_id: str | None, affected: str | None) -> None:
    for _attempt in range(3):  # the person may save the note meanwhile: read it again
        note = _load(config, rel)
        if note is None:
            return
        data, body, raw = note
        names = [str(a) for a in data.get("affected") or []]
        if affected and affected not in names and len(names) < MAX_AFFECTED:
            names.append(affected)
        count = int(data.get("count") or 1) + 1
        updates = {"count": count, "last_seen": now.isoformat(timespec="seconds"), "affected": names}
        if run_id:
            updates["run"] = run_id
        body = _seen_line(body, count, data.get("raised"), now, names, run_id)
        try:
            _rewrite(config, rel, raw, updates, body)
            return
        except NoteChanged:
            continue


def _seen_line(body: str, count: int, raised: object, now: datetime, names: list[str], run_id: str | None) -> str:
    since = str(raised or "")[:16].replace("T", " ")
    line = f"**Seen {count} times** since {since}, last at {now:%a %d %b %H:%M}"
    line += f"; affected: {', '.join(names)}." if names else "."
    if run_id:
        line += f" Latest: `routine runs show {run_id}`"
    lines = body.split("\n")
    drop = {i for i, ln in enumerate(lines) if ln.startswith("**Seen ")}
    drop |= {i + 1 for i in drop if i + 1 < len(lines) and not lines[i + 1]}  # and the blank line after it
    kept = [ln for i, ln in enumerate(lines) if i not in drop]
    # The line goes just before the closing hint, replacing the previous count.
    at = next((i for i, ln in enumerate(kept) if ln.startswith(("This note resolves", "Set `status"))), len(kept))
    return "\n".join(kept[:at] + [line, ""] + kept[at:])


def _safe_title(title: str) -> str:
    return re.sub(r'[\\/:*?"<>|#^\[\]]+', "-", title).strip(" -.")[:80]


def _create(config: Config, now: datetime, title: str, message: str, fix: str | None, run_id: str | None,
            agent: str | None, cause: str | None, affected: str | None) -> str | None:
    safe_title = _safe_title(title)
    frontmatter: dict[str, object] = {"type": "alert", "status": OPEN, "raised": now.isoformat(timespec="seconds"),
                                      "tags": [ALERT_TAG]}
    if cause:
        frontmatter.update(cause=cause, count=1, last_seen=frontmatter["raised"],
                           affected=[affected] if affected else [])
    if agent:
        frontmatter["agent"] = agent
    if run_id:
        frontmatter["run"] = run_id
    lines = [message, ""]
    if fix:
        lines += [f"**Fix:** {fix}", ""]
    if run_id:
        lines += [f"Details: `routine runs show {run_id}`", ""]
    if cause:
        lines += [("This note resolves itself when the cause is gone; more failures of the same cause are "
                   "counted here. Set `status: resolved` to close it yourself.")]
    else:
        lines += ["Set `status: resolved` (or delete this note) once it is handled."]
    body = "\n".join(lines) + "\n"
    stamp = now.strftime("%Y-%m-%d %H%M")

    if vault_problem(config.vault):  # never create the vault to hold an alert; raised again once it is back
        log.error("alert not written (%s): %s: %s", vault_problem(config.vault), title, message)
        return None
    for n in range(1, 50):
        rel = f"{config.layout.alerts}/{stamp} {safe_title}{'' if n == 1 else f' {n}'}.md"
        try:
            atomic_create(config.vault / rel, join_frontmatter(frontmatter, body))
            return rel
        except NoteExists:
            continue
    return None
