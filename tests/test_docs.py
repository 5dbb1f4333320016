"""The documents a newcomer reads first stay true to the code: every module on the code map,
every control-socket request named there. (routine.example.yaml against the schema:
tests/test_config_schema.py.)"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CODE_MAP = (REPO / "docs" / "source-code.md").read_text(encoding="utf-8")


def _mentioned(module: Path) -> bool:
    rel = module.relative_to(REPO).as_posix()  # routine/memory/chunks.py
    package = module.parent.relative_to(REPO / "routine").as_posix()
    candidates = {rel, rel.removeprefix("routine/"), f"{package}/{module.name}"}
    if any(f"`{c}`" in CODE_MAP or f"{c}`" in CODE_MAP for c in candidates):
        return True
    # A row for the package may list its modules by name: `routine/memory/` … `store.py`.
    rows = [line for line in CODE_MAP.splitlines() if f"routine/{package}/" in line or f"`{package}/" in line]
    return any(f"`{module.name}`" in row or f"`{module.stem}`" in row for row in rows)


def test_every_module_is_on_the_code_map():
    modules = [p for p in sorted((REPO / "routine").rglob("*.py"))
               if p.name != "__init__.py" and p.name != "__main__.py"]
    missing = [p.relative_to(REPO).as_posix() for p in modules if not _mentioned(p)]
    assert not missing, f"add a row to docs/source-code.md for: {missing}"


def test_every_control_request_is_on_the_code_map():
    source = (REPO / "routine" / "daemon" / "control.py").read_text(encoding="utf-8")
    ops = {node.comparators[0].value for node in ast.walk(ast.parse(source))
           if isinstance(node, ast.Compare) and isinstance(node.left, ast.Name) and node.left.id == "op"
           and isinstance(node.comparators[0], ast.Constant)}
    assert ops, "the op dispatch was not found"
    row = next(line for line in CODE_MAP.splitlines() if "routine/daemon/control.py" in line)
    assert not [op for op in sorted(ops) if f"`{op}`" not in row], row

