"""The prompt templates routine ships (package data, ``*.md.j2``), read once each."""

from __future__ import annotations

from functools import cache
from importlib import resources


@cache
def template(name: str) -> str:
    """The text of the shipped template ``name`` (e.g. ``"step.md.j2"``)."""
    return resources.files(__name__).joinpath(name).read_text(encoding="utf-8")
