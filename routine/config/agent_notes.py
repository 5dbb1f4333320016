"""Agent notes: which notes in the agents folder are agents (``is_agent_note``, the one
declaration), each read safely and parsed into an ``AgentSpec`` with its located problems, and
the agent a command names (``agent_named``). routine.yaml itself is ``routine.config.loader``."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from routine.config.checks import note_text_problems, scope_glob_problem, write_scope_problem
from routine.config.model import AgentSpec, Config, WriteSpec
from routine.config.schedule_schema import AGENT
from routine.config.schema import with_defaults
from routine.config.tool_names import mcp_reference
from routine.config.validate import schema_problems
from routine.config.yamlfile import YamlSyntaxError, parse_yaml
from routine.durations import parse_duration
from routine.errors import ConfigError, Problem, RoutineError, UsageError, VaultNotConfigured, did_you_mean
from routine.vault.files import CONFIG_MAX_BYTES, decodable, read_regular, shown
from routine.vault.scope import resolve

_FRONTMATTER = re.compile(r"\A\ufeff?---[ \t]*\r?\n(.*?)^---[ \t]*\r?$\n?", re.S | re.M)


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
        timeout=parse_duration(d["timeout"]).total_seconds(),
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
    for i, name in enumerate(spec.tools):
        ref = mcp_reference(name)
        if ref is not None and ref[0] not in config.mcp_servers:
            problems.append(doc.problem(("tools", i), f"{name!r} names the MCP server {ref[0]!r}, which is not "
                                        f"under `mcp_servers:` in {config.path.name} (defined: "
                                        f"{', '.join(config.mcp_servers) or 'none'})."))
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
