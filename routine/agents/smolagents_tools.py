"""The code of routine's tools as smolagents `Tool` classes, for `routine agent export`.

Each is self-contained (smolagents loads a tool file with `Tool.from_code`) and works on the
folder named by the VAULT environment variable (default: the current folder), refusing paths
that leave it. Only tools that make sense outside routine are exported; `run_command` (which
needs routine's bubblewrap sandbox) and `date_math` are not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from routine.config.tool_names import declared

if TYPE_CHECKING:
    from routine.jsonvalue import Parsed

HEADER = '''from smolagents import Tool


def _vault():
    import os
    from pathlib import Path
    return Path(os.environ.get("VAULT", ".")).resolve()


def _inside(rel):
    root = _vault()
    path = (root / rel).resolve()
    if path != root and root not in path.parents:
        raise ValueError(f"{rel!r} is outside the vault.")
    return path

'''

FORWARDS = {
    "read_note": """    def forward(self, path: str) -> str:
        rel = path if path.endswith(".md") else path + ".md"
        return _inside(rel).read_text(encoding="utf-8")
""",
    "list_notes": """    def forward(self, folder: str | None = None, limit: int | None = None) -> str:
        base = _inside(folder or ".")
        notes = sorted((p for p in base.rglob("*.md")), key=lambda p: p.stat().st_mtime, reverse=True)
        return "\\n".join(p.relative_to(_vault()).as_posix() for p in notes[: limit or 30])
""",
    "search_notes": """    def forward(self, query: str, k: int | None = None) -> str:
        words = {w.lower() for w in query.split() if len(w) > 2}
        scored = []
        for p in _vault().rglob("*.md"):
            text = p.read_text(encoding="utf-8", errors="replace")
            score = sum(text.lower().count(w) for w in words)
            if score:
                scored.append((score, p.relative_to(_vault()).as_posix(), " ".join(text.split())[:200]))
        scored.sort(reverse=True)
        return "\\n".join(f"- {rel}: {snippet}" for _, rel, snippet in scored[: k or 5]) or "No match."
""",
    "write_note": """    def forward(
        self, path: str, content: str, section: str | None = None, append: bool | None = None
    ) -> str:
        rel = path if path.endswith(".md") else path + ".md"
        target = _inside(rel)
        if target.exists() and not append and not section:
            return f"{rel} exists; use append or section, a note is never replaced."
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("a", encoding="utf-8") as out:
            out.write((f"\\n## {section}\\n" if section else "\\n") + content.strip() + "\\n")
        return f"Wrote {rel}."
""",
    "now": """    def forward(self, timezone: str | None = None) -> str:
        from datetime import datetime
        from zoneinfo import ZoneInfo
        moment = datetime.now(ZoneInfo(timezone)) if timezone else datetime.now().astimezone()
        return moment.strftime("%A %Y-%m-%d %H:%M %Z, ISO week %V")
""",
}

EXPORTABLE = declared(*FORWARDS)


def _class_name(name: str) -> str:
    return "".join(part.title() for part in name.split("_")) + "Tool"


def smolagents_inputs(parameters: Parsed) -> dict[str, Parsed]:
    """routine's JSON-schema inputs in smolagents' shape (optional ones nullable)."""
    required = set(parameters.get("required", ()))
    out: dict[str, Parsed] = {}
    for key, schema in parameters["properties"].items():
        item = {"type": schema.get("type", "string"), "description": schema.get("description", key)}
        if key not in required:
            item["nullable"] = True
        out[key] = item
    return out


def tool_code(name: str, description: str, parameters: Parsed) -> str:
    return (HEADER + f"\nclass {_class_name(name)}(Tool):\n"
            f"    name = {name!r}\n    description = {description!r}\n"
            f"    inputs = {smolagents_inputs(parameters)!r}\n    output_type = \"string\"\n\n" + FORWARDS[name])
