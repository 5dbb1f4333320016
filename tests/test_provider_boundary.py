"""A provider is a registered adapter (routine/config/providers.py declares it, routine/models/
providers.py talks to it): no module outside the models layer imports the `ollama` client or
Ollama's own API, or branches on the provider's name. Issue 26."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ALLOWED = ("routine/models/", "routine/config/providers.py")
RULE = ("only routine/models and routine/config/providers.py may name the provider: ask Provider/the adapters "
        "(routine.models.providers) instead")


def _names_provider(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.lower().startswith("ollama")


def offences(source: str, where: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        line = f"{where}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Import):
            found += [f"{line}: imports {a.name}" for a in node.names
                      if a.name.split(".")[0] == "ollama" or a.name == "routine.models.ollama_host"]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            names = {a.name for a in node.names}
            if module.split(".")[0] == "ollama" or module == "routine.models.ollama_host" or (
                    module == "routine.models" and "ollama_host" in names):
                found.append(f"{line}: imports from {module}")
        elif isinstance(node, ast.Compare) and any(_names_provider(c) for c in [node.left, *node.comparators]):
            found.append(f"{line}: compares with the provider's name")
        elif isinstance(node, ast.Compare):
            for c in node.comparators:
                if isinstance(c, (ast.Tuple, ast.List, ast.Set)) and any(_names_provider(e) for e in c.elts):
                    found.append(f"{line}: tests membership of the provider's name")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr in ("startswith", "endswith", "removeprefix", "partition", "split")
              and any(_names_provider(a) for a in node.args)):
            found.append(f"{line}: branches on the provider's name ({node.func.attr})")
    return found


def test_only_the_models_layer_names_the_provider() -> None:
    found = []
    for path in sorted((ROOT / "routine").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if not rel.startswith(ALLOWED):
            found += offences(path.read_text(encoding="utf-8"), rel)
    assert not found, f"{RULE}:\n" + "\n".join(found)


def test_the_check_catches_each_way_of_naming_it() -> None:
    source = ("import ollama\nfrom routine.models import ollama_host\n"
              "if spec.startswith('ollama:'):\n    pass\nif check.name == 'ollama':\n    pass\n"
              "ok = kind in ('ollama', 'vault')\n")
    assert len(offences(source, "x.py")) == 5
    assert offences("text = 'start it with `ollama serve`'\n", "x.py") == []  # a sentence for the person
