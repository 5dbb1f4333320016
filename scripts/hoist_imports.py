"""Move imports of routine's own modules out of functions, to the top of their module.

    python scripts/hoist_imports.py [--dry-run] [--verbose] [--static]

A function-level import of routine's own modules is hoisted unless moving it would change what
the program does or loads:

- it carries a reason (a comment on its line or the line above starting ``# lazy:``, or any
  comment at the end of its line);
- it sits inside a ``try`` that catches ImportError (an optional import);
- the module it names loads at import time a heavy library (``HEAVY``) that the importing module
  does not load already: light commands stay light (tests/test_cli_light.py). What a module loads
  is seen by importing it alone in a fresh interpreter (a decorator may load jsonschema while the
  module is imported); ``--static`` reads only the import statements instead;
- the module it names imports, at import time, the importing module (an import cycle at start);
- its name is bound otherwise in the module (a def, an assignment, another import) or in the
  function or an enclosing one (a parameter, a local), or another function imports the same name
  from elsewhere: left for a hand fix;
- a test patches the attribute it imports (``monkeypatch.setattr("routine.x.name", ...)``): the
  patch reaches only a name looked up at call time.

A hoisted import joins an import of the same module at the top (its names merged), or is written
beside the other ``from routine…`` imports; a name imported only under ``TYPE_CHECKING`` there
moves out of that block. The same import twice is written once. Idempotent: a second run finds
nothing more to move. Run ``ruff check --fix`` after it (unused ``TYPE_CHECKING`` imports).
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "routine"
HEAVY = frozenset({
    "litellm", "chromadb", "sentence_transformers", "torch", "transformers", "tokenizers", "smolagents", "pypdf",
    "apprise", "icalendar", "recurring_ical_events", "networkx", "watchdog", "jinja2", "numpy", "jsonschema",
    "ollama", "apscheduler", "tiktoken",
})
LINE = 120
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp, ast.SetComp, ast.DictComp,
          ast.GeneratorExp)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


@dataclass
class Module:
    name: str
    path: Path
    text: str
    tree: ast.Module
    is_package: bool
    own: set[str] = field(default_factory=set)        # routine modules it imports when it is imported
    # A package's names loaded on first use (``_HOMES = {"VaultIndex": "routine.memory.index"}``
    # read by its ``__getattr__``): importing such a name loads that module.
    lazy: dict[str, str] = field(default_factory=dict)
    seen: set[str] | None = None  # heavy libraries it loaded when imported alone (``observe``)
    external: set[str] = field(default_factory=set)   # top-level names of other libraries it imports then

    @property
    def package(self) -> str:
        return self.name if self.is_package else self.name.rpartition(".")[0]


def load() -> dict[str, Module]:
    modules = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        modules[module_name(path)] = Module(module_name(path), path, text, ast.parse(text), path.name == "__init__.py")
    for module in modules.values():
        for node in module.tree.body:
            if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict)
                    and any(isinstance(t, ast.Name) and t.id == "_HOMES" for t in node.targets)):
                module.lazy = {k.value: v.value for k, v in zip(node.value.keys, node.value.values)
                               if isinstance(k, ast.Constant) and isinstance(v, ast.Constant)}
    for module in modules.values():
        for node in import_time(module.tree):
            for target in targets(node, module, modules):
                (module.own if target.split(".")[0] == "routine" else module.external).add(
                    target if target.split(".")[0] == "routine" else target.split(".")[0])
    return modules


def import_time(tree: ast.Module) -> Iterator[ast.Import | ast.ImportFrom]:
    """The imports run when the module is imported: top level, inside top-level if/try/with, not
    under TYPE_CHECKING, not in a function or a class body's function."""
    todo: list[ast.stmt] = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, ast.If) and not is_type_checking(node):
            todo += node.body + node.orelse
        elif isinstance(node, ast.Try):
            todo += node.body + node.orelse + node.finalbody + [s for h in node.handlers for s in h.body]
        elif isinstance(node, (ast.With, ast.ClassDef)):
            todo += node.body


def absolute(node: ast.ImportFrom, module: Module) -> str:
    if not node.level:
        return node.module or ""
    base = module.package.split(".")
    base = base[: len(base) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def targets(node: ast.Import | ast.ImportFrom, module: Module, modules: dict[str, Module]) -> set[str]:
    """The modules an import loads (a package's __init__ for each of its parents too)."""
    if isinstance(node, ast.Import):
        names = {alias.name for alias in node.names}
    else:
        base = absolute(node, module)
        names = {base} | {f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in modules}
        lazy = modules[base].lazy if base in modules else {}
        names |= {lazy[a.name] for a in node.names if a.name in lazy}
    found = set()
    for name in names:
        parts = name.split(".")
        found |= {".".join(parts[:i]) for i in range(1, len(parts) + 1)}
    return {n for n in found if n in modules or n.split(".")[0] != "routine"}


def closure(start: set[str], modules: dict[str, Module], skip: frozenset[str] = frozenset()) -> set[str]:
    """What importing ``start`` loads; ``skip``: packages already being imported (a module's own
    packages run before it: importing them again returns them as they stand)."""
    seen: set[str] = set(skip)
    todo = list(start)
    while todo:
        name = todo.pop()
        if name in seen or name not in modules:
            continue
        seen.add(name)
        parts = name.split(".")
        todo += [".".join(parts[:i]) for i in range(1, len(parts))]  # its packages run first
        todo += list(modules[name].own)
    return seen - skip


def heavy(names: set[str], modules: dict[str, Module]) -> set[str]:
    """The heavy libraries importing ``names`` loads: what each module was seen to load when
    imported alone (``observe``: a library a decorator or a table loads while the module is
    imported counts too), else what its import statements name."""
    found: set[str] = set()
    for m in closure(names, modules):
        found |= modules[m].seen if modules[m].seen is not None else modules[m].external & HEAVY
    return found


_PROBE = "import importlib, sys\nimportlib.import_module(sys.argv[1])\nprint(' '.join(sorted(sys.modules)))"


def observe(modules: dict[str, Module]) -> None:
    """Import each module alone in a fresh interpreter and note the heavy libraries it loaded."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    def probe(name: str) -> tuple[str, set[str] | None]:
        proc = subprocess.run([sys.executable, "-c", _PROBE, name], capture_output=True, text=True, cwd=ROOT, env=env)
        if proc.returncode:
            return name, None
        return name, {m.split(".")[0] for m in proc.stdout.split()} & HEAVY

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        for name, seen in pool.map(probe, [n for n in modules if not n.endswith("__main__")]):
            modules[name].seen = seen


def patched_in_tests() -> set[tuple[str, str]]:
    """(module, attribute) a test replaces by its dotted name."""
    found = set()
    for path in (ROOT / "tests").glob("*.py"):
        for match in re.finditer(r"""setattr\(\s*["'](routine(?:\.\w+)+)\.(\w+)["']""", path.read_text()):
            found.add((match[1], match[2]))
    return found


def bound_names(scope: ast.AST) -> set[str]:
    """Names bound directly in a function (its parameters, assignments, loops, withs, handlers,
    imports, nested defs and classes), not in scopes nested inside it."""
    names: set[str] = set()
    if isinstance(scope, FUNCTIONS):
        args = scope.args
        names |= {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
        names |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    todo = list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop()
        if isinstance(node, (*FUNCTIONS, ast.ClassDef)):
            names.add(node.name)
            continue
        if isinstance(node, SCOPES):
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names |= set(node.names)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            continue  # counted apart: an import of the same origin is no clash
        todo += list(ast.iter_child_nodes(node))
    return names


def imported_here(scope: ast.AST, module: Module) -> dict[str, str]:
    """name -> origin of the imports made directly in a scope (not nested ones)."""
    found: dict[str, str] = {}
    todo = list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop()
        if isinstance(node, SCOPES):
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.update(origins(node, module))
        todo += list(ast.iter_child_nodes(node))
    return found


def origins(node: ast.Import | ast.ImportFrom, module: Module) -> dict[str, str]:
    if isinstance(node, ast.Import):
        return {(a.asname or a.name.split(".")[0]): (a.name if a.asname else a.name.split(".")[0]) for a in node.names}
    base = absolute(node, module)
    return {(a.asname or a.name): f"{base}:{a.name}" for a in node.names}


def module_bindings(module: Module) -> tuple[dict[str, str], dict[str, ast.ImportFrom]]:
    """Names bound at module level, each to its origin ("def", "assign" or the import's), and the
    TYPE_CHECKING imports by name."""
    bound: dict[str, str] = {}
    typing_only: dict[str, ast.ImportFrom] = {}
    todo: list[tuple[ast.stmt, bool]] = [(s, False) for s in module.tree.body]
    while todo:
        node, typing = todo.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for name, origin in origins(node, module).items():
                if typing and isinstance(node, ast.ImportFrom):
                    typing_only[name] = node
                else:
                    bound[name] = origin
        elif isinstance(node, (*FUNCTIONS, ast.ClassDef)):
            bound[node.name] = "def"
        elif isinstance(node, ast.If):
            todo += [(s, typing or is_type_checking(node)) for s in node.body + node.orelse]
        elif isinstance(node, ast.Try):
            todo += [(s, typing) for s in node.body + node.orelse + node.finalbody]
            todo += [(s, typing) for h in node.handlers for s in h.body]
        elif isinstance(node, (ast.With, ast.For, ast.While)):
            todo += [(s, typing) for s in node.body]
        else:
            for sub in ast.walk(node):
                if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                    bound.setdefault(sub.id, "assign")
    return bound, typing_only


@dataclass
class Found:
    node: ast.ImportFrom
    chain: list[ast.AST]  # the enclosing functions, outermost first, and the blocks down to the import


def function_imports(module: Module) -> Iterator[Found]:
    def walk(node: ast.AST, chain: list[ast.AST]) -> Iterator[Found]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)) and any(isinstance(c, FUNCTIONS) for c in chain):
                if isinstance(child, ast.ImportFrom) and absolute(child, module).split(".")[0] == "routine":
                    yield Found(child, chain)
            else:
                yield from walk(child, chain + [child])
    yield from walk(module.tree, [])


def _catches_import_error(node: ast.Try) -> bool:
    return any(h.type is None or re.search(r"\b(ImportError|ModuleNotFoundError|BaseException)\b", ast.unparse(h.type))
               for h in node.handlers)


def reason(module: Module, node: ast.stmt) -> str | None:
    lines = module.text.split("\n")
    line, above = lines[node.lineno - 1], lines[node.lineno - 2].strip() if node.lineno > 1 else ""
    last = lines[node.end_lineno - 1] if node.end_lineno else line
    if "#" in last[node.end_col_offset or 0:]:
        return "a comment on its line"
    if above.startswith("# lazy:"):
        return "a `# lazy:` comment"
    if line[: node.col_offset].strip():
        return "shares its line"
    return None


@dataclass
class Plan:
    module: Module
    remove: list[ast.ImportFrom] = field(default_factory=list)
    add: dict[str, set[tuple[str, str | None]]] = field(default_factory=dict)  # module -> {(name, alias)}
    untype: list[tuple[ast.ImportFrom, str]] = field(default_factory=list)  # TYPE_CHECKING names to drop
    kept: list[str] = field(default_factory=list)


def plan(module: Module, modules: dict[str, Module], patched: set[tuple[str, str]]) -> Plan:
    result = Plan(module)
    bound, typing_only = module_bindings(module)
    heavy_here = heavy({module.name}, modules)
    chosen: dict[str, str] = {}  # name -> origin hoisted by this run
    for found in function_imports(module):
        node = found.node
        base = absolute(node, module)
        where = f"{module.path.relative_to(ROOT)}:{node.lineno} {ast.unparse(node)}"
        why = reason(module, node)
        if why is None and any(isinstance(c, ast.Try) and _catches_import_error(c) for c in found.chain):
            why = "an optional import (its try catches ImportError)"
        loads = targets(node, module, modules)
        parts = module.name.split(".")
        packages = frozenset(".".join(parts[:i]) for i in range(1, len(parts)))
        from_package = base in packages and any(f"{base}.{a.name}" not in modules for a in node.names)
        if why is None and (from_package or module.name in closure(loads, modules, packages)):
            why = "cycle: what it imports imports this module"
        if why is None and not heavy(loads, modules) <= heavy_here:
            why = f"loads {', '.join(sorted(heavy(loads, modules) - heavy_here))}"
        if why is None and any((base, a.name) in patched for a in node.names):
            why = "a test patches it"
        if why is None:
            scopes = [c for c in found.chain if isinstance(c, FUNCTIONS)]
            for name, origin in origins(node, module).items():
                inner = imported_here(scopes[-1], module)
                if bound.get(name, origin) != origin:
                    why = f"{name} is bound at module level otherwise"
                elif chosen.get(name, origin) != origin:
                    why = f"{name} is imported from elsewhere in another function"
                elif any(name in bound_names(s) for s in scopes) or inner.get(name, origin) != origin:
                    why = f"{name} is a local or parameter too"
                elif any(name in imported_here(s, module) and imported_here(s, module)[name] != origin
                         for s in scopes[:-1]):
                    why = f"{name} is imported otherwise in an enclosing function"
        if why is not None:
            result.kept.append(f"{where}  ({why})")
            continue
        result.remove.append(node)
        for alias in node.names:
            name = alias.asname or alias.name
            chosen[name] = f"{base}:{alias.name}"
            if bound.get(name) == f"{base}:{alias.name}":
                continue  # already imported at the top
            result.add.setdefault(base, set()).add((alias.name, alias.asname))
            if name in typing_only:
                result.untype.append((typing_only[name], name))
        modules[module.name].own |= loads  # later checks see the new arrow
    return result


def render(base: str, names: set[tuple[str, str | None]], indent: str = "") -> list[str]:
    parts = sorted({f"{n} as {a}" if a and a != n else n for n, a in names}, key=str.lower)
    one = f"{indent}from {base} import {', '.join(parts)}"
    if len(one) <= LINE:
        return [one]
    return [f"{indent}from {base} import ("] + [f"{indent}    {p}," for p in parts] + [f"{indent})"]


def apply(p: Plan) -> str:
    module = p.module
    lines = module.text.split("\n")
    ops: list[tuple[int, int, list[str]]] = []  # replace lines[start:end] (0-based) with new lines
    removed = {id(n) for n in p.remove}
    gone = {i for n in p.remove for i in range(n.lineno - 1, n.end_lineno or n.lineno)}
    for node in p.remove:
        start, end = node.lineno - 1, node.end_lineno or node.lineno
        # The blank line after a group of imports goes with them when nothing but the def, its
        # docstring or another blank line stands above the group.
        first = start
        while first - 1 in gone:
            first -= 1
        above = lines[first - 1].strip() if first else ""
        if (end < len(lines) and not lines[end].strip() and (above == "" or above.endswith(('"""', ":")))
                and not _import_below(lines, end)):
            end += 1
        ops.append((start, end, []))
    # A block left empty gets `pass`.
    for block_owner in ast.walk(module.tree):
        for attr in ("body", "orelse", "finalbody"):
            block = getattr(block_owner, attr, None)
            if isinstance(block, list) and block and all(id(s) in removed for s in block):
                first = block[0]
                ops.append((first.lineno - 1, first.lineno - 1, [" " * first.col_offset + "pass"]))
    # TYPE_CHECKING imports whose names now come from the top.
    untyped: dict[int, tuple[ast.ImportFrom, set[str]]] = {}
    for node, name in p.untype:
        untyped.setdefault(id(node), (node, set()))[1].add(name)
    emptied = set()
    for node, names in untyped.values():
        rest = {(a.name, a.asname) for a in node.names if (a.asname or a.name) not in names}
        if not rest:
            emptied.add(id(node))
        ops.append((node.lineno - 1, node.end_lineno or node.lineno,
                    render(absolute(node, module), rest, " " * node.col_offset) if rest else []))
    for block in module.tree.body:  # a TYPE_CHECKING block left empty goes whole
        if is_type_checking(block) and not block.orelse and all(id(s) in emptied for s in block.body):
            ops = [op for op in ops if not block.lineno <= op[0] < (block.end_lineno or block.lineno)]
            ops.append((block.lineno - 1, block.end_lineno or block.lineno, []))
    # The top: merge into an import of the same module, else beside the routine imports.
    top = [s for s in module.tree.body if isinstance(s, ast.ImportFrom) and not s.level]
    inserts: dict[int, list[str]] = {}
    for base, names in sorted(p.add.items()):
        same = next((s for s in top if s.module == base and len(s.names) and s.names[0].name != "*"
                     and reason(module, s) is None), None)
        if same is not None:
            merged = {(a.name, a.asname) for a in same.names} | names
            ops.append((same.lineno - 1, same.end_lineno or same.lineno, render(base, merged)))
            continue
        own = [s for s in top if (s.module or "").startswith("routine")]
        after = [s for s in own if (s.module or "") < base]
        if after:
            at = after[-1].end_lineno or after[-1].lineno
        elif own:
            at = own[0].lineno - 1
        else:
            imports = [s for s in module.tree.body if isinstance(s, (ast.Import, ast.ImportFrom))]
            leading = [s for s in imports if s.lineno < _first_code(module.tree)]
            at = (leading[-1].end_lineno or leading[-1].lineno) if leading else _after_docstring(module.tree)
            if at not in inserts and not leading:
                inserts[at] = [""]
        inserts.setdefault(at, []).extend(render(base, names))
    ops += [(at, at, new) for at, new in inserts.items()]
    for start, end, new in sorted(ops, key=lambda o: (o[0], o[1]), reverse=True):
        lines[start:end] = new
    return "\n".join(lines)


def _import_below(lines: list[str], blank: int) -> bool:
    """Whether the statement after a blank line is another import (then the blank line stays)."""
    for line in lines[blank + 1:]:
        if line.strip():
            return line.strip().startswith(("from ", "import "))
    return False


def _first_code(tree: ast.Module) -> int:
    for s in tree.body:
        if not isinstance(s, (ast.Import, ast.ImportFrom)) and not (
                isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)):
            return s.lineno
    return 10 ** 9


def _after_docstring(tree: ast.Module) -> int:
    first = tree.body[0] if tree.body else None
    if first is not None and isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
        return first.end_lineno or first.lineno
    return 0


def main(argv: list[str]) -> int:
    dry = "--dry-run" in argv
    verbose = "--verbose" in argv
    modules = load()
    if "--static" not in argv:
        observe(modules)
    patched = patched_in_tests()
    moved = kept = 0
    for name in sorted(modules):
        p = plan(modules[name], modules, patched)
        moved += len(p.remove)
        kept += len(p.kept)
        if verbose:
            for line in p.kept:
                print("kept", line)
        if p.remove and not dry:
            text = apply(p)
            ast.parse(text)  # never write a file that does not parse
            p.module.path.write_text(text, encoding="utf-8")
    print(f"{'would move' if dry else 'moved'} {moved} function-level imports to the top; {kept} kept")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
