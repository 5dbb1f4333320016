"""A schedule's steps, checked as they are loaded: the agent, its task, inputs, search and graph
templates against the steps before it, each input's form and note against the agent's reads
scope, the write target, and `when:`/`else:` branches. Blocks and files: ``routine.schedule.loader``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from routine.config.checks import sample_path, template_problems, write_scope_problem
from routine.config.conditions import Condition
from routine.config.input_forms import Kind
from routine.config.input_forms import kind_of as input_kind
from routine.config.input_forms import problem as input_problem
from routine.config.model import AgentSpec, GraphSpec, SearchSpec, StepSpec, WriteSpec
from routine.config.schedule_schema import STEP
from routine.config.schema import with_defaults
from routine.config.yamlfile import LocatedYaml, PathKey
from routine.errors import Problem
from routine.jsonvalue import Parsed
from routine.templating import LIST_VARIABLES
from routine.vault.scope import in_scope as scope_has


def parse_step(doc: LocatedYaml, here: PathKey, s: Parsed, agents: dict[str, AgentSpec], earlier: list[str],
          problems: list[Problem]) -> StepSpec | None:
    agent = agents.get(s["agent"])
    before = len(problems)
    if agent is None:
        problems.append(
            doc.problem(
                here + ("agent",),
                f"unknown agent {s['agent']!r}" + (f" (agents: {', '.join(sorted(agents))})." if agents else "."),
            )
        )
        return None
    if s["agent"] in earlier:
        problems.append(
            doc.problem(
                here + ("agent",),
                f"agent {s['agent']!r} already has a step in this block; steps are named by agent, so use it "
                "once per block.",
            )
        )
    if isinstance(s.get("task"), str):
        check_template(doc, here + ("task",), s["task"], earlier, problems)
    if not s.get("task") and not agent.task:
        problems.append(doc.problem(here, f"step needs a `task:` (agent {agent.name} has no default task)."))
    for j, item in enumerate(s.get("inputs", [])):
        if not isinstance(item, str):
            continue
        check_template(doc, here + ("inputs", j), item, earlier, problems)
        wrong = input_problem(item)
        if wrong is not None:
            problems.append(doc.problem(here + ("inputs", j), f"{wrong[0].rstrip('.')}; {wrong[1]}"))
            continue
        kind, words = input_kind(item)
        if kind in (Kind.NOTE, Kind.LINKS):
            rel = sample_path(_input_path(words))
            if rel is not None and not in_scope(agent.reads, rel):
                problems.append(
                    doc.problem(
                        here + ("inputs", j),
                        f"{item!r} is outside agent {agent.name}'s reads scope ({', '.join(agent.reads) or 'none'}).",
                    )
                )
    if isinstance(s.get("search"), dict) and isinstance(s["search"].get("query"), str):
        check_template(doc, here + ("search", "query"), s["search"]["query"], earlier, problems)
    if isinstance(s.get("graph"), dict) and isinstance(s["graph"].get("around"), str):
        around = s["graph"]["around"]
        check_template(doc, here + ("graph", "around"), around, earlier, problems)
        if "/" in around and "{" not in around and not in_scope(agent.reads, around.removesuffix(".md") + ".md"):
            problems.append(doc.problem(here + ("graph", "around"), f"{around!r} is outside agent {agent.name}'s reads "
                                        f"scope ({', '.join(agent.reads) or 'none'}), so its graph would be empty."))
    raw_write = s.get("write") if isinstance(s.get("write"), dict) else None
    write = WriteSpec.from_dict(raw_write) or agent.write
    if write is None:
        problems.append(doc.problem(here, f"step needs a `write:` target (agent {agent.name} has no default)."))
    elif raw_write:

        for key in WriteSpec.KEYS:
            if isinstance(raw_write.get(key), str):
                check_template(doc, here + ("write", key), raw_write[key], earlier, problems)
        msg = write_scope_problem(write, agent)
        if msg and "template" not in msg:
            problems.append(doc.problem(here + ("write",), msg))
    if len(problems) > before:
        return None
    s = with_defaults(STEP, s)
    search = SearchSpec(s["search"]["query"], s["search"]["k"]) if isinstance(s.get("search"), dict) else None
    raw_graph = s.get("graph")
    graph = (GraphSpec(raw_graph["around"], raw_graph["depth"])
             if isinstance(raw_graph, dict) and isinstance(raw_graph.get("around"), str) else None)
    return StepSpec(agent=agent.name, task=s.get("task"), inputs=tuple(s.get("inputs", ())), search=search, write=write,
                    graph=graph, when=_condition(doc, here, s.get("when"), earlier, problems), advice=s["advice"])


def _condition(doc: LocatedYaml, here: PathKey, raw: Parsed | None, earlier: list[str],
               problems: list[Problem]) -> Condition | None:
    """`when:` names an earlier step of the block (the schema checked its form)."""
    if raw is None:
        return None
    if raw["step"] not in earlier:
        problems.append(doc.problem(here + ("when", "step"), f"`when` names step {raw['step']!r}, which is not an "
                                    f"earlier step of this block ({', '.join(earlier) or 'none before it'})."))
    verdict = raw.get("verdict")
    verdicts = tuple(
        " ".join(str(v).lower().split()) for v in ([verdict] if isinstance(verdict, str) else verdict or ())
    )
    return Condition(step=raw["step"], verdict=verdicts, contains=raw.get("contains"), otherwise=raw.get("else"))


def branch_problems(doc: LocatedYaml, here: PathKey, steps: list[StepSpec], problems: list[Problem]) -> None:
    """Each `else:` names a later step of the block, one that has no `when:` of its own and is no
    other step's `else:`."""
    names = [s.agent for s in steps]
    taken: set[str] = set()
    for i, step in enumerate(steps):
        target = step.when.otherwise if step.when else None
        if target is None:
            continue
        where = here + ("steps", i, "when", "else")
        if target not in names[i + 1:]:
            problems.append(doc.problem(where, f"`else` names step {target!r}, which is not a later step of this "
                                        f"block ({', '.join(names[i + 1:]) or 'none after it'})."))
        elif steps[names.index(target)].when is not None or target in taken:
            problems.append(doc.problem(where, f"step {target!r} is already conditional; an `else` step runs only "
                                        "as this branch, so give it no `when` and name it in one `else`."))
        taken.add(target)


def _input_path(words: str) -> str:
    """The note an input's words name (``input_forms.kind_of``): no `#Section`, a list variable as one date."""
    text = words.split("#", 1)[0]
    return re.sub(r"\{\{\s*(" + "|".join(LIST_VARIABLES) + r")\s*\}\}", "2026-01-05", text)


def check_template(doc: LocatedYaml, path: PathKey, text: str, earlier: list[str], problems: list[Problem]) -> None:
    problems += [doc.problem(path, msg) for msg in template_problems(text, earlier)]


def in_scope(globs: Iterable[str], rel: str) -> bool:
    return scope_has(list(globs), rel)
