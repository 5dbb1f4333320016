"""Checks a schema cannot express: scopes of write targets, template variables, cron."""

from __future__ import annotations

from datetime import datetime

from routine.config.model import AgentSpec, WriteSpec
from routine.templating import TemplateProblem, date_vars, render, unknown_variables

# A fixed sample day to render path templates for scope checks.
_SAMPLE = date_vars(datetime(2026, 3, 2, 7, 30).astimezone())


def sample_path(template: str) -> str | None:
    try:
        return render(template, {**_SAMPLE, "steps": {}, "task": "", "agent": ""}, "path")
    except TemplateProblem:
        return None


def sample_error(template: str, earlier: list[str]) -> str | None:
    """Why ``template`` would fail when rendered on a sample day, or None."""
    from routine.templating import template_error

    steps = {name: {"output": ""} for name in earlier}
    return template_error(template, {**_SAMPLE, "steps": steps, "task": "", "agent": "", "path": "Inbox/x.md",
                                     "event": "created"})


def note_text_problems(data: dict) -> list[tuple[tuple, str]]:
    """An agent note's `task`, `write` paths and `inputs` that hold template code, as (YAML path,
    sentence): an agent note is data (a library or an agent may have written it), never rendered
    as more than its {{ today }} placeholders."""
    from routine.templating import note_template_problem

    fields: list[tuple[tuple, object]] = [(("task",), data.get("task"))]
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

    from routine.vault.scope import in_scope

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
