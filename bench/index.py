"""Benchmark of the vault search index (`make bench-index`): prints figures, asserts nothing.

On a generated vault (default 5,000 notes of realistic sizes, with frontmatter, headings,
tags and wikilinks, in the default folder layout) it measures, with the configured embedding
model (default: the shipped all-MiniLM-L6-v2):

- full index: from nothing, notes and chunks per second;
- a no-change reconcile: warm (what the daemon pays) and as a cold `routine index` process;
- one-note update latency: from the write until a search finds the new text (model warm),
  through ``update_paths`` (a watcher) and through ``reconcile`` (no watcher);
- query latency p50 and p95, whole vault and scoped to an agent's reads;
- peak memory (RSS) of this process and of the cold `routine index`.

    python bench/index.py [--notes 5000] [--model NAME|PATH|ollama:MODEL] [--dir DIR] [--keep]

With --dir an existing generated vault and its index are reused (the full index is skipped
when it is already complete); --keep leaves the temporary folder for a later --dir.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

WORDS = """the a of to and in is that for it with as on be this by are from at or an have not was
will can all more about one their which when we if my our what so up out time day week plan
work note project meeting call email draft review budget deadline supplier battery order test
build design idea garden house family health sleep run read book paper model data agent code
script server deploy bug fix release client team ana ben chris lisa tom market price cost risk
goal result key progress blocked waiting done next first last new old small big quick slow
because should could would must need want try start finish write check ask send share move
tomorrow today yesterday morning evening monday friday spring summer autumn winter year month""".split()
FOLDERS = ["Daily", "Projects/Van", "Projects/Home Lab", "Projects/Garden", "Projects/Thesis", "Research",
           "Inbox", "Archive", "Weekly", "Plans", "Private"]
HEADINGS = ["Notes", "Plan", "Log", "Ideas", "Risks", "Decisions", "Next actions", "Summary", "Questions",
            "Sources", "Budget", "Meeting", "Follow-up", "Review"]
ANIMALS = "zebra giraffe otter walrus lemur falcon beaver badger heron gecko moose panda koala bison camel " \
    "puffin iguana lynx tapir yak".split()
INSTRUMENTS = "violin tuba banjo cello harp oboe sitar ukulele bagpipe marimba flute trombone accordion " \
    "harmonica xylophone bassoon mandolin clarinet didgeridoo theremin".split()
CITIES = "Lisbon Oslo Nairobi Lima Hanoi Quito Tbilisi Reykjavik Dakar Manila Perth Montreal Krakow Seville " \
    "Kyoto Havana Tunis Bergen Cusco Tallinn".split()
FRUITS = "mango kiwi papaya lychee guava durian quince persimmon fig pomegranate apricot plum rambutan " \
    "kumquat tamarind jackfruit starfruit medlar loquat feijoa".split()
TAGS = ["project", "idea", "todo", "research", "health", "family", "money", "work", "reading"]


def sentence(rng: random.Random, names: list[str]) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(6, 22))]
    if rng.random() < 0.15 and names:
        words.insert(rng.randrange(len(words)), f"[[{rng.choice(names)}]]")
    if rng.random() < 0.05:
        words.append(f"#{rng.choice(TAGS)}")
    return " ".join(words).capitalize() + "."


def note_text(rng: random.Random, title: str, names: list[str]) -> str:
    parts = [f"---\ntags: [{', '.join(rng.sample(TAGS, rng.randint(0, 3)))}]\n---\n", f"# {title}\n\n"]
    size = rng.lognormvariate(0, 0.8)  # most notes short, a few long
    for heading in rng.sample(HEADINGS, max(1, min(6, round(size * 2.5)))):
        parts.append(f"## {heading}\n\n")
        for _ in range(rng.randint(1, max(1, round(size * 3)))):
            if rng.random() < 0.3:
                parts.append("\n".join(f"- [ ] {sentence(rng, names)}" for _ in range(rng.randint(2, 5))) + "\n\n")
            else:
                parts.append(" ".join(sentence(rng, names) for _ in range(rng.randint(1, 4))) + "\n\n")
    return "".join(parts)


def generate(vault: Path, n: int, seed: int = 5) -> None:
    rng = random.Random(seed)
    names = [f"{rng.choice(WORDS).title()} {rng.choice(WORDS)} {i}" for i in range(n)]
    for i, title in enumerate(names):
        folder = "Daily" if i % 5 == 0 else rng.choice(FOLDERS)
        name = f"2026-{1 + i % 12:02d}-{1 + i % 28:02d} {i}" if folder == "Daily" else title
        path = vault / folder / f"{name}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(note_text(rng, name, names), encoding="utf-8")


def peak_mb() -> float:
    """This process's peak resident memory so far (VmHWM), in MB."""
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM")) / 1024


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.2f} s"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=5000)
    parser.add_argument("--model", default=None, help="memory.embedding_model (default: the shipped MiniLM)")
    parser.add_argument("--dir", type=Path, default=None)
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--queries", type=int, default=100)
    args = parser.parse_args()

    base = args.dir or Path(tempfile.mkdtemp(prefix="routine-bench-"))
    vault, state, config_file = base / "Vault", base / "state", base / "routine.yaml"
    os.environ.update(ROUTINE_STATE_DIR=str(state), ROUTINE_CONFIG=str(config_file),
                      ROUTINE_RUNTIME_DIR=str(base / "run"))
    memory = f"\nmemory: {{embedding_model: {json.dumps(args.model)}}}\n" if args.model else ""
    config_file.write_text(
        f"vault: {json.dumps(str(vault))}\nmodels: {{general: ollama_chat/mistral:7b-instruct-q4_K_M}}\n{memory}"
    )
    if not vault.exists():
        started = time.monotonic()
        generate(vault, args.notes)
        print(f"generated {args.notes} notes in {time.monotonic() - started:.1f} s")
    files = [p for p in vault.rglob("*.md")]
    size = sum(p.stat().st_size for p in files)
    print(
        f"vault: {len(files)} notes, {size / 1e6:.1f} MB, median note "
        f"{statistics.median(p.stat().st_size for p in files) / 1e3:.1f} kB"
    )

    from routine.config.loader import load_config
    from routine.memory import VaultIndex

    index = VaultIndex(load_config(config_file)).open()
    try:
        report(index, vault, files)
    finally:
        index.close()
    cold(base)
    print(f"peak memory of this process (index, model, vector table, queries): {peak_mb():.0f} MB")
    if not args.keep and args.dir is None:
        shutil.rmtree(base, ignore_errors=True)
    elif args.keep:
        print(f"kept {base} (reuse with --dir)")
    return 0


def report(index, vault: Path, files: list[Path]) -> None:
    def progress(what, done, total):
        if done == total or done % 500 < 100:
            print(f"  {what}: {done}/{total} notes", file=sys.stderr)

    started = time.monotonic()
    stats = index.reconcile(progress)
    took = time.monotonic() - started
    if stats.added > len(files) // 2:
        print(f"full index: {stats.notes} notes, {stats.chunks} chunks in {took:.1f} s "
              f"({stats.notes / took:.1f} notes/s, {stats.embedded / took:.1f} chunks/s embedded); "
              f"peak memory so far {peak_mb():.0f} MB")
    else:
        print(f"index reused: {stats.notes} notes, {stats.chunks} chunks (caught up in {took:.1f} s)")

    runs = []
    for _ in range(5):
        started = time.monotonic()
        again = index.reconcile()
        runs.append(time.monotonic() - started)
    assert again.embedded == 0
    print(f"no-change reconcile, warm (the daemon's cost): median {ms(statistics.median(runs))}, max {ms(max(runs))}"
          f"  [target < 2 s]")

    rng = random.Random(11)
    index.search("warm up the model", k=1, refresh=False)
    watch, full = [], []
    for i in range(10):
        for latencies, catch_up in ((watch, lambda p: index.update_paths([p])), (full, lambda p: index.reconcile())):
            path = rng.choice(files)
            n = len(watch) + len(full)  # a sentence unlike any other note, and unlike the last ones
            marker = f"The {ANIMALS[n]} played the {INSTRUMENTS[n]} in {CITIES[n]} while eating a {FRUITS[n]}."
            started = time.monotonic()
            with open(path, "a", encoding="utf-8") as f:
                f.write(f"\n## Update {i}\n\n{marker}\n")
            catch_up(path)
            hits = index.search(marker, k=5, refresh=False)
            latencies.append(time.monotonic() - started)
            assert any(h.path == path.relative_to(vault).as_posix() for h in hits), (marker, hits)
    print(f"one-note update, write → searchable, via update_paths (watcher): p50 {ms(statistics.median(watch))}, "
          f"max {ms(max(watch))}  [target < 1 s]")
    print(f"one-note update, write → searchable, via reconcile (no watcher): p50 {ms(statistics.median(full))}, "
          f"max {ms(max(full))}")

    queries = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 6))) for _ in range(100)]
    for label, reads in (("whole vault", None), ("scoped to Projects/**", ["Projects/**"])):
        times = []
        for query in queries:
            started = time.monotonic()
            index.search(query, k=6, reads=reads, refresh=False)
            times.append(time.monotonic() - started)
        print(f"query k=6, {label}: p50 {ms(percentile(times, 0.5))}, p95 {ms(percentile(times, 0.95))}")


# VmHWM, not ru_maxrss: Linux carries ru_maxrss over fork and exec, so a child would report ours.
COLD = (
    "import atexit, runpy, sys; "
    "atexit.register(lambda: sys.stderr.write('peak-rss-kb %s\\n' % [l.split()[1] for l in open('/proc/self/status') "
    "if l.startswith('VmHWM')][0])); "
    "sys.argv = ['routine', 'index', '--json']; runpy.run_module('routine', run_name='__main__', alter_sys=True)"
)


def cold(base: Path) -> None:
    """`routine index` with nothing to do, as a fresh process (no daemon): start-up included."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", COLD], env=env, capture_output=True, text=True)
    took = time.monotonic() - started
    if proc.returncode != 0:
        print(f"`routine index` failed: {proc.stderr.strip()}")
        return
    stats = json.loads(proc.stdout)
    peak = int(proc.stderr.rsplit("peak-rss-kb", 1)[1].split()[0]) / 1024
    print(f"no-change `routine index`, cold process: {took:.2f} s in all, {stats['seconds']:.2f} s of it the "
          f"reconcile; peak memory {peak:.0f} MB (no model loaded)")


if __name__ == "__main__":
    raise SystemExit(main())
