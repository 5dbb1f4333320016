"""Benchmark: what resolving an agent's scopes costs each run.

Every step, answer and `agent show` starts with ``routine.access.resolve`` (read every project's
home note, its task lines, its artifacts' properties and the locked agents' notes). This builds a
generated vault of PROJECTS projects, each with TASKS task lines and ARTIFACTS artifacts, and
prints the time of one ``resolve`` call (median of ROUNDS).

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
        lines = [
            f"- [ ] Task {t} [assignee:: [[{'Builder' if t % 3 == 0 else 'Ada'}]]] 📅 2026-12-01"
            for t in range(tasks)
        ]
        (folder / f"Project {p}.md").write_text(
            "---\ntype: project\nstatus: active\nmanager: '[[Project PM]]'\nmembers: ['[[Builder]]', '[[Ada]]']\n"
            "behaviours: ['Builder: reactive']\n---\n# Project\n\n## Tasks\n\n" + "\n".join(lines) + "\n")
        for a in range(artifacts):
            owner = "Builder" if a % 2 else "Ada"
            (folder / f"Artifact {a}.md").write_text(
                f"---\ntype: artifact\nartifact_type: intellectual\nowner: '[[{owner}]]'\nqa: none\n---\n# "
                f"A{a}\n\ntext\n"
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--projects", type=int, default=20)
    ap.add_argument("--tasks", type=int, default=50)
    ap.add_argument("--artifacts", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=10)
    args = ap.parse_args()
    from routine.access import resolve
    from routine.config.loader import load_agents, load_config

    with tempfile.TemporaryDirectory() as tmp:
        vault = Path(tmp) / "Vault"
        build(vault, args.projects, args.tasks, args.artifacts)
        config_file = Path(tmp) / "routine.yaml"
        config_file.write_text(f"vault: {vault}\nmodels: {{general: {{model: 'mistral:7b-instruct-q4_K_M'}}}}\n")
        config = load_config(config_file)
        agent = load_agents(config)[0]["builder"]
        times = []
        for _ in range(args.rounds):
            start = time.perf_counter()
            access = resolve(config, agent)
            times.append(time.perf_counter() - start)
        notes = args.projects * (1 + args.artifacts)
        print(f"vault: {args.projects} projects, {args.projects * args.tasks} task lines, {notes} notes in case files")
        print(f"resolve: median {statistics.median(times) * 1000:.1f} ms, max {max(times) * 1000:.1f} ms "
              f"({len(access.writes)} write globs, {len(access.denied)} artifacts denied)")

if __name__ == "__main__":
    main()
