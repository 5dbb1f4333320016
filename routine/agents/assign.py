"""`routine agent assign|unassign|reassign NAME --project P | --task NOTE`.

A project assignment is the project home note's `members` (a wikilink to the agent note) and
its `behaviours` entry ("Name: behaviour"); a task assignment is `[assignee:: [[Name]]]` on a
task line. Both are plain edits a person could make in Obsidian, written through the vault's
retrying rewrite so a save in between is never lost.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Callable

from routine.config.behaviours import DEFAULT as DEFAULT_BEHAVIOUR
from routine.config.model import AgentSpec, Config
from routine.errors import UsageError
from routine.projects.assignees import PROJECTS, TASK_ASSIGNEE, TASK_NOTES, linked_note, names_agent, own_behaviour
from routine.projects.tasks import TaskState, parse_line
from routine.vault.frontmatter import FlowList, parse_frontmatter, update_frontmatter
from routine.vault.notes import NoteText, resolve_wikilink
from routine.vault.provenance import person_text
from routine.vault.writer import rewrite_note as rewrite

if TYPE_CHECKING:
    from routine.jsonvalue import JSONValue, Parsed

def title_of(agent: AgentSpec) -> str:
    return PurePosixPath(agent.source).stem


def _project_home(config: Config, project: str) -> str:
    rel = f"{PROJECTS}/{project}/{project}.md"
    if not (config.vault / rel).is_file():
        raise UsageError(f"There is no project {project!r} (no note {rel}).",
                         "check the name, or create the project's home note first.")
    return rel


def _as_list(value: JSONValue) -> list[JSONValue]:
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def _members_without(members: list[JSONValue], agent: AgentSpec) -> list[JSONValue]:
    return [m for m in members if not names_agent(str(m), title_of(agent)) and not names_agent(str(m), agent.name)]


def _behaviours_without(behaviours: list[JSONValue], agent: AgentSpec) -> list[JSONValue]:
    names = {agent.name.lower(), title_of(agent).lower()}
    return [b for b in behaviours if str(b).split(":", 1)[0].strip().lower() not in names]


def _edit_project(config: Config, project: str, change: Callable[[Parsed], dict[str, object] | None]) -> str:
    rel = _project_home(config, project)

    def edit(current: NoteText | None) -> str | None:
        split = parse_frontmatter(current.text if current else "")
        if not split.readable:
            raise UsageError(f"{rel} has frontmatter routine cannot read ({split.error}).", f"fix the YAML in {rel}.")
        updates = change(split.data)
        return None if updates is None else update_frontmatter(split, updates) + split.body

    rewrite(config.vault / rel, rel, edit)
    return rel


def assign_project(config: Config, agent: AgentSpec, project: str, behaviour: str | None) -> str:
    link = f"[[{config.layout.agents}/{title_of(agent)}]]"
    role = behaviour or agent.behaviour or DEFAULT_BEHAVIOUR.value

    def change(data: Parsed) -> dict[str, object]:
        members = _members_without(_as_list(data.get("members")), agent) + [link]
        behaviours = _behaviours_without(_as_list(data.get("behaviours")), agent) + [f"{title_of(agent)}: {role}"]
        return {"members": members, "behaviours": behaviours}

    return _edit_project(config, project, change)


def unassign_project(config: Config, agent: AgentSpec, project: str) -> str:
    def change(data: Parsed) -> dict[str, object] | None:
        members = _as_list(data.get("members"))
        kept = _members_without(members, agent)
        if len(kept) == len(members):
            raise UsageError(f"{agent.name} is not a member of {project}.", "see `routine agent show NAME`.")
        return {"members": kept, "behaviours": _behaviours_without(_as_list(data.get("behaviours")), agent)}

    return _edit_project(config, project, change)


def _task_note(config: Config, note: str) -> str:
    rel = resolve_wikilink(config.vault, note)
    if rel is None or not rel.endswith(".md"):
        raise UsageError(f"There is no note {note!r} holding the task.", "name the note by its path or name.")
    return rel


def _strip_assignee(line: str, agent_name: str) -> str:
    found = TASK_ASSIGNEE.search(line)
    if found and names_agent(found.group(1), agent_name):
        start = line.index("[assignee::")
        end = line.index("]]", start) + 2
        end = line.index("]", end) + 1
        return (line[:start].rstrip() + " " + line[end:].lstrip()).rstrip()
    return line


def _outside_projects(rel: str) -> bool:
    return not rel.startswith(PROJECTS + "/")


def _list_task_note(config: Config, agent: AgentSpec, rel: str, keep: bool) -> None:
    """Name (``keep``) or stop naming ``rel`` in the agent note's `tasks:`: the notes outside every
    project where its tasks are (``routine.projects.assignees``: the one reader of it)."""
    link = f"[[{rel.removesuffix('.md')}]]"

    def edit(current: NoteText | None) -> str | None:
        split = parse_frontmatter(current.text if current else "")
        if not split.readable:
            raise UsageError(f"{agent.source} has frontmatter routine cannot read ({split.error}).",
                             f"fix the YAML in {agent.source}.")
        listed = _as_list(split.data.get(TASK_NOTES))
        others = [entry for entry in listed if linked_note(config.vault, entry) != rel]
        wanted = [*others, link] if keep else others
        if wanted == listed:
            return None
        if not wanted:
            return update_frontmatter(split, {}, remove=(TASK_NOTES,)) + split.body
        return update_frontmatter(split, {TASK_NOTES: FlowList(wanted)}) + split.body

    rewrite(config.vault / agent.source, agent.source, edit)


def picks_up(agent: AgentSpec, rel: str) -> str:
    """How the agent comes to the task: one sentence; refused when its behaviour never would."""
    if not _outside_projects(rel):
        return "it may now read and write that case file."
    behaviour = own_behaviour(agent.behaviour)
    if not behaviour.picks_up_tasks:
        raise UsageError(f"{agent.name} is {behaviour.value} ({behaviour.meaning}), so it would never pick up "
                         f"a task in {rel}.", f"give {agent.source} `behaviour: reactive`, or assign the task "
                         "to an agent that picks up tasks.")
    return (f"it picks the task up when the daemon runs ({behaviour.value}: {behaviour.meaning}), "
            f"and may read and write {rel} and its result note.")


def assign_task(config: Config, agent: AgentSpec, note: str, item: str | None) -> str:
    """Put the assignee on the open task line containing ``item`` (or the note's only open task);
    with ``item`` and no such line, add the task at the end of the note. A note outside every
    project is named in the agent note's `tasks:`, where the pickup and the scopes find it."""
    rel = _task_note(config, note)
    picks_up(agent, rel)  # refused before any edit when the agent never picks up tasks
    tag = f"[assignee:: [[{title_of(agent)}]]]"

    def edit(current: NoteText | None) -> str | None:
        text = current.text if current else ""
        lines = text.split("\n")
        theirs = person_text(rel, text).split("\n")  # a copy in routine's text is never the one assigned
        open_tasks = [i for i, line in enumerate(theirs)
                      if (task := parse_line(rel, i, line)) and task.state is TaskState.OPEN]
        chosen = [i for i in open_tasks if item and item.lower() in lines[i].lower()] if item else open_tasks
        if item and not chosen:
            return text.rstrip("\n") + f"\n- [ ] {item} {tag}\n"
        if len(chosen) != 1:
            raise UsageError(f"{rel} has {len(chosen)} open tasks, so routine cannot tell which one to assign.",
                             "say which with --item TEXT (words of the task line), or add one that way.")
        line = lines[chosen[0]]
        assigned = TASK_ASSIGNEE.search(line)
        if assigned:
            other = assigned.group(1)
            raise UsageError(f"That task in {rel} is already assigned to {other}.",
                             f"use `routine agent reassign {other} --to {agent.name} --task {rel}`.")
        lines[chosen[0]] = line.rstrip() + " " + tag
        return "\n".join(lines)

    rewrite(config.vault / rel, rel, edit)
    if _outside_projects(rel):
        _list_task_note(config, agent, rel, keep=True)
    return rel


def unassign_task(config: Config, agent: AgentSpec, note: str, to: AgentSpec | None = None) -> str:
    """Take the agent off every task line of the note (and give them to ``to``, for reassign)."""
    rel = _task_note(config, note)

    def edit(current: NoteText | None) -> str | None:
        lines = (current.text if current else "").split("\n")
        changed = False
        for i, line in enumerate(lines):
            stripped = _strip_assignee(line, agent.name)
            if stripped != line:
                lines[i] = stripped + (f" [assignee:: [[{title_of(to)}]]]" if to else "")
                changed = True
        if not changed:
            raise UsageError(f"No task in {rel} is assigned to {agent.name}.", "see `routine agent show NAME`.")
        return "\n".join(lines)

    if to is not None:
        picks_up(to, rel)
    rewrite(config.vault / rel, rel, edit)
    if _outside_projects(rel):
        _list_task_note(config, agent, rel, keep=False)
        if to is not None:
            _list_task_note(config, to, rel, keep=True)
    return rel


def reassign_project(config: Config, agent: AgentSpec, to: AgentSpec, project: str) -> str:
    """Hand the agent's place in the project to another, with the same behaviour."""
    home = config.vault / _project_home(config, project)
    behaviours = _as_list(parse_frontmatter(home.read_text(encoding="utf-8")).data.get("behaviours"))
    names = {agent.name.lower(), title_of(agent).lower()}
    kept = next((str(b).split(":", 1)[1].strip() for b in behaviours if ":" in str(b)
                 and str(b).split(":", 1)[0].strip().lower() in names), None)
    unassign_project(config, agent, project)
    return assign_project(config, to, project, kept)
