"""The code's shape, checked: the layers of docs/source-code.md as data, every import of a
routine module (at the top of a file, inside a function, under TYPE_CHECKING) held to them, no
import cycles, and the daemon's parts handed only what they use."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "routine"
DAEMON = PACKAGE / "daemon"

# The layers, bottom first (docs/source-code.md, "Layers"). A module may import its own layer and
# the layers below it, never one above, not even inside a function. An entry names a package (then
# everything in it): every folder is on one floor. "routine" is the modules right in routine/ (the
# base floor); routine.__main__, the entry point Python looks for there, is the CLI's.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("base", ("routine", "routine.prompts", "routine.outside", "routine.host")),  # outside: input; host: the box
    ("files", ("routine.vault", "routine.journal")),
    ("watch", ("routine.watch",)),
    ("config", ("routine.config",)),
    ("models", ("routine.models",)),
    ("person", ("routine.person",)),  # alerts, notifications, the person's calendars
    ("projects", ("routine.projects",)),  # below the rest of the domain, which reads projects
    ("domain", ("routine.memory", "routine.schedule", "routine.graph")),
    ("access", ("routine.access",)),
    ("tools", ("routine.tools",)),
    ("runner", ("routine.runner",)),
    ("trials", ("routine.trials",)),  # a real run's request replayed on another model, judged beside it
    ("conversations", ("routine.chat", "routine.agents")),
    ("flows", ("routine.flows",)),  # approval, task pickup, QA, the setup every step is given
    ("daemon", ("routine.daemon",)),
    ("terminal", ("routine.terminal",)),  # import-free output helpers the actions use
    ("actions", ("routine.actions",)),
    ("cli", ("routine.cli", "routine.__main__")),
]
ENTRY_POINT = "routine.__main__"

# Arrows that still run up, each with why it is allowed for now (the list only shrinks).
KNOWN_UPWARD: dict[tuple[str, str], str] = {}

RULE = "a module imports only its own layer and the layers below it (docs/source-code.md, Layers)"


@dataclass(frozen=True)
class Import:
    importer: str  # routine.config.schema
    imported: str  # routine.tools.registry
    where: str     # routine/config/schema.py:11
    inside: str    # "module" | "function" | "TYPE_CHECKING"


def modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _module_of(name: str, known: dict[str, Path]) -> str | None:
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def imports(known: dict[str, Path] | None = None) -> Iterator[Import]:
    """Every import of a routine module by a routine module, resolved to the module imported
    (``from routine.vault import read_note`` is ``routine.vault``; ``from routine import paths``
    is ``routine.paths``)."""
    known = known or modules()
    for name, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        inside: dict[int, str] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                inside.update({id(n): "TYPE_CHECKING" for n in ast.walk(node)})
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                inside.update({id(n): "function" for n in ast.walk(node) if id(n) not in inside})
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(up + ([node.module] if node.module else []))
                targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
            else:
                continue
            for target in dict.fromkeys(targets):
                imported = _module_of(target, known) if target.split(".")[0] == "routine" else None
                if imported and imported != name:
                    yield Import(name, imported, f"{path.relative_to(ROOT)}:{node.lineno}",
                                 inside.get(id(node), "module"))


def folder_of(module: str) -> str:
    """The package a module's folder is, right under routine/ (``routine.graph.extract`` is
    ``routine.graph``); a module right in routine/ is ``routine``'s."""
    parts = module.split(".")
    if module == ENTRY_POINT:
        return module
    return ".".join(parts[:2]) if len(parts) > 1 and (PACKAGE / parts[1]).is_dir() else "routine"


def floor_of(folder: str) -> tuple[int, str]:
    for index, (layer, entries) in enumerate(LAYERS):
        if folder in entries:
            return index, layer
    raise AssertionError(f"the folder {folder} is in no layer: add it to LAYERS in tests/test_layers.py and to "
                         "docs/source-code.md")


def layer_of(module: str) -> tuple[int, str]:
    """A module's layer: its folder's, from the folder alone."""
    return floor_of(folder_of(module))


def upward(found: list[Import]) -> list[str]:
    wrong = []
    for imp in found:
        (low, low_name), (high, high_name) = layer_of(imp.importer), layer_of(imp.imported)
        if high > low and (imp.importer, imp.imported) not in KNOWN_UPWARD:
            wrong.append(f"{imp.where} ({imp.inside}) {imp.importer} imports {imp.imported}: layer {low_name} "
                         f"(#{low}) may not import layer {high_name} (#{high}); rule: {RULE}")
    return wrong


def cycles(found: list[Import]) -> list[list[str]]:
    """The import cycles among routine's modules (Tarjan's strongly connected components), each
    as a closed path of imports."""
    graph: dict[str, set[str]] = {}
    for imp in found:
        graph.setdefault(imp.importer, set()).add(imp.imported)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found_cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found_cycles.append(_closed_path(sorted(component), graph))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found_cycles


def _closed_path(component: list[str], graph: dict[str, set[str]]) -> list[str]:
    """One cycle through the component's first module: start → … → start (breadth first)."""
    start, members = component[0], set(component)
    paths = {start: [start]}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(graph.get(v, set()) & members):
            if w == start:
                return paths[v] + [start] + [f"(and {len(component)} modules in all: {', '.join(component)})"]
            if w not in paths:
                paths[w] = paths[v] + [w]
                queue.append(w)
    return component


def test_every_module_is_in_a_layer():
    for name in modules():
        layer_of(name)


def test_no_import_runs_up_a_layer():
    found = list(imports())
    assert len(found) > 500  # the walk sees the imports (top, inside functions, TYPE_CHECKING)
    wrong = upward(found)
    assert not wrong, "\n".join(["imports that run up a layer:", *wrong])


def test_known_upward_imports_still_exist():
    """An exception left in KNOWN_UPWARD after its import is gone hides the next one: take it out."""
    pairs = {(imp.importer, imp.imported) for imp in imports()}
    assert not set(KNOWN_UPWARD) - pairs, sorted(set(KNOWN_UPWARD) - pairs)


def test_no_import_cycles():
    found = cycles(list(imports()))
    assert not found, "\n".join(["import cycles (move what both sides share down a layer):",
                                 *(" → ".join(c) for c in found)])


def test_the_layers_name_packages_only():
    """Every entry of LAYERS is a folder of routine/ (or routine itself, the base floor's modules),
    each on one floor: the folder tells the floor."""
    entries = [entry for _, names in LAYERS for entry in names if entry != ENTRY_POINT]
    assert len(entries) == len(set(entries)), entries
    folders = {"routine"} | {f"routine.{p.name}" for p in PACKAGE.iterdir() if (p / "__init__.py").exists()
                              or (p.is_dir() and any(p.glob("*.py")))}
    assert set(entries) == folders, (sorted(set(entries) - folders), sorted(folders - set(entries)))


def test_folders_import_downward_without_cycles():
    """Drawn by folder (what a look at the tree shows): no arrow runs up a floor and no two folders
    import each other, directly or round a loop."""
    found = list(imports())
    between = [Import(folder_of(i.importer), folder_of(i.imported), i.where, i.inside) for i in found
               if folder_of(i.importer) != folder_of(i.imported)]
    wrong = [f"{i.where} {i.importer} -> {i.imported}: layer {floor_of(i.importer)[1]} may not import layer "
             f"{floor_of(i.imported)[1]}" for i in between if floor_of(i.imported)[0] > floor_of(i.importer)[0]]
    assert not wrong, "\n".join(wrong)
    assert not cycles(between), cycles(between)


def test_imports_of_routines_own_modules_inside_a_function_say_why():
    """Routine's own modules are imported at the top; one inside a function defers a heavy library
    and says so (``# lazy: numpy, …`` on its line). scripts/hoist_imports.py moves the others up."""
    silent = []
    for imp in imports():
        if imp.inside == "function":
            path, line = imp.where.split(":")
            if "# lazy:" not in (ROOT / path).read_text(encoding="utf-8").split("\n")[int(line) - 1]:
                silent.append(f"{imp.where} {imp.importer} imports {imp.imported}")
    assert not silent, "\n".join(["imports inside a function without a `# lazy:` reason:", *silent])


def test_the_layer_check_sees_an_upward_import_and_a_cycle():
    """The check itself: an import inside a function that runs up is named with file:line, the two
    layers and the rule; a two-module cycle is found."""
    made = [Import("routine.vault.notes", "routine.runner.step", "routine/vault/notes.py:7", "function"),
            Import("routine.runner.step", "routine.vault.notes", "routine/runner/step.py:3", "module")]
    wrong = upward(made)
    runner = [name for name, _ in LAYERS].index("runner")
    assert wrong == ["routine/vault/notes.py:7 (function) routine.vault.notes imports routine.runner.step: layer "
                     f"files (#1) may not import layer runner (#{runner}); rule: {RULE}"]
    assert [c[:3] for c in cycles(made)] == [["routine.runner.step", "routine.vault.notes", "routine.runner.step"]]


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
# whole daemon: mypy then holds each to its narrow interface. Every part: all of routine/daemon/
# but the daemon itself (app.py).
NARROW = tuple(sorted(p.stem for p in DAEMON.glob("*.py") if p.name not in ("app.py", "__init__.py")))


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


def _string_lists(path: Path) -> Iterator[tuple[int, list[str]]]:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            yield node.lineno, [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]


def test_the_behaviours_are_declared_once():
    """A new behaviour is one member of config/behaviours.Behaviour: the schema, the commands'
    choices and the project code take it from there, and no list of behaviour names is written
    out anywhere else (nor compared by name: each difference is a property of the behaviour)."""
    from routine.config.behaviours import NAMES
    from routine.config.schedule_schema import AGENT

    assert AGENT["properties"]["behaviour"]["enum"] == list(NAMES)
    spelled = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.name != "behaviours.py"
        for line, names in _string_lists(path)
        if len(set(names) & set(NAMES)) >= 2
    ]
    assert not spelled, f"behaviours spelled out again (use routine.config.behaviours): {spelled}"


def test_the_kind_of_a_write_target_is_derived_once():
    """``WriteTarget.kind`` (vault/targets.py) turns note/section/append into a WriteKind; nothing
    else re-derives it from the three strings, and every kind has its instructions and its writer."""
    from routine.config.schema import WRITE_TARGET
    from routine.vault.targets import WriteKind, WriteTarget
    from routine.vault.writer import _Writer

    assert set(_Writer.KINDS) == set(WriteKind)
    assert all("{note}" in kind.instructions for kind in WriteKind)
    assert set(WRITE_TARGET["properties"]) == set(WriteTarget.KEYS)  # the schema is made from the declaration
    derived = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "targets.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.BoolOp, ast.IfExp)):
                attrs = {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}
                if {"append", "note"} <= attrs or {"append", "section"} <= attrs:
                    derived.append(f"{path.relative_to(ROOT)}:{node.lineno} {ast.unparse(node)[:80]}")
            # a target's keys spelled again: write.get("append"), {"note", "append"}
            keyed = (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
                     and node.args and isinstance(node.args[0], ast.Constant) and node.args[0].value == "append")
            if keyed or (isinstance(node, ast.Set) and any(isinstance(e, ast.Constant) and e.value == "append"
                                                          for e in node.elts)):
                derived.append(f"{path.relative_to(ROOT)}:{node.lineno} {ast.unparse(node)[:80]}")
    assert not derived, f"ask the target's kind or dest instead: {derived}"
