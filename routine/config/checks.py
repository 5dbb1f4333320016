"""Checks a schema cannot express: scopes of write targets, template variables, cron, an agent
note's fields, aliases that would make a managed server reload a model."""

from __future__ import annotations

import re
from datetime import datetime

from routine.config.model import AgentSpec, Config, ModelAlias, WriteSpec
from routine.config.yamlfile import LocatedYaml, PathKey
from routine.errors import Problem
from routine.jsonvalue import Parsed
from routine.templating import (
    KNOWN_VARIABLES,
    TemplateProblem,
    date_vars,
    note_template_problem,
    render,
    template_error,
    unknown_variables,
)
from routine.vault.scope import in_scope

# A fixed sample day to render path templates for scope checks.
_SAMPLE = date_vars(datetime(2026, 3, 2, 7, 30).astimezone())


def sample_path(template: str) -> str | None:
    try:
        return render(template, {**_SAMPLE, "steps": {}, "task": "", "agent": ""}, "path")
    except TemplateProblem:
        return None


def sample_error(template: str, earlier: list[str]) -> str | None:
    """Why ``template`` would fail when rendered on a sample day, or None."""

    steps = {name: {"output": ""} for name in earlier}
    return template_error(template, {**_SAMPLE, "steps": steps, "task": "", "agent": "", "path": "Inbox/x.md",
                                     "event": "created", "answer": "", "payload": "{}"})


def template_problems(text: str, earlier: list[str]) -> list[str]:
    """Why an author's template (a schedule's task, input, query, `around`, write path) would fail,
    one sentence each: a syntax error, a name routine does not provide, a step that is not earlier
    in the block (``earlier``: the steps before it), or a failure when rendered on a sample day."""
    import jinja2

    try:
        bad = unknown_variables(text)
    except jinja2.TemplateSyntaxError as exc:
        return [f"template syntax error: {getattr(exc, 'message', exc)}."]
    if bad:
        return [f"unknown template variable {', '.join(sorted(bad))}; "
                f"use {', '.join(sorted(KNOWN_VARIABLES - {'steps'}))} or steps.AGENT.output."]
    refs = re.findall(r"steps\.([A-Za-z0-9_-]+)", text)
    failure = sample_error(text, earlier)
    found = [failure] if failure and all(name in earlier for name in refs) else []
    return found + [f"steps.{name}.output is not an earlier step of this block"
                    + (f" (earlier: {', '.join(earlier)})." if earlier else " (this is the first step).")
                    for name in refs if name not in earlier]


def note_text_problems(data: Parsed) -> list[tuple[PathKey, str]]:
    """An agent note's `task`, `write` paths and `inputs` that hold template code, as (YAML path,
    sentence): an agent note is data (a library or an agent may have written it), never rendered
    as more than its {{ today }} placeholders."""

    fields: list[tuple[PathKey, object]] = [(("task",), data.get("task"))]
    fields += [(("write", key), value) for key, value in (data.get("write") or {}).items()]
    fields += [(("inputs", i), value) for i, value in enumerate(data.get("inputs") or ())]
    return [(where, f"this {why}; write it as plain text with only placeholders such as {{{{ today }}}} or "
                    "{{ steps.AGENT.output }} (no {% %}, filters, calls or attributes).")
            for where, value in fields if isinstance(value, str) and (why := note_template_problem(value))]


def scope_glob_problem(glob: str) -> str | None:
    """A reads/writes glob must name notes inside the vault: no absolute path, no '..', no '~'."""
    parts = glob.replace("\\", "/").split("/")
    if glob.startswith(("/", "~")) or ".." in parts:
        return (f"{glob!r} points outside the vault; scopes are globs from the vault root, "
                "such as 'Daily/**' or '**' for the whole vault.")
    return None


def write_scope_problem(write: WriteSpec, agent: AgentSpec) -> str | None:
    import jinja2

    target = write.dest
    try:
        bad = unknown_variables(target)
    except jinja2.TemplateSyntaxError as exc:
        return f"template syntax error in {target!r}: {exc.message}."
    if bad:
        return f"unknown template variable {', '.join(sorted(bad))} in {target!r}."
    rel = sample_path(target)
    if rel is not None and not in_scope(list(agent.writes), rel):
        return (f"{target!r} is outside agent {agent.name}'s writes scope "
                f"({', '.join(agent.writes) or 'none'}); add a matching glob to `writes:` in {agent.source}.")
    return None


def pinning_conflicts(config: Config, doc: LocatedYaml) -> list[Problem]:
    """Two aliases that send one Ollama model different load options would make Ollama reload
    it on every switch between them: refuse, and say which to align."""
    problems: list[Problem] = []
    seen: dict[tuple[str, str], ModelAlias] = {}
    for alias in config.models.values():
        for dep in alias.deployments:
            if not dep.provider.manages_residency:
                continue
            key = (dep.api_base, dep.served_name)
            other = seen.setdefault(key, alias)
            if other is not alias and other.request_options() != alias.request_options():
                problems.append(doc.problem(("models", alias.name), (
                    f"alias {alias.name!r} runs {dep.served_name} with options {alias.request_options()}, but alias "
                    f"{other.name!r} runs it with {other.request_options()}; Ollama would reload the model at every "
                    "switch. Give both the same num_ctx and options.")))
    return problems
