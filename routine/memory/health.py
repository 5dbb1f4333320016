"""Is the index on disk fit to use? Decided before this process opens it.

The index is a cache of the vault, so the answer to any doubt is a rebuild, never a crash:
- no index, or one made by another format or embedding model: rebuild;
- left open by a process that died (kill -9, power cut: the ``open-by`` marker is still
  there) or made by another chromadb version: open it in a *child process* first, because
  chromadb can segfault on a truncated vector segment, and that must not kill the daemon.
  A child that crashes, hangs or finds the store unable to find its own vectors means rebuild.

``python -m routine.memory.health FOLDER`` is that child.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import TypedDict

from routine.atomicfile import replace
from routine.jsonvalue import Parsed
from routine.memory.store import ChromaStore

PROBE_TIMEOUT = 300.0
MARKER = "open-by"  # present while a process has the index open for writing
META = "meta.json"


@dataclass(frozen=True)
class Verdict:
    usable: bool
    reason: str = ""  # why not, or what was checked (for the log)
    unclean: bool = False  # left open by a process that died: check its contents after opening


def chromadb_version() -> str:
    try:
        return metadata.version("chromadb")
    except metadata.PackageNotFoundError:
        return "unknown"


class IndexMeta(TypedDict):
    """What an index folder records of how it was built (``META``): another value means rebuild."""

    format: int
    embedder: str
    chunk_chars: int
    chromadb: str


class IndexDescription(TypedDict):
    """An index as `routine index --status` and the worker describe it."""

    notes: int
    chunks: int
    embedding_model: str
    folder: str


def read_meta(folder: Path) -> Parsed | None:
    try:
        meta: Parsed = json.loads((folder / META).read_text(encoding="utf-8"))
        return meta
    except (OSError, ValueError):
        return None


def write_meta(folder: Path, meta: IndexMeta) -> None:
    replace(folder / META, json.dumps(meta, indent=2))


def examine(folder: Path, expected: IndexMeta) -> Verdict:
    """Whether the index in ``folder`` can be opened; ``expected`` is the meta it must have."""
    meta = read_meta(folder)
    if meta is None:
        return Verdict(False, "missing" if not folder.exists() else "incomplete (no meta.json)")
    for key in ("format", "embedder", "chunk_chars"):
        if meta.get(key) != expected.get(key):
            return Verdict(False, f"made with {key} {meta.get(key)!r}, not {expected.get(key)!r}")
    unclean = (folder / MARKER).exists()
    if not unclean and meta.get("chromadb") == expected.get("chromadb"):
        return Verdict(True)
    why = "left open by a process that stopped abruptly" if unclean else \
        f"made by chromadb {meta.get('chromadb')}, now {expected.get('chromadb')}"
    problem = probe(folder / "chroma")
    if problem:
        return Verdict(False, f"{why}, and {problem}")
    return Verdict(True, why, unclean=unclean)


def probe(chroma_folder: Path) -> str | None:
    """Open the vector store in a child process; None when it answers sensibly."""
    try:
        proc = subprocess.run([sys.executable, "-m", "routine.memory.health", str(chroma_folder)],
                              capture_output=True, text=True, timeout=PROBE_TIMEOUT, env=_child_env())
    except subprocess.TimeoutExpired:
        return f"opening its vector store hung for {PROBE_TIMEOUT:.0f}s"
    if proc.returncode < 0:
        return f"opening its vector store crashed (signal {-proc.returncode})"
    if proc.returncode != 0:
        last = (proc.stdout.strip() or proc.stderr.strip() or "no detail").splitlines()[-1]
        return f"its vector store is damaged ({last[:300]})"
    return None


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    # The child must import this very routine, also from a checkout that is not installed.
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def main(argv: list[str]) -> int:
    store = ChromaStore(Path(argv[0]))
    try:
        problem = store.self_check()
    except Exception as exc:  # any failure to read is a damaged store
        problem = f"{type(exc).__name__}: {exc}"
    finally:
        try:
            store.close()
        except Exception:
            pass
    print(json.dumps({"problem": problem}))
    return 0 if problem is None else 3


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
