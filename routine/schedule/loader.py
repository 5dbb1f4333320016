"""Load `schedules/*.yaml` into typed blocks and triggers, reporting every problem at once.

Each file is validated on its own, so the daemon can keep the last good version of one file
while another is being fixed; `load_schedules` raises with the problems of all files.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

from routine.config.loader import valid_timezone
from routine.config.model import AgentSpec, Config, WriteSpec
from routine.config.schedule_schema import BLOCK, SCHEDULE, TRIGGER
from routine.config.schema import with_defaults
from routine.config.validate import schema_problems
from routine.config.yamlfile import LocatedYaml, PathKey, YamlSyntaxError, load_yaml
from routine.durations import parse_duration
from routine.errors import ConfigError, Problem, RoutineError
from routine.jsonvalue import Parsed
from routine.schedule import chains
from routine.schedule.conflicts import section_clashes
from routine.schedule.cron import Cron, CronError
from routine.schedule.model import Block, RetryPolicy, Schedules, Trigger
from routine.schedule.project_cadence import project_blocks
from routine.schedule.steps import branch_problems, check_template, parse_step
from routine.vault.files import CONFIG_MAX_BYTES, read_regular


@dataclass
class FileResult:
    path: Path
    blocks: dict[str, Block] = field(default_factory=dict)
    triggers: list[Trigger] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


def load_schedules(config: Config, agents: dict[str, AgentSpec]) -> Schedules:
    results = [load_file(p, config, agents) for p in schedule_files(config)] + [project_result(config, agents)]
    problems = folder_problems(config) + [p for r in results for p in r.problems]
    problems += cross_file_problems(results)
    if problems:
        raise ConfigError(problems)
    return merge(results)


def in_force(config: Config, agents: dict[str, AgentSpec]) -> tuple[Schedules, dict[str, list[Problem]]]:
    """What holds from the files that are sound, and the broken files with their problems.

    One broken file does not hide the rest (`schedule list`/`next` show what is in force); a
    clash between files counts against the files it names."""
    results = [load_file(p, config, agents) for p in schedule_files(config)] + [project_result(config, agents)]
    broken: dict[str, list[Problem]] = {}
    for r in results:
        if r.problems:
            broken[str(r.path)] = list(r.problems)
    for p in cross_file_problems([r for r in results if not r.problems]):
        broken.setdefault(p.file, []).append(p)
    return merge([r for r in results if str(r.path) not in broken]), broken


def schedule_files(config: Config) -> list[Path]:
    folder = config.schedules_dir
    return sorted(folder.glob("*.yaml")) + sorted(folder.glob("*.yml")) if folder.is_dir() else []


def folder_problems(config: Config) -> list[Problem]:
    """A file (or anything else) where the schedules folder should be."""
    folder = config.schedules_dir
    if folder.exists() and not folder.is_dir():
        return [Problem(str(folder), None, "", "this should be the folder of schedule files, but it is a file; "
                                               "move it away and make a folder `schedules/` beside routine.yaml.")]
    return []


def block_from_files(config: Config, agents: dict[str, AgentSpec], block_id: str) -> Block | None:
    """One block by id, judged with the file it is in only (for `routine fire BLOCK`)."""
    projects = project_result(config, agents)
    if block_id in projects.blocks:
        return projects.blocks[block_id]
    for path in schedule_files(config):
        result = load_file(path, config, agents)
        if block_id in result.blocks:
            return result.blocks[block_id]
        if result.problems and _declares_block(path, block_id):
            raise ConfigError(result.problems)
    return None


def project_result(config: Config, agents: dict[str, AgentSpec]) -> FileResult:
    """The projects' cadences (digest, review) as blocks, derived from their home notes."""
    blocks, problems = project_blocks(config, agents)
    return FileResult(config.vault / "Projects", blocks=blocks, problems=problems)


def _declares_block(path: Path, block_id: str) -> bool:
    return block_id in declared_blocks(path) or _named_in_text(path, block_id)


def _named_in_text(path: Path, block_id: str) -> bool:
    """A file that does not parse as YAML: does its text name the block?"""

    try:
        text = read_regular(path, CONFIG_MAX_BYTES).decode("utf-8", "replace")
    except (OSError, RoutineError):
        return False
    return re.search(rf"^\s*['\"]?{re.escape(block_id)}['\"]?\s*:", text, re.MULTILINE) is not None


def declared_block_ids(config: Config) -> list[str]:
    """Every block id the schedule files name, valid or not (for suggesting a misspelt one)."""
    return [b for path in schedule_files(config) for b in declared_blocks(path)]


def declared_blocks(path: Path) -> list[str]:
    try:
        data = load_yaml(path).data
    except YamlSyntaxError:
        return []
    blocks = data.get("blocks") if isinstance(data, dict) else None
    return [str(b) for b in blocks] if isinstance(blocks, dict) else []


def merge(results: list[FileResult]) -> Schedules:
    out = Schedules()
    for r in results:
        out.blocks.update(r.blocks)
        out.triggers.extend(r.triggers)
        if r.path.suffix in (".yaml", ".yml"):  # not the projects' cadences (derived from notes)
            out.files.append(str(r.path))
    return out


def load_file(path: Path, config: Config, agents: dict[str, AgentSpec]) -> FileResult:
    result = FileResult(path)
    try:
        doc = load_yaml(path)
    except YamlSyntaxError as exc:
        result.problems.append(exc.problem)
        return result
    if doc.data is None:
        return result
    _normalise_on_keys(doc.data)
    result.problems = schema_problems(doc, SCHEDULE)
    data = doc.data
    if not isinstance(data, dict):
        return result
    # Go on past schema problems: the semantic checks of every well-formed part still run,
    # so a person sees every mistake at once. A file with any problem loads nothing.
    tz = data.get("timezone") or config.timezone
    if data.get("timezone"):
        if not valid_timezone(data["timezone"]):
            result.problems.append(
                doc.problem(
                    ("timezone",), f"unknown time zone {data['timezone']!r}; write an IANA name such as Europe/Berlin."
                )
            )
    blocks = data.get("blocks")
    for block_id, raw in (blocks.items() if isinstance(blocks, dict) else ()):
        if not _well_formed_block(raw):
            continue
        block = _block(doc, block_id, raw, tz, agents, result.problems)
        if block:
            result.blocks[block_id] = block
    triggers = data.get("triggers")
    for i, raw in enumerate(triggers if isinstance(triggers, list) else []):
        if isinstance(raw, dict) and raw.get("on") == "event" and isinstance(raw.get("event"), str):
            trigger = _event_trigger(doc, i, raw, agents, result.problems)
            if trigger:
                result.triggers.append(trigger)
            continue
        if not (isinstance(raw, dict) and isinstance(raw.get("agent"), str) and isinstance(raw.get("on"), str)
                and isinstance(raw.get("path"), str)):
            continue
        trigger = _trigger(doc, i, raw, agents, result.problems)
        if trigger:
            result.triggers.append(trigger)
    if result.problems:
        result.blocks, result.triggers = {}, []
        result.problems.sort(key=lambda p: p.line or 0)
    return result


def _duration(text: str) -> timedelta:
    try:
        return parse_duration(text)
    except ValueError:
        return timedelta(0)  # reported by the schema: the file loads nothing


def _well_formed_block(raw: object) -> bool:
    return (isinstance(raw, dict) and isinstance(raw.get("cron") or raw.get("after"), (str, dict))
            and isinstance(raw.get("steps"), list)
            and all(isinstance(s, dict) and isinstance(s.get("agent"), str) for s in raw["steps"]))


def _normalise_on_keys(data: object) -> None:
    # YAML 1.1 reads an unquoted `on:` as the boolean True; a person writing `on: created`
    # means the key "on".
    for trigger in (data.get("triggers") or []) if isinstance(data, dict) else []:
        if isinstance(trigger, dict) and True in trigger:
            trigger["on"] = trigger.pop(True)


def _block(doc: LocatedYaml, block_id: str, raw: Parsed, tz: str | None, agents: dict[str, AgentSpec],
           problems: list[Problem]) -> Block | None:
    here = ("blocks", block_id)
    before = len(problems)
    chain = chains.parse(doc, here, raw, problems)
    cron = chains.never(chain) if chain is not None else _cron(doc, here, raw.get("cron"), problems)
    steps = []
    seen: list[str] = [chain.step] if chain is not None and chain.step else []  # its output is the first input
    for i, s in enumerate(raw["steps"]):
        step = parse_step(doc, here + ("steps", i), s, agents, seen, problems)
        if step:
            steps.append(step)
        seen.append(s["agent"])
    branch_problems(doc, here, steps, problems)
    if cron is None or len(problems) > before:  # a bad cron is among the problems
        return None
    raw = with_defaults(BLOCK, raw)  # the defaults are the schema's
    return Block(id=block_id, file=doc.file, cron=cron, timezone=tz, steps=tuple(steps),
                 description=raw["description"], missed=raw["missed"], grace=_duration(raw["grace"]),
                 enabled=raw["enabled"], retry=_retry(raw["retry"]), after=chain)


def _cron(doc: LocatedYaml, here: PathKey, expr: object, problems: list[Problem]) -> Cron | None:
    if not isinstance(expr, str):
        return None  # said by chains.parse: a block needs `cron:` or `after:`
    try:
        return Cron.parse(expr)
    except CronError as exc:
        problems.append(doc.problem(here + ("cron",), f"bad cron: {exc}."))
        return None


def _retry(raw: Parsed) -> RetryPolicy:
    return RetryPolicy(attempts=raw["attempts"], backoff=_duration(raw["backoff"]))


def _trigger(doc: LocatedYaml, i: int, raw: Parsed, agents: dict[str, AgentSpec],
             problems: list[Problem]) -> Trigger | None:
    here = ("triggers", i)
    found = _agent_and_write(doc, here, raw.get("agent"), raw, agents, problems)
    if found is None:
        return None
    agent, write = found
    return Trigger(id=f"{Path(doc.file).stem}#{i}", file=doc.file, on=raw["on"], path=raw["path"], agent=agent.name,
                   task=raw.get("task"), where=tuple(sorted((raw.get("where") or {}).items())),
                   debounce=_duration(with_defaults(TRIGGER, raw)["debounce"]), write=write)


def _agent_and_write(doc: LocatedYaml, here: PathKey, agent_name: object, raw: Parsed,
                     agents: dict[str, AgentSpec], problems: list[Problem]) -> tuple[AgentSpec, WriteSpec] | None:
    """A trigger's agent, its task checked as a template, and where it writes (the trigger's, else the
    agent's default); None, with the problem said, when the agent is unknown or nothing says where."""
    agent = agents.get(agent_name) if isinstance(agent_name, str) else None
    if agent is None:
        problems.append(doc.problem(here + ("agent",), f"unknown agent {agent_name!r}."))
        return None
    if "task" in raw:
        check_template(doc, here + ("task",), raw["task"], [], problems)
    write = WriteSpec.from_dict(raw.get("write")) or agent.write
    if write is None:
        problems.append(doc.problem(here, f"trigger needs a `write:` target (agent {agent.name} has no default)."))
        return None
    return agent, write


def _event_trigger(doc: LocatedYaml, i: int, raw: Parsed, agents: dict[str, AgentSpec],
                   problems: list[Problem]) -> Trigger | None:
    """`"on": event`: an outside event's trigger (`routine trigger NAME`), running an agent (with
    its task and write target, as a note's trigger does) or a block (its steps as written)."""
    here = ("triggers", i)
    before = len(problems)
    agent_name, block = raw.get("agent"), raw.get("block")
    if (agent_name is None) == (block is None):
        problems.append(doc.problem(here, "an event's trigger runs either an `agent` (with its `task`) or a "
                                          "`block`; write one of the two."))
        return None
    if block is not None:
        for key in ("task", "write", "path", "where"):
            if key in raw:
                problems.append(doc.problem(here + (key,), f"`{key}` is not read when the trigger runs a block: "
                                                           "the block's steps say what they do; take it out."))
        if len(problems) > before or not isinstance(block, str):
            return None
        return Trigger(id=f"{Path(doc.file).stem}#{i}", file=doc.file, on="event", path="", agent="",
                       event=raw["event"], block=block)
    for key in ("path", "where"):
        if key in raw:
            problems.append(doc.problem(here + (key,), f"`{key}` is for a note's trigger; an event's has none."))
    found = _agent_and_write(doc, here, agent_name, raw, agents, problems)
    if found is None or len(problems) > before:
        return None
    agent, write = found
    return Trigger(id=f"{Path(doc.file).stem}#{i}", file=doc.file, on="event", path="", agent=agent.name,
                   task=raw.get("task"), write=write, event=raw["event"])


def cross_file_problems(results: list[FileResult]) -> list[Problem]:
    """Duplicate block ids across files, and two blocks writing one section at one minute."""
    problems = []
    owner: dict[str, Path] = {}
    for r in results:
        for block_id in r.blocks:
            if block_id in owner and owner[block_id] != r.path:
                problems.append(
                    Problem(
                        str(r.path),
                        None,
                        f"blocks.{block_id}",
                        f"block {block_id!r} is also defined in {owner[block_id]}.",
                    )
                )
            owner.setdefault(block_id, r.path)

    problems += section_clashes([b for r in results for b in r.blocks.values()])
    problems += [Problem(str(r.path), None, f"triggers[{t.id.rsplit('#', 1)[-1]}].block",
                         f"block {t.block!r} is in no schedule file (known: {', '.join(sorted(owner)) or 'none'}).")
                 for r in results for t in r.triggers if t.block is not None and t.block not in owner]
    return problems + chains.problems((b, r.path) for r in results for b in r.blocks.values())
