"""The configuration in force: routine.yaml, agent notes and schedule files, with hot reload.

Each file is judged on its own. A file that fails validation is rejected with its errors
(logged, and an alert for the person) and the last good version of that file stays in force.
An agent is read as its note is on disk now: ``agents`` re-reads when a note changed since the
last reload, before the watcher's settled event says so (a fire a second after a save runs the
new definition).
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from pathlib import Path

from routine.config.loader import load_agents, load_config
from routine.config.model import AgentSpec, Config
from routine.errors import ConfigError, Problem
from routine.schedule.loader import FileResult, cross_file_problems, load_file, merge, project_result, schedule_files
from routine.schedule.model import Schedules

log = logging.getLogger(__name__)


@dataclass
class Reloaded:
    problems: list[Problem] = field(default_factory=list)
    changed: bool = False


class Live:
    def __init__(self, config_arg: str | None = None) -> None:
        self._config_arg = config_arg
        self._lock = threading.RLock()
        self.config: Config = load_config(config_arg)  # at start-up a bad config is fatal (exit 2)
        self._agents: dict[str, AgentSpec] = {}
        self._agents_seen: tuple[tuple[str, int, int], ...] = ()  # the notes' (name, mtime, size) last read
        self._agent_by_file: dict[str, AgentSpec] = {}
        self._files: dict[Path, FileResult] = {}
        self.schedules = Schedules()
        self.reload()

    def reload(self) -> Reloaded:
        """Re-read everything; keep the last good version of whatever is now invalid."""
        with self._lock:
            out = Reloaded()
            before = (self.config, dict(self._agents), {b.id: b for b in self.schedules.blocks.values()},
                      list(self.schedules.triggers))
            try:
                self.config = load_config(self._config_arg)
            except ConfigError as exc:
                out.problems += exc.problems
            except Exception as exc:  # a missing file mid-save, say: keep what works
                out.problems.append(Problem(str(self.config.path), None, "", f"could not be read: {exc}"))
            self._reload_agents(out)
            self._reload_schedules(out)
            after = (
                self.config,
                self._agents,
                {b.id: b for b in self.schedules.blocks.values()},
                self.schedules.triggers,
            )
            out.changed = before != after
            for p in out.problems:
                log.error("rejected: %s (the last good version stays in force)", p)
            return out

    @property
    def agents(self) -> dict[str, AgentSpec]:
        """The agents as their notes are on disk now (read again first if one changed since)."""
        with self._lock:
            if self._agent_notes() != self._agents_seen:
                out = Reloaded()
                self._reload_agents(out)  # the watcher's reload follows, with the schedules
                for p in out.problems:
                    log.error("rejected: %s (the last good version stays in force)", p)
            return self._agents

    def _agent_notes(self) -> tuple[tuple[str, int, int], ...]:
        try:
            found = [(p.name, st.st_mtime_ns, st.st_size) for p in (self.config.vault / self.config.layout.agents)
                     .glob("*.md") if (st := p.stat())]
        except OSError:  # a note removed between the listing and its stat: read again
            return ()
        return tuple(sorted(found))

    def _reload_agents(self, out: Reloaded) -> None:
        self._agents_seen = self._agent_notes()
        agents, problems = load_agents(self.config)
        bad_files = {p.file for p in problems}
        current = {a.source: a for a in agents.values()}
        for source, old in self._agent_by_file.items():
            if source in bad_files and source not in current and (self.config.vault / source).exists():
                current[source] = old  # the note is broken right now: keep its last good version
        self._agent_by_file = current
        self._agents = {a.name: a for a in current.values()}
        out.problems += problems

    def _reload_schedules(self, out: Reloaded) -> None:
        fresh: dict[Path, FileResult] = {}
        for path in schedule_files(self.config):
            result = load_file(path, self.config, self._agents)
            if result.problems:
                out.problems += result.problems
                if path in self._files:
                    fresh[path] = self._files[path]
                continue
            fresh[path] = result
        projects = project_result(self.config, self._agents)  # cadences from project home notes
        out.problems += projects.problems
        fresh[projects.path] = projects
        clashes = cross_file_problems(list(fresh.values()))
        if clashes:
            out.problems += clashes
            # Keep the previous set of files: the clash arose from an edit.
            fresh = {p: self._files[p] for p in fresh if p in self._files} or fresh
        self._files = fresh
        self.schedules = merge(list(fresh.values()))

    def watched_paths(self) -> list[Path]:
        return [self.config.path.parent, self.config.schedules_dir, self.config.vault / self.config.layout.agents]
