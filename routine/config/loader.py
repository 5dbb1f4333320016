"""Load routine.yaml and the agent notes into typed objects, reporting every problem at once."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from datetime import date
from pathlib import Path, PurePosixPath
from typing import cast

from routine import paths
from routine.config.notify import NotifySettings, Topic, quiet_hours, remind_ahead
from routine.config.calendars import CalendarSource
from routine.config.checks import pinning_conflicts, note_text_problems, scope_glob_problem, write_scope_problem
from routine.config.model import (
    AgentSpec,
    Config,
    Deployment,
    Layout,
    LibrarySource,
    MemorySettings,
    ModelAlias,
    TrialSettings,
    WriteSpec,
)
from routine.config.schedule_schema import AGENT
from routine.config.schema import CONFIG, LIBRARY_TOOLS, with_defaults
from routine.config.validate import schema_problems
from routine.config.zone import machine_zone_name
from routine.config.yamlfile import LocatedYaml, YamlSyntaxError, load_yaml, parse_yaml
from routine.durations import parse_duration
from routine.errors import ConfigError, Problem, RoutineError, UsageError, VaultNotConfigured, did_you_mean

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
    _as_written(doc.data)
    problems = schema_problems(doc, CONFIG)
    # Checked on the raw data, so a schema problem elsewhere does not hide them: all at once.
    problems += _reference_problems(doc, doc.data if isinstance(doc.data, dict) else {})
    if problems:
        raise ConfigError(sorted(problems, key=lambda p: p.line or 0))
    config = _build_config(path, cast(dict, doc.data))  # an object: the schema said so
    problems = pinning_conflicts(config, doc)
    if problems:
        raise ConfigError(problems)
    return config


def _as_written(data: object) -> None:
    """What YAML 1.1 reads otherwise than a person meant: `holiday: [2026-12-24]` as dates (the
    schema takes the text) and `notify: {on: …}`'s key as true."""
    if not isinstance(data, dict):
        return
    holiday = data.get("holiday")
    if isinstance(holiday, list):
        holiday[:] = [d.isoformat() if isinstance(d, date) else d for d in holiday]
    notify = data.get("notify")
    if isinstance(notify, dict) and True in notify and "on" not in notify:
        notify["on"] = notify.pop(True)


def _calendar(entry: str | dict) -> CalendarSource:
    spec = {"source": entry} if isinstance(entry, str) else entry
    source = spec["source"]
    default = source.rstrip("/").rsplit("/", 1)[-1].removesuffix(".ics") or source
    return CalendarSource(name=spec.get("name") or default, source=source)


def _holiday(entry: str) -> tuple[date, date]:
    """A `holiday:` entry (the schema checked its form, the loader its dates) as (first, last)."""
    first, _, last = (part.strip() for part in entry.partition(".."))
    a, b = date.fromisoformat(first), date.fromisoformat(last or first)
    if a > b:
        raise ValueError(f"{entry!r} runs backwards; write the earlier day first: {b.isoformat()}..{a.isoformat()}.")
    return a, b


def _build_config(path: Path, raw: dict) -> Config:
    data = with_defaults(CONFIG, _written_out(raw))
    ollama, sandbox, memory = data["ollama"], data["sandbox"], data["memory"]
    # $OLLAMA_HOST comes before the default host (and is often written as "0.0.0.0:11434").
    host = _base((raw.get("ollama") or {}).get("host") or os.environ.get("OLLAMA_HOST") or ollama["host"])
    return Config(
        path=path,
        vault=_path(path, data["vault"]),
        timezone=data.get("timezone"),
        ollama_host=host,
        max_resident=ollama["max_resident"],
        idle_unload=_seconds(ollama["idle_unload"]),
        preload=ollama["preload"],
        unload_foreign=ollama["unload_foreign"],
        sandbox_workdir=os.path.expanduser(sandbox["workdir"]).strip().rstrip("/"),
        sandbox_mode=sandbox["mode"],
        sandbox_timeout=_seconds(sandbox["timeout"]),
        sandbox_memory=parse_size(sandbox["memory"]),
        sandbox_output=parse_size(sandbox["output"]),
        watch_inotify=data["watch"]["inotify"],
        reconcile_every=_seconds(data["watch"]["reconcile"]),
        chat_quiet=_seconds(data["chat"]["quiet"]),
        pickup_backoff=_seconds(data["projects"]["pickup_backoff"]),
        models={name: _alias(name, spec, host) for name, spec in data["models"].items()},
        request_timeout=float(data["request_timeout"]),
        retries=data["retries"],
        retry_backoff=float(data["retry_backoff"]),
        layout=Layout(**data["layout"]),
        metrics_textfile=_metrics_textfile(path, data["metrics"].get("textfile")),
        memory=_memory_settings(path, memory),
        libraries=_libraries(path, data.get("libraries") or {}),
        holiday=tuple(_holiday(d) for d in data["holiday"]),
        calendars=tuple(_calendar(c) for c in data["calendars"]),
        notify=NotifySettings(urls=tuple(data["notify"]["urls"]), on=frozenset(Topic(t) for t in data["notify"]["on"]),
                              ready=tuple(data["notify"]["ready"]), quiet=quiet_hours(data["notify"]["quiet_hours"]),
                              remind=remind_ahead(data["notify"]["remind"])),
        trials=TrialSettings(window=quiet_hours(data["trials"]["window"]), clear=_seconds(data["trials"]["clear"])),
    )


def zone_name_of(explicit: str | os.PathLike | None = None) -> str:
    """Routine's zone for a command that may not need the config: a broken or missing routine.yaml
    still shows times on the machine's clock rather than failing."""
    try:
        return load_config(explicit).zone_name()
    except RoutineError:
        return machine_zone_name()


def _written_out(raw: dict) -> dict:
    """The short forms written out: an alias `general: MODEL` is {model: MODEL}, a library
    `shared: FOLDER` is {path: FOLDER}; then the schema's defaults apply to both alike."""
    data = dict(raw)
    data["models"] = {name: {"model": spec} if isinstance(spec, str) else spec for name, spec in raw["models"].items()}
    data["libraries"] = {name: {"path": spec} if isinstance(spec, str) else spec
                         for name, spec in (raw.get("libraries") or {}).items()}
    return data


def _alias(name: str, spec: dict, host: str) -> ModelAlias:
    primary = Deployment(spec["model"], _base(spec.get("api_base") or host))
    extra = (Deployment(d.get("model") or spec["model"], _base(d["api_base"]), d.get("api_key_env"))
             for d in spec["deployments"])
    return ModelAlias(
        name=name,
        model=spec["model"],
        num_ctx=spec["num_ctx"],
        num_predict=spec["num_predict"],
        tokenizer=spec["tokenizer"],
        fallbacks=tuple(spec["fallbacks"]),
        options=tuple(sorted(spec["options"].items())),
        keep_alive=spec["keep_alive"],
        api_base=spec.get("api_base"),
        deployments=tuple(dict.fromkeys((primary, *extra))),
    )


def _seconds(duration: str) -> float:
    return parse_duration(duration).total_seconds()


def _path(config_path: Path, value: str) -> Path:
    """A path as written in routine.yaml: ~ and $VARS expanded, relative to the config file."""
    folder = Path(os.path.expandvars(value)).expanduser()
    return folder if folder.is_absolute() else (config_path.parent / folder).resolve()


def _libraries(config_path: Path, data: dict) -> dict[str, LibrarySource]:
    out = {"general": LibrarySource("general", paths.shipped("library"), LIBRARY_TOOLS)}
    for name, spec in data.items():
        out[name] = LibrarySource(name, _path(config_path, spec["path"]), tuple(spec["tools"]))
    return out


def parse_size(text: str) -> int:
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMG]?)(i?B?)\s*", text)
    if m is None:
        raise ValueError(f"{text!r} is not a size")  # the schema's SIZE pattern lets none through
    return int(float(m.group(1)) * {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[m.group(2)])


def _base(url: str) -> str:
    url = url.strip().rstrip("/")
    return url if "://" in url else "http://" + url


def _metrics_textfile(config_path: Path, value: str | bool | None) -> Path | None:
    if value is False:
        return None
    if not value:
        return paths.state_dir() / "metrics" / "routine.prom"
    return _path(config_path, str(value))


def _memory_settings(path: Path, data: dict) -> MemorySettings:
    model = data["embedding_model"]
    if model.startswith(("/", "~", ".", "$")):  # a folder: relative to the config file
        model = str(_path(path, model))
    return MemorySettings(embedding_model=model, unload_after=float(data["unload_after"]),
                          chunk_chars=data["chunk_chars"])


def _reference_problems(doc: LocatedYaml, data: dict) -> list[Problem]:
    """Names that must resolve: each fallback to a model alias, the time zone to an IANA zone."""
    problems = []
    models = data.get("models")
    models = models if isinstance(models, dict) else {}
    for name, spec in models.items():
        fallbacks = spec.get("fallbacks") if isinstance(spec, dict) else None
        for fb in fallbacks if isinstance(fallbacks, list) else ():
            if isinstance(fb, str) and fb not in models:
                problems.append(doc.problem(("models", name, "fallbacks"),
                                            f"fallback {fb!r} is not a model alias defined under 'models'."))
    for section, key, example in (("notify", "quiet_hours", "22:00-07:00"), ("trials", "window", "01:00-05:00")):
        hours = (data.get(section) or {}).get(key) if isinstance(data.get(section), dict) else None
        try:
            quiet_hours(hours) if isinstance(hours, str) else None
        except ValueError:
            problems.append(doc.problem((section, key), f"{hours!r} is not two times of day; write e.g. {example}."))
    holiday = data.get("holiday")
    for i, entry in enumerate(holiday if isinstance(holiday, list) else ()):
        try:
            _holiday(entry) if isinstance(entry, str) else None
        except ValueError as exc:
            backwards = "runs backwards" in str(exc)
            problems.append(doc.problem(("holiday", i), str(exc) if backwards else f"{entry!r} is not a real date; "
                                        "write e.g. 2026-12-24 or 2026-12-24..2026-12-26."))
    zone = data.get("timezone")
    if isinstance(zone, str) and zone and not valid_timezone(zone):
        problems.append(
            doc.problem(("timezone",), f"unknown time zone {zone!r}; write an IANA name such as Europe/Berlin.")
        )
    return problems


def valid_timezone(name: str) -> bool:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        ZoneInfo(name)
        return True
    except (ZoneInfoNotFoundError, ValueError):
        return False


# --- agents -------------------------------------------------------------------------------


def load_agents(config: Config, require_vault: bool = False) -> tuple[dict[str, AgentSpec], list[Problem]]:
    """Every agent note in the vault's Agents/ folder. A broken note does not hide the others.

    ``require_vault``: a missing vault folder is the error (for commands a person runs), not
    an empty team that makes every later message about a missing agent."""
    if require_vault and not config.vault.is_dir():
        raise VaultNotConfigured(config.vault, config.path)
    folder = config.vault / config.layout.agents
    agents: dict[str, AgentSpec] = {}
    problems: list[Problem] = []
    if not folder.is_dir():
        return agents, problems
    for note in sorted(folder.glob("*.md")):
        rel = note.relative_to(config.vault).as_posix()
        try:
            spec, note_problems = parse_agent_note(read_agent_note(config.vault, rel), rel, config)
        except YamlSyntaxError as exc:
            problems.append(exc.problem)
            continue
        if spec is None:
            problems.extend(note_problems)
            continue
        if spec.name in agents:
            note_problems.append(
                Problem(rel, 2, "agent", f"agent {spec.name!r} is already defined in {agents[spec.name].source}.")
            )
        problems.extend(note_problems)
        if not note_problems:
            agents[spec.name] = spec
    return agents, problems


def is_agent_note(rel: str, frontmatter: object, folder: str) -> bool:
    """**The one declaration of an agent note**: a ``.md`` note right in the agents folder
    (``layout.agents``) whose frontmatter names ``agent:``. A custom agent's own folder beneath it
    (``Agents/Pricer/Log.md``) holds the agent's files, never agents. ``load_agents`` and the
    knowledge graph both ask this."""
    path = PurePosixPath(rel)
    return (path.suffix == ".md" and path.parent.as_posix() == folder and isinstance(frontmatter, dict)
            and "agent" in frontmatter)


def read_agent_note(vault: Path, rel: str) -> str:
    """An agent note's text: a regular file inside the vault, UTF-8, within the size cap.
    Anything else is a located problem of that note alone, never a traceback for every agent."""
    from routine.vault.files import CONFIG_MAX_BYTES, decodable, read_regular, shown
    from routine.vault.scope import resolve

    def refuse(message: str) -> YamlSyntaxError:
        return YamlSyntaxError(Problem(shown(rel), None, "", message))

    if not decodable(rel):
        raise refuse("the file name is not valid UTF-8; rename the note.")
    try:
        path, _ = resolve(vault, rel)
        raw = read_regular(path, CONFIG_MAX_BYTES, label=rel)
    except RoutineError as exc:
        raise refuse(str(exc)) from None
    except OSError as exc:
        raise refuse(f"cannot be read ({exc.strerror}).") from None
    try:
        return raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        raise YamlSyntaxError(Problem(rel, line, "", "this note is not UTF-8 text (binary, or saved as UTF-16); "
                                                     "save it as UTF-8 or move it out of Agents/.")) from None


def parse_agent_note(text: str, rel: str, config: Config) -> tuple[AgentSpec | None, list[Problem]]:
    match = _FRONTMATTER.match(text)
    if not match:
        return None, [
            Problem(
                rel, 1, "", "an agent note needs YAML frontmatter between '---' lines, starting with `agent: NAME`."
            )
        ]
    doc = parse_yaml(match.group(1), rel, line_offset=1)
    if not is_agent_note(rel, doc.data, config.layout.agents):
        return None, []  # a note in Agents/ that is not an agent (a README, say) is fine
    problems = schema_problems(doc, AGENT)
    if problems:
        return None, problems
    d = with_defaults(AGENT, doc.data)
    # A custom agent's own folder beside its note (Agents/Pricer/) is part of what `custom: true`
    # declares; everything else it may reach is added where it runs (routine.access).
    desk = [PurePosixPath(rel).with_suffix("").as_posix() + "/**"] if d.get("custom") else []
    spec = AgentSpec(
        name=d["agent"],
        role=d.get("role", ""),
        model=d["model"],
        reads=tuple(dict.fromkeys([*d.get("reads", ()), *desk])),
        writes=tuple(dict.fromkeys([*d.get("writes", ()), *desk])),
        approval=d["approval"],
        tools=tuple(d.get("tools", ())),
        grounding=tuple(d.get("grounding", ())),
        inputs=tuple(d.get("inputs", ())),
        write=WriteSpec.from_dict(d.get("write")),
        task=(d.get("task") or "").strip(),
        system_prompt=text[match.end():].strip(),
        source=rel,
        locked=bool(d.get("locked", False)),
        custom=bool(d.get("custom", False)),
        author=str(d.get("author") or ""),
        version=str(d.get("version") or ""),
        behaviour=d.get("behaviour") or "",
        description=d.get("description") or "",
        max_iterations=d["max_iterations"],
        timeout=_seconds(d["timeout"]),
        tool_reserve=d["tool_reserve"],
        grounding_check=d["grounding_check"],
    )

    templated = note_text_problems(d)  # refused before anything renders it, even in the sandbox
    problems += [doc.problem(where, msg) for where, msg in templated]
    for key in ("reads", "writes"):
        for i, glob in enumerate(getattr(spec, key)):
            msg = scope_glob_problem(glob)
            if msg:
                problems.append(doc.problem((key, i), msg))
    if spec.model not in config.models:
        problems.append(
            doc.problem(
                ("model",),
                f"model alias {spec.model!r} is not defined in {config.path.name} (defined: "
                f"{', '.join(config.models)}).",
            )
        )
    if spec.write and not any(where[0] == "write" for where, _ in templated):

        msg = write_scope_problem(spec.write, spec)
        if msg:
            problems.append(doc.problem(("write",), msg))
    return spec, problems


def agent_note_problems(problems: list[Problem], name: str) -> list[Problem]:
    """The problems of the agent note named like ``name`` (Agents/Planner.md for 'planner')."""
    return [p for p in problems if Path(p.file).stem.lower() == name.lower()]


def agent_named(agents: dict[str, AgentSpec], problems: list[Problem], name: str,
                blocks: Iterable[str] | None = None) -> AgentSpec:
    """The agent called ``name``; else its note's problems, else a suggestion among the agents
    (and the schedule ``blocks``, for `routine fire`, which takes either)."""
    key = name.lower()
    if key in agents:
        return agents[key]
    own = agent_note_problems(problems, key)
    if own:
        raise ConfigError(own)
    nor = "" if blocks is None else " and no block of that name"
    listing = f" (agents: {', '.join(sorted(agents))})" if agents else ""
    raise UsageError(
        f"There is no agent named {name!r}{nor}{listing}.{did_you_mean(name, [*agents, *(blocks or ())])}",
        "check the name, or add an agent note in the vault's Agents/ folder.",
    )
