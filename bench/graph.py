"""Benchmark: the knowledge graph on a generated vault.

In process: a first build of the whole vault, a warm start from the cache, one changed note
(how many notes were read, how long), and writing every canvas. Through a running daemon: the
time from saving a task's new assignee to the project canvas showing it.

    make bench-graph        # or: .venv/bin/python bench/graph.py [--notes 5000] [--daemon-notes 1000] [--rounds 10]
    .venv/bin/python bench/graph.py --hub-only   # the pilot's canvases and the 27-card project with a hub
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

AGENTS = ["Builder", "Research", "Planner", "Scribe", "Critic"]


def generate(vault: Path, notes: int, rng: random.Random) -> None:
    """Projects (a home note, tasks, artifacts), people, OKRs and daily notes linking them: about ``notes``."""
    projects = max(2, notes // 100)
    people = [f"Person {i}" for i in range(max(5, notes // 100))]
    written = 0

    def put(rel: str, text: str) -> None:
        nonlocal written
        path = vault / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written += 1

    put("Plans/OKRs.md", "# OKRs\n" + "".join(f"## Objective {o}: grow\n" + "".join(
        f"- KR {o}.{k}: a number — current 1 / target 9\n" for k in range(1, 4)) for o in range(1, 4)))
    for person in people:
        put(f"People/{person}.md", "---\ntype: person\n---\n")
    per_project = max(1, (notes - written - notes // 3) // projects)
    for p in range(projects):
        name = f"Project {p}"
        members = rng.sample(people, 3) + rng.sample(AGENTS, 2)
        put(f"Projects/{name}/{name}.md", "---\ntype: project\nstatus: active\n"
            f"manager: \"[[Planner]]\"\nmembers: {json.dumps([f'[[{m}]]' for m in members])}\n"
            f"key_results: [\"[[OKRs#KR {rng.randint(1, 3)}.{rng.randint(1, 3)}]]\"]\n---\n# {name}\n")
        put(f"Projects/{name}/Tasks.md", "# Tasks\n" + "".join(
            f"- [ ] Task {t} of {name} [assignee:: [[{rng.choice(members)}]]]\n" for t in range(8)))
        for a in range(per_project - 2):
            source = f"Artifact {p}-{a - 1}" if a else "Datasheet"
            put(f"Projects/{name}/Artifact {p}-{a}.md", "---\ntype: artifact\nartifact_type: intellectual\n"
                f"owner: \"[[{rng.choice(members)}]]\"\nderived_from: [\"[[{source}]]\"]\n---\nSee [[{name}]].\n")
    put("Research/Datasheet.md", "Cells.\n")
    day = 0
    while written < notes:
        links = " ".join(f"[[Project {rng.randrange(projects)}]]" for _ in range(3))
        put(
            f"Daily/2026-{1 + day // 28:02d}-{1 + day % 28:02d}-{day}.md",
            f"Worked on {links} with [[{rng.choice(people)}]].\n- [ ] Follow up [assignee:: "
            f"[[{rng.choice(AGENTS)}]]]\n",
        )
        day += 1


def in_process(notes: int) -> None:
    from routine.graph.cache import GraphCache
    from routine.graph.publish import CanvasWriter

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        vault = tmp / "Vault"
        generate(vault, notes, random.Random(5))
        for agent in AGENTS:
            (vault / "Agents").mkdir(exist_ok=True)
            (vault / f"Agents/{agent}.md").write_text(f"---\nagent: {agent.lower()}\n---\n")
        started = time.perf_counter()
        cache = GraphCache(vault, tmp / "graph.sqlite3")
        stats = cache.reconcile()
        build = time.perf_counter() - started
        g = cache.graph.g
        print(f"first build: {stats.notes} notes → {g.number_of_nodes()} nodes, {g.number_of_edges()} edges "
              f"in {build:.2f}s")
        cache.close()
        started = time.perf_counter()
        warm = GraphCache(vault, tmp / "graph.sqlite3")
        again = warm.reconcile()
        print(f"warm start from the cache: {time.perf_counter() - started:.2f}s ({again.parsed} notes read)")
        writer = CanvasWriter(vault, tmp / "canvases.json")
        started = time.perf_counter()
        written = writer.refresh(warm.graph)
        print(f"all canvases, first write: {len(written)} canvases in {time.perf_counter() - started:.2f}s")
        legibility(vault, "the generated vault")
        times, parsed = [], []
        for round_ in range(10):
            tasks = vault / f"Projects/Project {round_}/Tasks.md"
            tasks.write_text(tasks.read_text().replace("[[", "[[Person 0]] [[", 1))
            before = warm.parsed
            started = time.perf_counter()
            warm.update_paths([tasks.relative_to(vault).as_posix()])
            times.append(time.perf_counter() - started)
            parsed.append(warm.parsed - before)
        print(f"one changed note: median {statistics.median(times) * 1000:.1f} ms, max {max(times) * 1000:.1f} ms; "
              f"notes read per change: {sorted(set(parsed))}")
        started = time.perf_counter()
        written = writer.refresh(warm.graph)
        print(f"canvases after those changes: {len(written)} rewritten in {time.perf_counter() - started:.2f}s")
        for what, rel in (
            ("an artifact", "Projects/Project 3/Artifact 3-1.md"),
            ("a task line", "Projects/Project 4/Tasks.md"),
        ):
            note = vault / rel
            note.write_text(note.read_text().replace("[[", "[[Person 1]] [[", 1))
            started = time.perf_counter()
            warm.update_paths([rel])
            written = writer.refresh(warm.graph)
            print(f"one saved note ({what}) to graph and canvases: {(time.perf_counter() - started) * 1000:.0f} ms "
                  f"({len(written)} canvases rewritten: {', '.join(Path(w).stem for w in written)})")
        warm.close()


def legibility(vault: Path, what: str) -> None:
    """Each canvas as Obsidian draws it: crossings, lines through cards, text that overflows, missing files."""
    from routine.graph.legibility import measure

    print(f"canvases of {what} (as drawn):")
    for path in sorted((vault / "Routine/Graphs").glob("*.canvas")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        print(f"  {path.stem:32} {measure(doc, lambda rel: (vault / rel).is_file()).line()}")


def pilot() -> None:
    """The pilot project of the tests (tests/graph_vault.py): the figures the issue's acceptance names."""
    from routine.graph.cache import GraphCache
    from routine.graph.publish import CanvasWriter

    sys.path.insert(0, str(ROOT / "tests"))
    from graph_vault import write_pilot

    with tempfile.TemporaryDirectory() as tmp:
        vault = Path(tmp) / "Vault"
        write_pilot(vault)
        cache = GraphCache(vault, Path(tmp) / "graph.sqlite3")
        cache.reconcile()
        started = time.perf_counter()
        written = CanvasWriter(vault, Path(tmp) / "canvases.json").refresh(cache.graph)
        print(f"pilot vault: {len(written)} canvases in {time.perf_counter() - started:.2f}s")
        legibility(vault, "the pilot vault")
        cache.close()


def hub_project() -> None:
    """The 27-card project with a hub (tests/graph_vault.py HUB_PROJECT): its canvas's figures, then
    the same project with its agents named otherwise (names set the first order of the cards)."""
    from routine.graph.cache import GraphCache
    from routine.graph.legibility import measure
    from routine.graph.publish import CanvasWriter

    sys.path.insert(0, str(ROOT / "tests"))
    from graph_vault import write_hub_project

    print("a 27-card project with a hub (Project Harbor), as drawn:")
    for names in (("Pricer", "Scout"), ("Builder", "Research"), ("Ana", "Zed"), ("Quill", "Atlas"),
                  ("Critic", "Planner"), ("Mole", "Hawk")):
        with tempfile.TemporaryDirectory() as tmp:
            vault = Path(tmp) / "Vault"
            write_hub_project(vault)
            for old, new in zip(("Pricer", "Scout"), names, strict=True):
                (vault / f"Agents/{old}.md").rename(vault / f"Agents/{new}.md")
                for note in vault.rglob("*.md"):
                    note.write_text(note.read_text(encoding="utf-8").replace(f"[[{old}]]", f"[[{new}]]"),
                                    encoding="utf-8")
            cache = GraphCache(vault, Path(tmp) / "graph.sqlite3")
            cache.reconcile()
            started = time.process_time()
            CanvasWriter(vault, Path(tmp) / "canvases.json").refresh(cache.graph)
            cpu = time.process_time() - started
            doc = json.loads((vault / "Routine/Graphs/Project Harbor.canvas").read_text(encoding="utf-8"))
            print(f"  agents {' and '.join(names):20} {measure(doc, lambda rel, v=vault: (v / rel).is_file()).line()} "
                  f"(all canvases: {cpu:.2f}s CPU)")
            cache.close()


def through_daemon(notes: int, rounds: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        env = {
            **os.environ,
            "ROUTINE_CONFIG": str(tmp / "config/routine.yaml"),
            "ROUTINE_STATE_DIR": str(tmp / "state"),
            "ROUTINE_RUNTIME_DIR": str(tmp / "run"),
            "PYTHONPATH": str(ROOT),
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        }
        subprocess.run([sys.executable, "-m", "routine", "init", str(tmp / "Vault")], env=env, check=True,
                       capture_output=True)
        (tmp / "config/schedules/daily.yaml").write_text("triggers: []\n")
        (tmp / "config/schedules/weekly.yaml").unlink()
        vault = tmp / "Vault"
        generate(vault, notes, random.Random(7))
        canvas = vault / "Routine/Graphs/Project Project 0.canvas"
        with open(tmp / "daemon.log", "wb") as log:
            proc = subprocess.Popen([sys.executable, "-m", "routine", "run"], env=env, stdout=log,
                                    stderr=subprocess.STDOUT)
        try:
            started = time.monotonic()
            wait(canvas.exists, 300)
            print(f"daemon start to first canvases ({notes} notes): {time.monotonic() - started:.1f}s")
            latencies = []
            tasks = vault / "Projects/Project 0/Tasks.md"
            for round_ in range(rounds):
                person = f"Person {round_ % 5}"
                text = tasks.read_text()
                first = text.index("[assignee:: [[") + len("[assignee:: [[")
                tasks.write_text(text[:first] + person + text[text.index("]]", first):])
                started = time.monotonic()
                wait(lambda p=person: assigned(canvas, "Task 0 of") == f"People/{p}.md", 60)
                latencies.append(time.monotonic() - started)
            print(
                f"saved assignee → graph and canvas through the daemon: median {statistics.median(latencies):.2f}s, "
                f"max {max(latencies):.2f}s over {rounds} saves (the watcher's settle time is 0.4s of it)"
            )
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=120)
            except subprocess.TimeoutExpired:
                proc.kill()
                print("the daemon did not stop within 120s; its log ends:\n" +
                      "\n".join((tmp / "daemon.log").read_text().splitlines()[-15:]))


def assigned(canvas: Path, task: str) -> str | None:
    try:
        doc = json.loads(canvas.read_text())
    except (OSError, ValueError):
        return None
    by_id = {n["id"]: n for n in doc["nodes"]}
    for edge in doc["edges"]:  # a task's line to a person (unlabelled: the colour and direction say it)
        person = by_id[edge["toNode"]].get("file", "")
        if task in by_id[edge["fromNode"]].get("text", "") and person.startswith("People/"):
            return person
    return None


def wait(predicate, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.02)
    raise SystemExit(f"timed out after {timeout}s")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--notes", type=int, default=5000)
    ap.add_argument("--daemon-notes", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--hub-only", action="store_true", help="only the pilot's and the hub project's canvases")
    args = ap.parse_args()
    pilot()
    hub_project()
    if args.hub_only:
        return 0
    in_process(args.notes)
    if args.daemon_notes:
        through_daemon(args.daemon_notes, args.rounds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
