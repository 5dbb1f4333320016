"""What the daemon's parts may ask of it: small protocols, each naming only what a part uses.

``Daemon`` (``routine.daemon.app``) satisfies them; a part is handed the daemon typed as one of
these (mypy holds the part to it) or, where it needs two or three things, those things alone.
``Jobs``: what a part that queues runs needs (the config in force, the queue, a runner, the
model keys the queue's forecast counts). The other protocols sit beside the part they serve
(``health.Parts``, ``status.Sources``, ``monitor.Host``, ``recovery.Host``,
``vault_events.Host``, ``control.Host``).
"""

from __future__ import annotations

import threading
from datetime import datetime
from typing import TYPE_CHECKING, Iterable, Protocol

if TYPE_CHECKING:
    from routine.daemon.live import Live
    from routine.daemon.work import Work, WorkQueue
    from routine.journal import Journal
    from routine.models.plan import ModelKey
    from routine.runner.block import BlockOutcome
    from routine.runner.events import OnEvent
    from routine.runner.step import Runner


class Jobs(Protocol):
    @property
    def live(self) -> Live: ...
    @property
    def queue(self) -> WorkQueue: ...
    def now_local(self) -> datetime: ...
    def model_keys(self, agent_names: Iterable[str], alias: str | None = None) -> tuple[ModelKey, ...]: ...
    def make_runner(self, journal: Journal, on_event: OnEvent | None = None, work: Work | None = None,
                    cancel: threading.Event | None = None) -> Runner: ...
    def follow(self, block_id: str, outcome: BlockOutcome) -> None: ...
