"""Alerts for the person: one note in the vault's Alerts/ folder per problem.

The journal and the log are for us; an alert note is where the person, who lives in
Obsidian, actually sees that something needs them. Alerts are written by the runtime, not by
an agent, so no agent scope applies.
"""

from __future__ import annotations

import logging
import re
from datetime import datetime

from routine.config.model import Config
from routine.errors import NoteExists

log = logging.getLogger(__name__)


def raise_alert(config: Config, now: datetime, title: str, message: str, fix: str | None = None,
                run_id: str | None = None, agent: str | None = None) -> str | None:
    """Write ``Alerts/<date> <time> <title>.md``; returns its vault path (None if it could not)."""
    from routine.vault import atomic_create, join_frontmatter

    safe_title = re.sub(r'[\\/:*?"<>|#^\[\]]+', "-", title).strip(" -.")[:80]
    frontmatter = {
        "type": "alert",
        "status": "open",
        "raised": now.isoformat(timespec="seconds"),
        "tags": ["routine/alert"],
    }
    if agent:
        frontmatter["agent"] = agent
    if run_id:
        frontmatter["run"] = run_id
    lines = [message, ""]
    if fix:
        lines += [f"**Fix:** {fix}", ""]
    if run_id:
        lines += [f"Details: `routine runs show {run_id}`", ""]
    lines += ["Set `status: resolved` (or delete this note) once it is handled."]
    body = "\n".join(lines) + "\n"
    stamp = now.strftime("%Y-%m-%d %H%M")
    from routine.vault.presence import vault_problem

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
        except OSError as exc:  # an alert must never turn one failure into two
            log.error("could not write alert note %s: %s", rel, exc)
            return None
    return None
