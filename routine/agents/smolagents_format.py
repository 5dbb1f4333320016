"""`routine agent export NAME --format smolagents DIR` and `routine agent import DIR`.

The folder is the one smolagents' `agent.save(folder)` writes and `ToolCallingAgent.from_folder`
loads: agent.json (class, tools, model, prompt_templates, max_steps, name, description),
prompts.yaml, tools/<name>.py (a `Tool` subclass each), app.py, requirements.txt. routine adds
grounding/*.md (the artifacts, whose text is also in the system prompt) and a `routine` entry in
agent.json (model alias, behaviour, locked, author, version, task) that smolagents ignores and
`import` reads back. Writing the folder needs no smolagents; loading it needs smolagents.
An imported folder is someone else's: it gets the policy of an agent installed from a library
(the library tools only, approval required, never autonomous, the default tool rounds at most).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

import yaml

from routine.agents.authoring import check_name
from routine.agents.library import MAX_FILE_BYTES, own_files
from routine.agents.smolagents_tools import EXPORTABLE, tool_code
from routine.config.behaviours import DEFAULT, Behaviour
from routine.config.model import AgentSpec, Config
from routine.config.schedule_schema import AGENT
from routine.config.schema import TOOL_NAMES
from routine.config.tool_names import LIBRARY_TOOLS
from routine.errors import UsageError
from routine.vault.atomic import atomic_create
from routine.vault.files import read_regular
from routine.vault.frontmatter import join_frontmatter, parse_frontmatter
from routine.vault.notes import read_note, resolve_wikilink

if TYPE_CHECKING:
    from routine.jsonvalue import JSONObject, Parsed

RAW = re.compile(r"\{% raw %\}(.*?)\{% endraw %\}", re.DOTALL)
APP = """from smolagents import GradioUI, ToolCallingAgent

agent = ToolCallingAgent.from_folder(".")
GradioUI(agent).launch()
"""


def _python_name(name: str) -> str:
    return re.sub(r"\W", "_", name)


def _system_prompt(agent: AgentSpec, grounding: list[tuple[str, str]]) -> str:
    parts = ["{% raw %}" + agent.system_prompt.strip() + "{% endraw %}"]
    if grounding:
        parts.append("## Your grounding")
        parts += ["{% raw %}### " + title + "\n" + text.strip() + "{% endraw %}" for title, text in grounding]
    parts.append("## Tools\n{%- for tool in tools.values() %}\n- {{ tool.name }}: {{ tool.description }}"
                 "\n{%- endfor %}")
    return "\n\n".join(parts) + "\n"


def prompt_templates(system_prompt: str) -> JSONObject:
    return {"system_prompt": system_prompt,
            "planning": {"initial_plan": "", "update_plan_pre_messages": "", "update_plan_post_messages": ""},
            "managed_agent": {"task": "{{ task }}", "report": "{{ final_answer }}"},
            "final_answer": {"pre_messages": "", "post_messages": "{{ task }}"}}


def export(config: Config, agent: AgentSpec, folder: Path) -> list[str]:
    """Write the folder; returns the tools that could not be exported (said to the person)."""
    from routine.tools.registry import TOOLS  # lazy: jsonschema, which the tools' declarations load

    if folder.exists() and any(folder.iterdir()):
        raise UsageError(f"{folder} is not empty.", "export into a new or empty folder.")
    (folder / "tools").mkdir(parents=True, exist_ok=True)
    (folder / "grounding").mkdir(exist_ok=True)
    grounding = []
    for link in agent.grounding:
        rel = resolve_wikilink(config.vault, link)
        if rel is None:
            continue
        shutil.copyfile(config.vault / rel, folder / "grounding" / PurePosixPath(rel).name)
        grounding.append((PurePosixPath(rel).stem, read_note(config.vault, rel).body))
    tools = [t for t in agent.tools if t in EXPORTABLE]
    for name in tools:
        t = TOOLS[name]
        (folder / "tools" / f"{name}.py").write_text(tool_code(name, t.description, t.parameters), encoding="utf-8")
    (folder / "__init__.py").write_text("")
    (folder / "tools" / "__init__.py").write_text("")
    templates = prompt_templates(_system_prompt(agent, grounding))
    alias = config.models[agent.model]
    props = parse_frontmatter((config.vault / agent.source).read_text(encoding="utf-8")).data
    routine: dict[str, object] = {
        "agent": agent.name,
        "title": PurePosixPath(agent.source).stem,
        "model": agent.model,
        **{
            k: props[k]
            for k in (
                "role",
                "behaviour",
                "locked",
                "author",
                "version",
                "custom",
                "task",
                "approval",
                "max_iterations",
                "timeout",
                "description",
            )
            if k in props
        },
        "tools": list(agent.tools),
        "grounding": [
            f"grounding/{PurePosixPath(r).name}"
            for r in (resolve_wikilink(config.vault, g) for g in agent.grounding)
            if r
        ],
    }
    # The model as LiteLLM sees it, with the alias's pinned options (so Ollama does not reload it),
    # and litellm's MCP bridge skipped as routine does (it would import the optional `mcp` package).
    model = {"model_id": alias.model, "api_base": alias.primary.api_base, **alias.request_options(),
             "_skip_mcp_handler": True}
    data = {"class": "ToolCallingAgent", "tools": tools,
            "model": {"class": "LiteLLMModel", "data": model},
            "managed_agents": {}, "prompt_templates": templates, "max_steps": agent.max_iterations,
            "verbosity_level": 1, "planning_interval": None, "name": _python_name(agent.name),
            "description": agent.role, "requirements": ["smolagents[litellm]"], "routine": routine}
    (folder / "agent.json").write_text(json.dumps(data, indent=4, ensure_ascii=False) + "\n", encoding="utf-8")
    (folder / "prompts.yaml").write_text(yaml.safe_dump(templates, default_style="|", sort_keys=False,
                                                        allow_unicode=True, width=10**9), encoding="utf-8")
    (folder / "requirements.txt").write_text("smolagents[litellm]\n")
    (folder / "app.py").write_text(APP)
    return [t for t in agent.tools if t not in EXPORTABLE]


def _body(system_prompt: str) -> str:
    found = RAW.search(system_prompt or "")
    if found:
        return found.group(1).strip()
    text = (system_prompt or "").strip()
    return "{% raw %}" + text + "{% endraw %}" if "{{" in text or "{%" in text else text


def _as_installed(props: Parsed) -> Parsed:
    """Someone else's folder gets what an agent from a library gets: its writes wait for approval,
    it never acts on its own (`autonomous` becomes the default behaviour) and it takes at most
    the default number of tool rounds. (Its tools: ``LIBRARY_TOOLS`` only, in ``import_folder``.)"""
    default_rounds: int = AGENT["properties"]["max_iterations"]["default"]  # type: ignore[index]
    rounds = props.get("max_iterations")
    return {"approval": "required",
            "behaviour": DEFAULT.value if props.get("behaviour") in (None, Behaviour.AUTONOMOUS.value)
            else props["behaviour"],
            "max_iterations": min(rounds, default_rounds) if isinstance(rounds, int) else default_rounds}


def import_folder(config: Config, folder: Path, name: str | None = None) -> tuple[Path, list[str]]:
    """Bring an agent folder back as an agent note; returns its path and the tools dropped."""
    # Someone else's folder: only its own regular files (no link out of it), within the size caps.
    present = own_files(folder, f"The agent folder {folder}", "nothing was imported",
                        "point at a folder smolagents saved.") if folder.is_dir() else {}
    try:
        if "agent.json" not in present:
            raise OSError("no regular file agent.json in it")
        data = json.loads(read_regular(folder / "agent.json", MAX_FILE_BYTES).decode("utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(
            f"{folder} has no readable agent.json ({exc}).", "point at a folder smolagents saved."
        ) from None
    routine = data.get("routine") or {}
    title = check_name(name or routine.get("title") or str(data.get("name") or folder.name).replace("_", "-").title())
    note = config.vault / config.layout.agents / f"{title}.md"
    if note.exists():
        raise UsageError(f"There is already an agent note {note.relative_to(config.vault)}.",
                         "import it under another name with --name NEW.")
    wanted = list(routine.get("tools") or data.get("tools") or [])
    tools = [t for t in wanted if t in TOOL_NAMES and t in LIBRARY_TOOLS]  # the policy of an installed agent
    links = []
    files = sorted(folder / rel for rel in present if rel.startswith("grounding/") and rel.count("/") == 1
                   and rel.endswith(".md"))
    order = {name: i for i, name in enumerate(routine.get("grounding") or [])}
    for file in sorted(files, key=lambda f: (order.get(f"grounding/{f.name}", len(order)), f.name)):
        dest = config.vault / config.layout.agents / title / file.name
        dest.parent.mkdir(parents=True, exist_ok=True)
        atomic_create(dest, read_regular(file, MAX_FILE_BYTES).decode("utf-8", errors="replace"))
        links.append(f"[[{config.layout.agents}/{title}/{file.stem}]]")
    alias = routine.get("model")
    if alias not in config.models:
        alias = "general" if "general" in config.models else next(iter(config.models))
    props = {
        "agent": title.lower(),
        "role": routine.get("role") or data.get("description") or f"Imported agent {title}",
        "model": alias,
        "custom": True,
    }
    props.update({k: routine[k] for k in ("behaviour", "locked", "author", "version", "max_iterations",
                                          "timeout", "description") if k in routine})
    props.update(_as_installed(props))
    props.update({"tools": tools, "grounding": links, "write": {"append": f"{config.layout.agents}/{title}/Log.md"},
                  "task": routine.get("task") or "Do what you are assigned, using your grounding."})
    templates = data.get("prompt_templates") or {}
    body = _body(templates.get("system_prompt", ""))
    note.parent.mkdir(parents=True, exist_ok=True)
    atomic_create(note, join_frontmatter(props, "\n" + body + "\n"))
    return note, [t for t in wanted if t not in tools and t != "final_answer"]
