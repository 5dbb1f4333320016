"""Templates and data: what is rendered, and what is only inserted (docs/DESIGN-NOTES.md).

- **An author's template** (a schedule's `task`, `inputs`, `search.query`, `graph.around`,
  `write`; routine's own ``prompts/*.j2`` and the steps routine builds) is rendered by ``render``
  in Jinja's ``ImmutableSandboxedEnvironment`` with ``StrictUndefined`` and no globals but
  ``range``: a missing variable fails loudly, reaching for Python is refused with a sentence.
- **Text from notes** (an agent note's body, and its `task`, `write`, `inputs`, which may hold
  only placeholders such as ``{{ today }}``: ``note_template_problem`` refuses more at load),
  task lines, libraries and model replies is never rendered as a template of its own.
- **Values built from data** (the changed note of a trigger, a result note named after a task,
  a project's folder, a member's name) go in as variables: Jinja inserts a value, never renders it.

The date variables are computed once per run from the run's own clock, in the person's time zone.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime, timedelta
from functools import lru_cache
from typing import TYPE_CHECKING, TypeAlias

from routine.errors import RoutineError

if TYPE_CHECKING:
    from jinja2 import Template
    from jinja2.sandbox import ImmutableSandboxedEnvironment


# A template's variables: routine's names (``KNOWN_VARIABLES``, built by ``date_vars`` and the runner) to
# what Jinja renders: text, a list of dates (`week_so_far`), a mapping (`steps.AGENT.output`, `event`), and
# in routine's own prompt templates the records they lay out (a prompt's kept and dropped context).
Variables: TypeAlias = Mapping[str, object]


class TemplateProblem(RoutineError):
    """A template names a variable that does not exist, or is malformed."""


def date_vars(now: datetime) -> dict[str, object]:
    """The date grounding every prompt and path can use. ``now`` must be timezone-aware.

    ``last_workday`` is the weekday before today (Friday, on a Monday); ``week_so_far`` the
    dates of this ISO week before today and ``last_week`` the seven of the week before, in
    date order: in an input path each makes one input per date (``routine.runner.inputs``).
    """
    today = now.date()
    iso = today.isocalendar()
    monday = today - timedelta(days=today.weekday())
    last_monday = monday - timedelta(days=7)
    workday = today - timedelta(days=1)
    while workday.weekday() >= 5:
        workday -= timedelta(days=1)
    last_iso = last_monday.isocalendar()
    return {
        "now": now.strftime("%Y-%m-%d %H:%M"),
        "today": today.isoformat(),
        "yesterday": (today - timedelta(days=1)).isoformat(),
        "tomorrow": (today + timedelta(days=1)).isoformat(),
        "last_workday": workday.isoformat(),
        "weekday": now.strftime("%A"),
        "iso_week": f"{iso.year}-W{iso.week:02d}",
        "last_iso_week": f"{last_iso.year}-W{last_iso.week:02d}",
        "week_so_far": [(monday + timedelta(days=i)).isoformat() for i in range(today.weekday())],
        "last_week": [(last_monday + timedelta(days=i)).isoformat() for i in range(7)],
        "timezone": now.tzname() or "local",
    }


# Date lists: in an input path, one input per date.
LIST_VARIABLES = frozenset({"week_so_far", "last_week"})
# `answer`: the person's answer to a question; `payload`: an outside event's (issue 45).
# Names a schedule may use; `steps` and `task` are filled in by the runner.
KNOWN_VARIABLES = frozenset(date_vars(datetime(2026, 1, 1).astimezone())) | {"steps", "task", "agent", "path", "event",
                                                                            "answer", "payload"}


@lru_cache(maxsize=1)
def _env() -> ImmutableSandboxedEnvironment:
    import jinja2
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    # Jinja's sandbox: a template reaches no attribute that starts with an underscore, no unsafe
    # callable, changes nothing it is given (the schedule author's templates are the only ones
    # rendered: data reaches them as values, never as template text; docs/DESIGN-NOTES.md).
    # autoescape off: this is markdown, not HTML. keep_trailing_newline keeps notes tidy.
    env = ImmutableSandboxedEnvironment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
                                        autoescape=False)
    # Only routine's variables and `range`: no lipsum, cycler, joiner or namespace object for a
    # template to climb from (validation then reports `{{ lipsum }}` as unknown, as a run would).
    env.globals = {"range": env.globals["range"]}
    return env


@lru_cache(maxsize=1024)
def _compiled(text: str) -> Template:
    return _env().from_string(text)


def render(text: str, variables: Variables, where: str) -> str:
    """Render ``text``; ``where`` names the source for the error sentence (e.g. "task of step planner")."""
    if "{" not in text:
        return text
    import jinja2
    from jinja2.exceptions import SecurityError

    try:
        return _compiled(text).render(**variables)
    except SecurityError as exc:
        raise TemplateProblem(f"The template in {where} asks for something no template may use ({exc}).",
                              "write plain text and variables such as {{ today }}.") from None
    except jinja2.UndefinedError as exc:
        raise TemplateProblem(f"Unknown template variable in {where}: {exc.message}.",
                              f"use one of: {', '.join(sorted(KNOWN_VARIABLES))}.") from None
    except jinja2.TemplateSyntaxError as exc:
        raise TemplateProblem(f"Template syntax error in {where}: {exc.message}.",
                              "check the {{ }} braces.") from None
    except Exception as exc:  # {{ 1/0 }}, a filter on the wrong type: the person's template, not our bug
        raise TemplateProblem(f"The template in {where} failed: {type(exc).__name__}: {exc}.",
                              "write plain text and variables such as {{ today }}, without arithmetic.") from None


_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_]\w*)\s*\}\}")


def fill(text: str, values: Variables) -> str:
    """An agent note's body (data, not a template): each ``{{ name }}`` whose name is in
    ``values`` (the date variables, the agent's name) replaced by its value; everything else,
    other braces included, left exactly as written. No Jinja runs."""
    if "{" not in text:
        return text
    plain = {name: value for name, value in values.items() if isinstance(value, str)}
    return _PLACEHOLDER.sub(lambda m: plain[m[1]] if m[1] in plain else m[0], text)


_EXPRESSION = re.compile(r"\{\{(.*?)\}\}", re.S)
_NAME = re.compile(r"\s*[A-Za-z_][\w.]*\s*")


def _only_names(text: str) -> bool:
    """True when every {{ }} holds a plain (dotted) name and there are no {% %} or {# #}."""
    if "{%" in text or "{#" in text:
        return False
    rest = _EXPRESSION.sub("", text)
    return "{{" not in rest and "}}" not in rest and all(_NAME.fullmatch(e) for e in _EXPRESSION.findall(text))


_STEP_OUTPUT = re.compile(r"steps\.\w+\.output")


def note_template_problem(text: str) -> str | None:
    """Why ``text`` from an agent note (its `task`, a `write` path, an `inputs` entry) holds more
    than plain placeholders of routine's names (``{{ today }}``, ``{{ steps.AGENT.output }}``),
    or None. Agent notes are data (a library installs them): they get no template code."""
    if "{" not in text and "}" not in text:
        return None
    names = [e.strip() for e in _EXPRESSION.findall(text)]
    if _only_names(text) and all(n in KNOWN_VARIABLES - {"steps"} or _STEP_OUTPUT.fullmatch(n) for n in names):
        return None
    return "holds template code, and an agent note is data"


def template_error(text: str, variables: Variables) -> str | None:
    """Why ``text`` cannot be rendered with ``variables`` (a sample day), or None: used by
    validation so a template that would fail at fire time is refused when it is saved."""
    if _only_names(text):  # the common case: {{ today }}, {{ steps.x.output }} — nothing can fail
        return None
    try:
        render(text, variables, "template")
        return None
    except TemplateProblem as exc:
        return exc.message.replace("Template syntax error in template: ", "template syntax error: ") \
            .replace("The template in template failed: ", "this template fails when rendered: ")


@lru_cache(maxsize=1024)
def unknown_variables(text: str) -> frozenset[str]:
    """Top-level names a template uses that routine does not provide (for validation)."""
    if "{" not in text:
        return frozenset()
    from jinja2 import meta

    # A syntax error propagates (jinja2.TemplateSyntaxError): validation reports it with the line.
    return frozenset(meta.find_undeclared_variables(_env().parse(text)) - KNOWN_VARIABLES)
