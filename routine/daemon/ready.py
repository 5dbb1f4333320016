"""A block named in `notify.ready` (the morning note, say) finished: its note's first lines go to
the person's phone, once per slot (``routine.person.notifications``)."""

from __future__ import annotations

from datetime import datetime

from routine.config.model import Config
from routine.config.notify import Topic
from routine.errors import RoutineError
from routine.journal.status import succeeded
from routine.person.notifications import Message, notify
from routine.runner.block import BlockOutcome
from routine.vault.files import read_text
from routine.vault.frontmatter import split_frontmatter
from routine.vault.outline import readable

EXCERPT_LINES = 12
EXCERPT_CHARS = 700


def ready(config: Config, block_id: str, slot: str, outcome: BlockOutcome, now: datetime) -> None:
    if block_id not in config.notify.ready or not succeeded(outcome.status):
        return
    notes = [step.wrote.rel for step in outcome.steps if step.wrote is not None]
    if not notes:
        return
    rel = notes[0]
    notify(config, Message(Topic.READY, f"ready:{block_id}:{slot}", f"{rel} is ready", excerpt(config, rel),
                           note=rel), now)


def excerpt(config: Config, rel: str) -> str:
    """The note's first lines as a reader sees them (no properties, no routine markers)."""
    try:
        body = split_frontmatter(read_text(config.vault / rel))[1]
    except (OSError, RoutineError):
        return f"({rel} could not be read back)"
    lines = [line for line in readable(body).splitlines() if line.strip()][:EXCERPT_LINES]
    text = "\n".join(lines)
    return text if len(text) <= EXCERPT_CHARS else text[:EXCERPT_CHARS].rsplit(" ", 1)[0] + " …"
