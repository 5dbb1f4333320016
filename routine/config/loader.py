"""Load routine.yaml into typed objects, reporting every problem at once (the agent notes:
``routine.config.agent_notes``)."""

from __future__ import annotations

import os
import re
from datetime import date
from pathlib import Path
from typing import cast

from routine import paths
from routine.config.agent_notes import (
    agent_named,
    agent_note_problems,
    is_agent_note,
    load_agents,
    parse_agent_note,
    read_agent_note,
)
from routine.config.calendars import CalendarSource
from routine.config.checks import pinning_conflicts
from routine.config.model import (
    Config,
    Deployment,
    EventSettings,
    Layout,
    LibrarySource,
    McpServer,
    MemorySettings,
    ModelAlias,
    TrialSettings,
)
from routine.config.notify import CHANNELS, ChannelSettings, NotifySettings, quiet_hours, remind_ahead, topics
from routine.config.schema import CONFIG, LIBRARY_TOOLS, with_defaults
from routine.config.validate import schema_problems
from routine.config.yamlfile import LocatedYaml, YamlSyntaxError, load_yaml
from routine.config.zone import machine_zone_name
from routine.durations import parse_duration
from routine.errors import ConfigError, Problem, RoutineError, UsageError
from routine.jsonvalue import Parsed
from routine.redact import source_name

# The agent notes are read in ``routine.config.agent_notes``; their names stay importable from here.
__all__ = ["agent_named", "agent_note_problems", "is_agent_note", "load_agents", "load_config", "parse_agent_note",
           "parse_size", "read_agent_note", "valid_timezone", "zone_name_of"]


def load_config(explicit: str | os.PathLike[str] | None = None) -> Config:
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
    config = _build_config(path, cast(Parsed, doc.data))  # an object: the schema said so
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


def _channels(notify: Parsed) -> tuple[ChannelSettings, ...]:
    """The channels of their own under `notify:` (ntfy, telegram …), as written (on or off)."""
    return tuple(kind(**{k: str(v) for k, v in notify[name].items()}) for name, kind in CHANNELS.items())


def _calendar(entry: str | Parsed) -> CalendarSource:
    spec = {"source": entry} if isinstance(entry, str) else entry
    source = spec["source"]
    return CalendarSource(name=spec.get("name") or source_name(source), source=source)


def _holiday(entry: str) -> tuple[date, date]:
    """A `holiday:` entry (the schema checked its form, the loader its dates) as (first, last)."""
    first, _, last = (part.strip() for part in entry.partition(".."))
    a, b = date.fromisoformat(first), date.fromisoformat(last or first)
    if a > b:
        raise ValueError(f"{entry!r} runs backwards; write the earlier day first: {b.isoformat()}..{a.isoformat()}.")
    return a, b


def _build_config(path: Path, raw: Parsed) -> Config:
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
        notify=NotifySettings(urls=tuple(data["notify"]["urls"]), on=topics(data["notify"]["on"]),
                              ready=tuple(data["notify"]["ready"]), quiet=quiet_hours(data["notify"]["quiet_hours"]),
                              remind=remind_ahead(data["notify"]["remind"]),
                              channels=_channels(data["notify"]), answer_within=parse_duration(
                                  data["notify"]["answer_within"])),
        trials=TrialSettings(window=quiet_hours(data["trials"]["window"]), clear=_seconds(data["trials"]["clear"])),
        events=EventSettings(listen=data["events"]["listen"], per_minute=data["events"]["per_minute"],
                             tokens=tuple(sorted(data["events"]["tokens"].items()))),
        mcp_servers={name: _mcp_server(path, name, spec) for name, spec in data["mcp_servers"].items()},
        author=data.get("author"),
    )


def _mcp_server(config_path: Path, name: str, spec: Parsed) -> McpServer:
    return McpServer(name=name, command=os.path.expanduser(spec["command"]) if spec.get("command") else None,
                     args=tuple(spec["args"]), env=tuple((str(k), str(v)) for k, v in spec["env"].items()),
                     url=spec.get("url"), paths=tuple(_path(config_path, p) for p in spec["paths"]),
                     hosts=tuple(spec["hosts"]), timeout=_seconds(spec["timeout"]))


def zone_name_of(explicit: str | os.PathLike[str] | None = None) -> str:
    """Routine's zone for a command that may not need the config: a broken or missing routine.yaml
    still shows times on the machine's clock rather than failing."""
    try:
        return load_config(explicit).zone_name()
    except RoutineError:
        return machine_zone_name()


def _written_out(raw: Parsed) -> Parsed:
    """The short forms written out: an alias `general: MODEL` is {model: MODEL}, a library
    `shared: FOLDER` is {path: FOLDER}; then the schema's defaults apply to both alike."""
    data = dict(raw)
    data["models"] = {name: {"model": spec} if isinstance(spec, str) else spec for name, spec in raw["models"].items()}
    data["libraries"] = {name: {"path": spec} if isinstance(spec, str) else spec
                         for name, spec in (raw.get("libraries") or {}).items()}
    return data


def _alias(name: str, spec: Parsed, host: str) -> ModelAlias:
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


def _libraries(config_path: Path, data: Parsed) -> dict[str, LibrarySource]:
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


def _memory_settings(path: Path, data: Parsed) -> MemorySettings:
    model = data["embedding_model"]
    if model.startswith(("/", "~", ".", "$")):  # a folder: relative to the config file
        model = str(_path(path, model))
    return MemorySettings(embedding_model=model, unload_after=float(data["unload_after"]),
                          chunk_chars=data["chunk_chars"])


def _reference_problems(doc: LocatedYaml, data: Parsed) -> list[Problem]:
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
