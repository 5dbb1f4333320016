"""A fact decided in one module: every other module of the package, checked by AST (test_artifacts,
test_provenance): what in it decides the fact on its own, by file and line."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Callable

ROUTINE = Path(__file__).resolve().parent.parent / "routine"


def second_deciders(decider: str, decisions: Callable[[ast.AST, str], list[str]]) -> dict[str, list[str]]:
    """{module: what it decides} for every module of routine/ but ``decider`` (its path under routine/)."""
    offenders = {}
    for path in sorted(ROUTINE.rglob("*.py")):
        rel = path.relative_to(ROUTINE).as_posix()
        found = [] if rel == decider else decisions(ast.parse(path.read_text(encoding="utf-8")), rel)
        if found:
            offenders[rel] = found
    return offenders
