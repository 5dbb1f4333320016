"""What a run tells as it goes, typed: one frozen dataclass per event.

The runner (``runner.step``, ``runner.block``) emits these to its ``on_event``; the daemon reads
them (``BlockStep.after`` feeds the model forecast, ``Wrote``/``StepFailed`` the graph and the
health monitor); the CLI prints them. On the control socket each is one JSON line,
``{"event": KIND, **fields}``: ``to_json`` and ``from_json`` are the one conversion, at that edge.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any, Callable, ClassVar

from routine.journal.status import RunStatus
from routine.vault.writer import WriteOutcome


@dataclass(frozen=True)
class RunEvent:
    kind: ClassVar[str] = ""

    def to_json(self) -> dict[str, Any]:
        """The control socket's line for this event."""
        return {"event": self.kind, **asdict(self)}


@dataclass(frozen=True)
class BlockStarted(RunEvent):
    """A block run began (``run`` is None in a dry run)."""

    kind: ClassVar[str] = "block"
    run: str | None
    block: str
    steps: int


@dataclass(frozen=True)
class BlockStep(RunEvent):
    """A block's step begins; ``after``: the agents of the steps still to come (the forecast's
    "needed now")."""

    kind: ClassVar[str] = "step"
    run: str | None
    block: str
    index: int
    after: tuple[str, ...]


@dataclass(frozen=True)
class StepStarted(RunEvent):
    kind: ClassVar[str] = "start"
    run: str | None
    agent: str
    model: str


@dataclass(frozen=True)
class Phase(RunEvent):
    """What the step waits on now: ``loading MODEL``, ``generating``, ``writing``, ``waiting for Ollama at
    HOST`` (a retry after the server did not answer)."""

    kind: ClassVar[str] = "phase"
    run: str | None
    phase: str


@dataclass(frozen=True)
class Token(RunEvent):
    """A piece of the answer, streamed."""

    kind: ClassVar[str] = "token"
    run: str | None
    text: str


@dataclass(frozen=True)
class ToolsUsed(RunEvent):
    """The tool loop ended (``routine.tools.loop.LoopResult.summary``)."""

    kind: ClassVar[str] = "tools"
    run: str | None
    status: RunStatus
    result: str
    error: str | None
    turns: int
    calls: int
    refused: int


@dataclass(frozen=True)
class Wrote(RunEvent):
    """The step's output landed (``outcome``: the writer's, e.g. written, proposal)."""

    kind: ClassVar[str] = "wrote"
    run: str | None
    path: str
    outcome: WriteOutcome
    message: str


@dataclass(frozen=True)
class StepFailed(RunEvent):
    kind: ClassVar[str] = "failed"
    run: str | None
    status: RunStatus
    error: str
    alert: str | None


@dataclass(frozen=True)
class Retrying(RunEvent):
    """A step failed for a passing reason and is tried again after ``wait_s``."""

    kind: ClassVar[str] = "retry"
    run: str | None
    agent: str
    attempt: int
    attempts: int
    wait_s: float
    error: str


@dataclass(frozen=True)
class Indexing(RunEvent):
    """The search index catching up before a step's search."""

    kind: ClassVar[str] = "indexing"
    what: str
    count: int
    total: int


@dataclass(frozen=True)
class IndexProgress(RunEvent):
    """`routine index` through the daemon: a pass's progress."""

    kind: ClassVar[str] = "progress"
    what: str
    count: int
    total: int


@dataclass(frozen=True)
class Queued(RunEvent):
    """The job waits in the daemon's queue behind ``ahead`` others."""

    kind: ClassVar[str] = "queued"
    ahead: int


@dataclass(frozen=True)
class Asked(RunEvent):
    """A block's step asked the person (``routine.runner.asking``): the block run waits for
    ``question`` until ``deadline`` (UTC ISO), which the daemon arms."""

    kind: ClassVar[str] = "asked"
    run: str | None
    question: str
    text: str
    deadline: str


EVENTS: dict[str, type[RunEvent]] = {cls.kind: cls for cls in (
    BlockStarted, BlockStep, StepStarted, Phase, Token, ToolsUsed, Wrote, StepFailed, Retrying,
    Indexing, IndexProgress, Queued, Asked)}

OnEvent = Callable[[RunEvent], None]


_ENUMS: dict[str, type[RunStatus] | type[WriteOutcome]] = {"RunStatus": RunStatus, "WriteOutcome": WriteOutcome}


def from_json(line: dict[str, Any]) -> RunEvent | None:
    """A control-socket event line back into its event; None for a kind this version does not
    know (a newer daemon's), so a client shows what it can."""
    cls = EVENTS.get(str(line.get("event", "")))
    if cls is None:
        return None
    values = {f.name: line.get(f.name) for f in fields(cls)}
    for f in fields(cls):  # a status or a write's outcome back into its enum
        enum = _ENUMS.get(str(f.type))
        if enum is not None and values[f.name] is not None:
            values[f.name] = enum(values[f.name])
    if cls is BlockStep:
        values["after"] = tuple(values["after"] or ())
    return cls(**values)


def ignore(event: RunEvent) -> None:
    """An ``on_event`` that listens to nothing."""
