"""Benchmark: what membership scopes cost each run.

Every step starts with ``projects.membership.effective_agent`` (read every project's home note,
its task lines and its artifacts' properties). This builds a generated vault of PROJECTS
projects, each with TASKS task lines and ARTIFACTS artifacts, and prints the time of one
``effective_agent`` call (median of ROUNDS) and of ``case_file_globs``.

    make bench-projects      # or: .venv/bin/python bench/projects.py [--projects 20] [--tasks 50] [--artifacts 20]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def build(vault: Path, projects: int, tasks: int, artifacts: int) -> None:
    (vault / "Agents").mkdir(parents=True)
    (vault / "Agents" / "Builder.md").write_text("---\nagent: builder\nmodel: general\n---\nYou build.\n")
    for p in range(projects):
        folder = vault / "Projects" / f"Project {p}"
        folder.mkdir(parents=True)
        lines = [f"- [ ] Task {t} [assignee:: [[{'Builder' if t % 3 == 0 else 'Ada'}]]] 📅 2026-12-01" for t in range(tasks)]
        (folder / f"Project {p}.md").write_text(
            "---\ntype: project\nstatus: active\nmanager: '[[Project PM]]'\nmembers: ['[[Builder]]', '[[Ada]]']\n"
            "behaviours: ['Builder: reactive']\n---\n# Project\n\n## Tasks\n\n" + "\n".join(lines) + "\n")
        for a in range(artifacts):
            owner = "Builder" if a % 2 else "Ada"
            (folder / f"Artifact {a}.md").write_text(
                f"---\ntype: artifact\nartifact_type: intellectual\nowner: '[[{owner}]]'\nqa: none\n---\n# A{a}\n\ntext\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--projects", type=int, default=20)
    ap.add_argument("--tasks", type=int, default=50)
    ap.add_argument("--artifacts", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=10)
    args = ap.parse_args()
    from routine.config.model import AgentSpec
    from routine.projects.membership import case_file_globs, effective_agent

    with tempfile.TemporaryDirectory() as tmp:
        vault = Path(tmp)
        build(vault, args.projects, args.tasks, args.artifacts)
        agent = AgentSpec(name="builder", role="", model="general", reads=("Plans/**",), writes=("Builds/**",),
                          approval="none", tools=(), grounding=(), write=None, task="", system_prompt="",
                          source="Agents/Builder.md")
        times = []
        for _ in range(args.rounds):
            start = time.perf_counter()
            effective = effective_agent(vault, agent)
            times.append(time.perf_counter() - start)
        start = time.perf_counter()
        globs = case_file_globs(vault, "builder")
        cfg = time.perf_counter() - start
        notes = args.projects * (1 + args.artifacts)
        print(f"vault: {args.projects} projects, {args.projects * args.tasks} task lines, {notes} notes in case files")
        print(f"effective_agent: median {statistics.median(times) * 1000:.1f} ms, max {max(times) * 1000:.1f} ms "
              f"({len(effective.writes)} write globs, {sum(g.startswith('!') for g in effective.writes)} exclusions)")
        print(f"case_file_globs: {cfg * 1000:.1f} ms ({len(globs)} globs)")


if __name__ == "__main__":
    main()
