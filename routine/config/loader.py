"""Load routine.yaml and the agent notes into typed objects, reporting every problem at once."""

from __future__ import annotations

import os
import re
from dataclasses import replace
from pathlib import Path

from routine import paths
from routine.config.model import (
    DEFAULT_OLLAMA_HOST,
    AgentSpec,
    Config,
    Layout,
    MemorySettings,
    ModelAlias,
    WriteSpec,
)
from routine.config.schema import AGENT, CONFIG
from routine.config.validate import schema_problems
from routine.config.yamlfile import LocatedYaml, YamlSyntaxError, load_yaml, parse_yaml
from routine.errors import ConfigError, Problem, UsageError

_FRONTMATTER = re.compile(r"\A\ufeff?---[ \t]*\r?\n(.*?)^---[ \t]*\r?$\n?", re.S | re.M)


def load_config(explicit: str | os.PathLike | None = None) -> Config:
    path = paths.config_file(explicit)
    if not path.exists():
        raise UsageError(
            f"No config file at {path}.",
            "run `routine init [VAULT]` to create one, or point --config / ROUTINE_CONFIG at yours.",
        )
    try:
        doc = load_yaml(path)
    except YamlSyntaxError as exc:
        raise ConfigError([exc.problem]) from None
    problems = schema_problems(doc, CONFIG)
    if problems:
        raise ConfigError(problems)
    config = _build_config(path, doc.data)
    problems = _config_checks(config, doc)
    if problems:
        raise ConfigError(problems)
    return config


def _build_config(path: Path, data: dict) -> Config:
    ollama = data.get("ollama") or {}
    host = ollama.get("host") or os.environ.get("OLLAMA_HOST") or DEFAULT_OLLAMA_HOST
    if "://" not in host:  # OLLAMA_HOST is often written as "0.0.0.0:11434"
        host = "http://" + host
    models = {}
    for name, spec in data["models"].items():
        if isinstance(spec, str):
            spec = {"model": spec}
        models[name] = ModelAlias(
            name=name,
            model=spec["model"],
            num_ctx=spec.get("num_ctx", 8192),
            num_predict=spec.get("num_predict", 1024),
            fallbacks=tuple(spec.get("fallbacks", ())),
            options=tuple(sorted((spec.get("options") or {}).items())),
            keep_alive=spec.get("keep_alive", "30m"),
            api_base=spec.get("api_base"),
        )
    vault = Path(os.path.expandvars(data["vault"])).expanduser()
    if not vault.is_absolute():
        vault = (path.parent / vault).resolve()
    return Config(
        path=path,
        vault=vault,
        timezone=data.get("timezone"),
        ollama_host=host.rstrip("/"),
        max_resident=ollama.get("max_resident", 2),
        models=models,
        request_timeout=float(data.get("request_timeout", 600)),
        retries=data.get("retries", 2),
        retry_backoff=float(data.get("retry_backoff", 2.0)),
        unload_foreign=ollama.get("unload_foreign", False),
        layout=Layout(**(data.get("layout") or {})),
        memory=_memory_settings(path, data.get("memory") or {}),
    )


def _memory_settings(path: Path, data: dict) -> MemorySettings:
    settings = MemorySettings(**data)
    model = settings.embedding_model
    if model.startswith(("/", "~", ".", "$")):
        folder = Path(os.path.expandvars(model)).expanduser()  # a folder: relative to the config file
        settings = replace(settings, embedding_model=str(folder if folder.is_absolute() else (path.parent / folder).resolve()))
    return settings


def _config_checks(config: Config, doc: LocatedYaml) -> list[Problem]:
    problems = []
    for alias in config.models.values():
        for fb in alias.fallbacks:
            if fb not in config.models:
                problems.append(doc.problem(("models", alias.name, "fallbacks"),
                                            f"fallback {fb!r} is not a model alias defined under 'models'."))
    if config.timezone and not valid_timezone(config.timezone):
        problems.append(doc.problem(("timezone",), f"unknown time zone {config.timezone!r}; write an IANA name such as Europe/Berlin."))
    return problems


def valid_timezone(name: str) -> bool:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        ZoneInfo(name)
        return True
    except (ZoneInfoNotFoundError, ValueError):
        return False


# --- agents -------------------------------------------------------------------------------


def load_agents(config: Config) -> tuple[dict[str, AgentSpec], list[Problem]]:
    """Every agent note in the vault's Agents/ folder. A broken note does not hide the others."""
    folder = config.vault / config.layout.agents
    agents: dict[str, AgentSpec] = {}
    problems: list[Problem] = []
    if not folder.is_dir():
        return agents, problems
    for note in sorted(folder.glob("*.md")):
        rel = note.relative_to(config.vault).as_posix()
        try:
            spec, note_problems = parse_agent_note(note.read_text(encoding="utf-8"), rel, config)
        except YamlSyntaxError as exc:
            problems.append(exc.problem)
            continue
        if spec is None:
            problems.extend(note_problems)
            continue
        if spec.name in agents:
            note_problems.append(Problem(rel, 2, "agent", f"agent {spec.name!r} is already defined in {agents[spec.name].source}."))
        problems.extend(note_problems)
        if not note_problems:
            agents[spec.name] = spec
    return agents, problems


def parse_agent_note(text: str, rel: str, config: Config) -> tuple[AgentSpec | None, list[Problem]]:
    match = _FRONTMATTER.match(text)
    if not match:
        return None, [Problem(rel, 1, "", "an agent note needs YAML frontmatter between '---' lines, starting with `agent: NAME`.")]
    doc = parse_yaml(match.group(1), rel, line_offset=1)
    if not isinstance(doc.data, dict) or "agent" not in doc.data:
        return None, []  # a note in Agents/ that is not an agent (a README, say) is fine
    problems = schema_problems(doc, AGENT)
    if problems:
        return None, problems
    d = doc.data
    spec = AgentSpec(
        name=d["agent"],
        role=d.get("role", ""),
        model=d["model"],
        reads=tuple(d.get("reads", ())),
        writes=tuple(d.get("writes", ())),
        approval=d.get("approval", "none"),
        tools=tuple(d.get("tools", ())),
        grounding=tuple(d.get("grounding", ())),
        write=WriteSpec.from_dict(d.get("write")),
        task=(d.get("task") or "").strip(),
        system_prompt=text[match.end():].strip(),
        source=rel,
        locked=bool(d.get("locked", False)),
        max_iterations=d.get("max_iterations", 8),
    )
    if spec.model not in config.models:
        problems.append(doc.problem(("model",), f"model alias {spec.model!r} is not defined in {config.path.name} (defined: {', '.join(config.models)})."))
    if spec.write:
        from routine.config.checks import write_scope_problem

        msg = write_scope_problem(spec.write, spec)
        if msg:
            problems.append(doc.problem(("write",), msg))
    return spec, problems


def agent_note_problems(problems: list[Problem], name: str) -> list[Problem]:
    """The problems of the agent note named like ``name`` (Agents/Planner.md for 'planner')."""
    return [p for p in problems if Path(p.file).stem.lower() == name.lower()]


def agent_named(agents: dict[str, AgentSpec], problems: list[Problem], name: str) -> AgentSpec:
    key = name.lower()
    if key in agents:
        return agents[key]
    own = agent_note_problems(problems, key)
    if own:
        raise ConfigError(own)
    raise UsageError(
        f"There is no agent named {name!r}" + (f" (agents: {', '.join(sorted(agents))})." if agents else "."),
        "check the name, or add an agent note in the vault's Agents/ folder.",
    )
