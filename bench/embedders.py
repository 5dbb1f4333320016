"""Benchmark: the shipped all-MiniLM-L6-v2 under sentence-transformers (torch) and under
onnxruntime (what the index worker runs), on the realistic vault of tests/weekvault.py with 30
labelled queries. Prints, for each: the peak resident memory (VmHWM) of a process that indexes
the vault and searches it as the worker does (chromadb included), the time to index, the time
per 1,000 chunks (warm), and recall@5 (each query's labelled notes found among the top five).

    .venv/bin/python bench/embedders.py [sentence-transformers] [onnxruntime]   # default: both
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

BACKENDS = ("sentence-transformers", "onnxruntime")
MONDAY = date(2026, 11, 23)
# A query, and the notes that answer it: a path, or "~phrase" for every note containing the phrase.
QUERIES: list[tuple[str, list[str]]] = [
    ("when does the consulting contract renew", ["Plans/OKRs.md"]),
    ("monthly recurring revenue target", ["Plans/OKRs.md"]),
    ("how fast must the pages load", ["Plans/OKRs.md"]),
    ("no manual watering in december", ["Plans/OKRs.md"]),
    ("how many build-log posts to publish", ["Plans/OKRs.md"]),
    ("which projects are there and what is next for each", ["Plans/Project Map.md"]),
    ("samples of how I write, my tone", ["Plans/My Voice.md"]),
    ("the supplier wanted someone to own the deadline", ["Plans/My Voice.md"]),
    ("install script on the spare Jetson took forty minutes", ["Plans/My Voice.md"]),
    ("supplier portal project tasks and decisions", ["Projects/Atlas/Atlas.md"]),
    ("home-lab assistant project", ["Projects/Beacon/Beacon.md"]),
    ("garden irrigation project", ["Projects/Cedar/Cedar.md"]),
    ("Tomás Ortega from the irrigation shop", ["Projects/Cedar/Cedar.md"]),
    ("Ines Duarte, the first outside tester", ["Projects/Beacon/Beacon.md"]),
    ("Jürgen Weiß on the supplier side", ["Projects/Atlas/Atlas.md"]),
    ("Atlas meeting notes", ["Projects/Atlas/Atlas Meeting Notes.md"]),
    ("Beacon meeting notes", ["Projects/Beacon/Beacon Meeting Notes.md"]),
    ("Cedar meeting notes", ["Projects/Cedar/Cedar Meeting Notes.md"]),
    ("a Slack bot for orders", ["Inbox/Idea 0.md"]),
    ("an article about solar powered valves", ["Inbox/Article on solar valves 1.md"]),
    ("phone call notes with Jürgen", ["Inbox/Call notes with Jürgen 2.md"]),
    ("running Ollama on the NAS", ["Inbox/Try Ollama on the NAS 3.md"]),
    ("how to onboard new suppliers", ["Research/Supplier onboarding.md"]),
    ("Jetson power modes findings", ["Research/Jetson power modes.md"]),
    ("drip irrigation research", ["Research/Drip irrigation.md"]),
    ("Saturday 14 November 2026", ["Daily/2026-11-14.md"]),
    ("Wednesday 18 November 2026", ["Daily/2026-11-18.md"]),
    ("Sunday 22 November 2026", ["Daily/2026-11-22.md"]),
    ("we decided to use Postgres rather than SQLite", ["~Use Postgres, not SQLite"]),
    ("buying the valves from the local shop", ["~Buy valves from the local shop"]),
]


def relevant(vault: Path, labels: list[str]) -> set[str]:
    out = set()
    for label in labels:
        if label.startswith("~"):
            out |= {p.relative_to(vault).as_posix() for p in vault.rglob("*.md") if label[1:] in p.read_text()}
        else:
            out.add(label)
    return out


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(backend: str, tmp: Path) -> dict:
    """One backend in this process: index the vault as the worker does, search, time 1,000 chunks."""
    from routine.config.loader import load_config
    from routine.memory.chunks import chunk_note
    from routine.memory.embedder import OnnxEmbedder, SentenceTransformerEmbedder
    from routine.memory.index import VaultIndex

    config = load_config(tmp / "config" / "routine.yaml")
    state = tmp / f"state-{backend}"
    embedder = (SentenceTransformerEmbedder if backend == BACKENDS[0] else OnnxEmbedder)("all-MiniLM-L6-v2", state, 600)
    started = time.monotonic()
    with VaultIndex(config, state, embedder=embedder) as index:
        stats = index.reconcile()
        indexed_s = time.monotonic() - started
        hits = {q: [h.path for h in index.search(q, k=5)] for q, _ in QUERIES}
    vault = config.vault
    scores = []
    for query, labels in QUERIES:
        want = relevant(vault, labels)
        scores.append(len(want & set(hits[query])) / min(len(want), 5))
    texts = [c.text for p in sorted(vault.rglob("*.md"))
             for c in chunk_note(p.relative_to(vault).as_posix(), p.read_text(), config.memory.chunk_chars)]
    thousand = (texts * (1000 // max(len(texts), 1) + 1))[:1000]
    started = time.monotonic()
    embedder.embed(thousand)
    per_thousand = time.monotonic() - started
    return {"backend": backend, "chunks": len(texts), "notes": getattr(stats, "notes", None), "indexed_s": indexed_s,
            "per_1000_s": per_thousand, "recall_at_5": sum(scores) / len(scores), "peak_mb": peak_mb(),
            "missed": [q for (q, _), s in zip(QUERIES, scores) if s < 1]}


def main() -> int:
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        print(json.dumps(child(sys.argv[2], Path(sys.argv[3]))))
        return 0
    from routine.memory.embedder import exported, shipped_model_dir
    from weekvault import make_vault

    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        env = {**os.environ, "ROUTINE_CONFIG": str(tmp / "config/routine.yaml"), "PYTHONPATH": str(ROOT),
               "ROUTINE_STATE_DIR": str(tmp / "state"), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
        env.pop("ROUTINE_TEST_EMBEDDER", None)
        subprocess.run([sys.executable, "-m", "routine", "init", str(tmp / "Vault")], env=env, check=True,
                       capture_output=True)
        make_vault(tmp / "Vault", MONDAY)
        started = time.monotonic()
        exported(shipped_model_dir(tmp / "state"))  # once, as at a box's first index pass
        print(f"ONNX export of the shipped weights (once, a child process): {time.monotonic() - started:.1f} s")
        backends = [b for b in BACKENDS if b in sys.argv[1:]] or list(BACKENDS)
        for backend in backends:
            shutil.copytree(tmp / "state" / "models", tmp / f"state-{backend}" / "models")
        print(f"{'embedder':<22} {'peak RSS':>9} {'index':>8} {'per 1,000 chunks':>17} {'recall@5':>9}")
        for backend in backends:
            out = subprocess.run([sys.executable, __file__, "--child", backend, str(tmp)], env=env,
                                 capture_output=True, text=True)
            if out.returncode != 0:
                print(f"{backend}: failed\n{out.stderr[-2000:]}")
                continue
            r = json.loads(out.stdout.strip().splitlines()[-1])
            print(f"{backend:<22} {r['peak_mb']:>6.0f} MB {r['indexed_s']:>6.1f} s {r['per_1000_s']:>15.1f} s "
                  f"{r['recall_at_5']:>9.3f}   ({r['chunks']} chunks; below 1: {r['missed']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
