"""Every domain error of routine, in one place.

Lower layers raise these; only the CLI edge (``routine.cli``) turns them into a message and
an exit code. Each error carries one clear sentence (``message``) and, where we know it, the
fix (``fix``). Nothing here imports anything heavy.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

EXIT_OK = 0
EXIT_JOB_FAILED = 1
EXIT_USAGE = 2


class RoutineError(Exception):
    """Base of all errors a person may see. ``exit_code`` is what the CLI returns; ``transient``:
    the same step may well succeed if tried again later (a block's `retry:` policy)."""

    exit_code = EXIT_JOB_FAILED
    transient = False

    def __init__(self, message: str, fix: str | None = None):
        super().__init__(message)
        self.message = message
        self.fix = fix

    def __str__(self) -> str:
        if not self.fix:
            return self.message
        stop = "" if self.message.rstrip().endswith((".", "!", "?")) else "."  # an outside error's words too
        return f"{self.message.rstrip()}{stop} Fix: {self.fix}"


@dataclass(frozen=True)
class Problem:
    """One validation problem: where (file, line, YAML path) and what."""

    file: str
    line: int | None
    path: str
    message: str

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        at = f"At '{self.path}': " if self.path else ""
        return f"{where}: {at}{self.message}"


class ConfigError(RoutineError):
    """A config, schedule or agent file is invalid. Holds every problem found, not just the first."""

    exit_code = EXIT_USAGE

    def __init__(self, problems: list[Problem], fix: str | None = None):
        self.problems = list(problems)
        count = len(self.problems)
        files = sorted({p.file for p in self.problems})
        super().__init__(
            f"{count} problem{'s' if count != 1 else ''} in {', '.join(files)}.",
            fix or "Correct each line listed, then run `routine schedule validate`.",
        )

    def __str__(self) -> str:
        return "\n".join([self.message, *(f"  {p}" for p in self.problems)])


class UsageError(RoutineError):
    """The command line asked for something that does not exist (unknown agent, run id...)."""

    exit_code = EXIT_USAGE


class VaultNotConfigured(UsageError):
    """The config names a vault folder that is not there: the root cause of every 'no agent' after it."""

    def __init__(self, vault: Path, config_path: Path) -> None:
        super().__init__(f"The vault {vault} does not exist (`vault:` in {config_path}).",
                         f"create it with `routine init {vault}`, or correct `vault:` in {config_path}.")


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """' Did you mean 'x'?' for the closest of ``known`` to a misspelt ``name``, else ''."""
    import difflib

    key = name.lower()
    starts = [k for k in sorted(known) if k.lower().startswith(key)]
    close = starts if len(starts) == 1 else difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.6)
    return f" Did you mean {close[0]!r}?" if close else ""


class ScopeError(RoutineError):
    """An agent tried to read or write outside its declared scopes."""


class PathEscape(ScopeError):
    """A path leaves the vault: absolute, with '..', or through a symlink."""


class VaultMissing(RoutineError):
    """The vault folder is missing or empty while routine runs (an unmounted disk, a sync not done):
    nothing is written until it is back."""


class NoteExists(RoutineError):
    """A write of a whole new note found a note already there; notes are never replaced."""


class ModelError(RoutineError):
    """A model call failed in a way the person must know about."""

    transient = True  # the model server away, busy or slow: a block's `retry:` may try again


class ServerUnreachable(ModelError):
    """A model server did not answer; its provider's adapter (``routine.models.providers``) words
    the sentence and the fix, as each kind of server is started and configured differently."""

    def __init__(self, host: str, message: str, fix: str):
        super().__init__(message, fix)
        self.host = host


class ModelMissing(ModelError):
    transient = False  # waiting does not pull a model

    def __init__(self, model: str, host: str):
        super().__init__(
            f"The model {model} is not pulled on the Ollama at {host}.",
            f"run `ollama pull {model}`.",
        )
        self.model = model
        self.host = host


class VaultUnwritable(RoutineError):
    """A note could not be written: the vault is read-only, not ours, or its disk is full."""

    def __init__(self, rel: str, exc: OSError):
        import errno

        self.disk_full = exc.errno in (errno.ENOSPC, errno.EDQUOT)
        why = "its disk is full" if self.disk_full else (exc.strerror or str(exc)).lower()
        super().__init__(f"Could not write {rel} in the vault: {why}; nothing was written.",
                         "free space on the vault's disk; the run is retried once it is back."
                         if self.disk_full else
                         "make the vault folder writable by the user routine runs as (check the mount and "
                         "permissions); the run is retried once it is.")


class StateDiskFull(RoutineError):
    """routine's own files (the journal, caches) cannot be opened or written: the state disk is full."""

    def __init__(self, path: Path, detail: str) -> None:
        super().__init__(f"The disk holding routine's state ({path.parent}) is full, so {path.name} cannot be "
                         f"opened or written ({detail}); nothing was run.",
                         f"free space on that disk (`df -h {path.parent}`), then try again.")


class EmbeddingModelError(RoutineError):
    """The embedding model of the search index cannot be loaded or used."""


class SearchIndexError(RoutineError):
    """The vault search index cannot be opened or brought up to date."""


class ContextTooSmall(RoutineError):
    """The system prompt and task alone do not fit the model's context window."""


class DaemonError(RoutineError):
    """The control socket or daemon state is not what the command needs."""


class StartFailed(DaemonError):
    """A part of the daemon could not start; the parts started before it were stopped again."""

    def __init__(self, component: str, cause: BaseException):
        self.component = component
        fix = cause.fix if isinstance(cause, RoutineError) else None
        reason = cause.message if isinstance(cause, RoutineError) else f"{type(cause).__name__}: {cause}"
        super().__init__(f"The daemon could not start its {component}: {reason}",
                         fix or "see the lines logged before this one (`journalctl --user -u routine`), correct "
                                "what they name and start the daemon again.")


class Abandoned(RoutineError):
    """The daemon is stopping: a running step was abandoned before it wrote anything."""

    def __init__(self, message: str | None = None):
        if message:  # called off by the person (Ctrl-C on `routine fire`)
            super().__init__(message, "run `routine fire` again when you want it.")
            return
        super().__init__("The daemon stopped before this step could write; nothing was written.",
                         "nothing to do: the slot is handled by its `missed` policy at the next start.")


class ModelBusy(ModelError):
    """No model slot could be freed in time: every resident model is in use or not ours."""


class AgentStopped(RoutineError):
    """A tool-using run hit its max_iterations or its timeout before a final answer."""

    def __init__(self, status: str, message: str, fix: str):
        super().__init__(message, fix)
        self.status = status  # max-iterations | timeout


class NoteUnreadable(RoutineError):
    """A path in the vault is not something routine reads: a pipe, a device, a folder, a symlink
    loop, or a file past the size cap."""


class ContextOverflow(RoutineError):
    """A request would not fit the model's window with room for the answer (never sent)."""

    def __init__(self, alias: str, counted: int, limit: int, num_ctx: int):
        super().__init__(
            f"The request to {alias} counts {counted} tokens, over the {limit} its window of {num_ctx} "
            f"leaves after the answer's reserve; it was not sent.",
            f"raise `num_ctx` for the alias {alias} in routine.yaml, or give the step fewer inputs.",
        )


class ReplyRejected(ModelError):
    """The model answered, but the answer is not fit to be written (cut off, empty, garbage)."""

    def __init__(self, model: str, problem: str, excerpt: str, fix: str):
        shown = f' It began: "{excerpt}".' if excerpt else ""
        super().__init__(f"The reply of {model} was {problem}, so nothing was written.{shown}", fix)
        self.problem = problem


class OutsideTextRefused(RoutineError):
    """Text from outside (a schedule, a note's properties, a model's change block) that routine will not
    read as it is: unparsable, or past a budget (size, aliases, nesting). ``problem`` says where."""

    def __init__(self, problem: Problem, fix: str | None = None):
        super().__init__(str(problem), fix)
        self.problem = problem


class ReminderProblem(UsageError):
    """A reminder that cannot be set or changed: its time unreadable or past, no words, an unknown id."""


class PayloadProblem(UsageError):
    """An outside event's payload that is refused: too large, too deep, too many keys, not a JSON object."""


class McpUnavailable(RoutineError):
    """An MCP server (routine.yaml's `mcp_servers:`) did not start, list its tools or answer in time."""

    transient = True
