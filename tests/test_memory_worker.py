"""Idle means light: the daemon's search index lives in a worker process that exits when idle.

The daemon itself never maps chromadb or torch; its worker does, answers searches, leaves after
`memory.unload_after` idle seconds and comes back on the next search. A killed worker is
replaced; a broken embedding model is one clear sentence, not a hang.
"""

from __future__ import annotations

import json
import os
import re
import signal
from pathlib import Path

import pytest

from test_daemon import daemon, only_schedule, wait_for

pytestmark = pytest.mark.real_embeddings  # the worker loads the shipped MiniLM (torch): that is under test

HEAVY_LIBRARIES = ("libtorch", "chromadb", "onnxruntime")  # shared objects, as /proc/PID/maps names them
WORKER_PEAK_MB = 400  # the worker's most resident memory while indexing and searching (issue 47)
NOTE = "# Kiln\n\nThe kiln controller firmware needs a thermocouple calibration.\n"


def mapped_heavy(pid: int) -> set[str]:
    text = Path(f"/proc/{pid}/maps").read_text()
    return {name for name in HEAVY_LIBRARIES if name in text}


def workers(pid: int) -> list[int]:
    """The daemon's child processes that are its index worker."""
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            children = (task / "children").read_text().split()
        except OSError:  # the thread ended meanwhile
            continue
        for child in children:
            try:
                cmdline = Path(f"/proc/{child}/cmdline").read_bytes()
            except OSError:  # it exited meanwhile
                continue
            if b"routine.memory.worker" in cmdline and int(child) not in found:
                found.append(int(child))
    return found


def started_workers(home) -> list[str]:
    return re.findall(r"started the search index's worker \(process (\d+)\)", (home.root / "daemon.log").read_text())


def search(home, query: str) -> list[str]:
    return [h["path"] for h in json.loads(home.run("search", query, "--json", check=True).stdout)]


def peak_mb(pid: int) -> float:
    """The process's most resident memory so far (VmHWM, /proc/PID/status)."""
    line = next(ln for ln in Path(f"/proc/{pid}/status").read_text().splitlines() if ln.startswith("VmHWM:"))
    return int(line.split()[1]) / 1024


def test_an_indexed_daemon_holds_no_torch_or_chromadb_and_its_worker_leaves_when_idle(initialised, ollama):
    home = initialised
    only_schedule(home, "blocks: {}\n")
    home.config.write_text(home.config.read_text() + "\nmemory: {unload_after: 2}\n")  # the shipped MiniLM
    (home.vault / "Projects").mkdir(exist_ok=True)
    (home.vault / "Projects" / "Kiln.md").write_text(NOTE)
    with daemon(home) as proc:
        assert json.loads(home.run("index", "--json", check=True).stdout)["notes"] >= 1
        assert search(home, "thermocouple calibration of the kiln")[:1] == ["Projects/Kiln.md"]
        assert mapped_heavy(proc.pid) == set(), "the daemon itself loaded torch or chromadb"
        worker = wait_for(lambda: workers(proc.pid), 5, "the index worker")  # alive: idle time not yet up
        # the measurement sees them where they are; the shipped model runs under onnxruntime, not torch
        assert mapped_heavy(worker[0]) == {"chromadb", "onnxruntime"}
        assert peak_mb(worker[0]) <= WORKER_PEAK_MB, f"the index worker peaked at {peak_mb(worker[0]):.0f} MB"

        wait_for(lambda: not workers(proc.pid), 30, "the idle worker to exit")
        assert mapped_heavy(proc.pid) == set()
        assert search(home, "thermocouple calibration of the kiln")[:1] == ["Projects/Kiln.md"]  # back on demand
        first, *later = started_workers(home)
        assert later and later[-1] != first
    log = (home.root / "daemon.log").read_text()
    assert "Traceback" not in log and "worker exited after 2s idle" in log


def test_a_killed_worker_is_replaced_by_the_next_search(initialised, ollama):
    home = initialised
    only_schedule(home, "blocks: {}\n")
    (home.vault / "Projects").mkdir(exist_ok=True)
    (home.vault / "Projects" / "Kiln.md").write_text(NOTE)
    with daemon(home) as proc:
        assert search(home, "thermocouple calibration of the kiln")[:1] == ["Projects/Kiln.md"]
        (worker,) = workers(proc.pid)  # the default unload_after keeps it for minutes
        os.kill(worker, signal.SIGKILL)
        wait_for(lambda: "worker process stopped unexpectedly" in (home.root / "daemon.log").read_text(), 10,
                 "the daemon to notice")
        assert search(home, "kiln firmware")[:1] == ["Projects/Kiln.md"]
        # /proc lists a child under the thread that started it: read again until the new one is seen.
        wait_for(lambda: workers(proc.pid) not in ([], [worker]), 10, "the new worker among the daemon's children")
        assert proc.poll() is None


def test_a_missing_embedding_model_is_one_sentence_from_the_daemon(initialised, ollama, tmp_path):
    home = initialised
    only_schedule(home, "blocks: {}\n")
    home.config.write_text(home.config.read_text() + f"\nmemory: {{embedding_model: '{tmp_path / 'no-model'}'}}\n")
    with daemon(home):
        proc = home.run("index", process=True, timeout=60)  # the worker's pass fails; the daemon says why
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert "There is no sentence-transformers model in" in proc.stderr and "Traceback" not in proc.stderr
        assert "There is no sentence-transformers model in" in home.run("index", process=True, timeout=60).stderr
    log = (home.root / "daemon.log").read_text()
    assert "search index: There is no sentence-transformers model in" in log, log[-2000:]  # the start-up pass
