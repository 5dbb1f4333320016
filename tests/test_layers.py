"""Components talk to the daemon through what it offers, not its private parts."""

from __future__ import annotations

import ast
from pathlib import Path

DAEMON = Path(__file__).resolve().parent.parent / "routine" / "daemon"


def test_no_component_reaches_into_the_daemons_private_attributes():
    reaching = []
    for module in sorted(DAEMON.glob("*.py")):
        if module.name == "app.py":  # the daemon itself
            continue
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "daemon"
                    and node.attr.startswith("_")):
                reaching.append(f"{module.name}:{node.lineno} daemon.{node.attr}")
    assert not reaching, reaching
