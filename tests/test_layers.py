"""Components talk to the daemon through what it offers, not its private parts."""

from __future__ import annotations

import ast
import re
from pathlib import Path

DAEMON = Path(__file__).resolve().parent.parent / "routine" / "daemon"


HANDLES = {"daemon", "host", "jobs", "parts"}  # what a part calls the daemon it was handed


def _names_the_daemon(node: ast.expr) -> bool:
    """``daemon``, ``self.host`` …"""
    return ((isinstance(node, ast.Name) and node.id in HANDLES)
            or (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"
                and node.attr in HANDLES))


def test_no_component_reaches_into_the_daemons_private_attributes():
    reaching = []
    for module in sorted(DAEMON.glob("*.py")):
        if module.name == "app.py":  # the daemon itself
            continue
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr.startswith("_") and _names_the_daemon(node.value):
                reaching.append(f"{module.name}:{node.lineno} {ast.unparse(node)}")
    assert not reaching, reaching


# Handed only what they use (routine.daemon.ports and the protocols beside each part), never the
# whole daemon: mypy then holds each to its narrow interface.
NARROW = ("monitor", "recovery", "publish", "vault_events", "control", "status", "chat_op", "chat_notes", "health")


def test_the_daemons_parts_are_not_handed_the_whole_daemon():
    handed = []
    for name in NARROW:
        module = DAEMON / f"{name}.py"
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            args = node.args
            for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs):
                annotation = ast.unparse(arg.annotation) if arg.annotation else ""
                if arg.arg == "daemon" or re.search(r"\bDaemon\b", annotation):
                    handed.append(f"{module.name}:{node.lineno} {node.name}({arg.arg}: {annotation or '?'})")
    assert not handed, handed
