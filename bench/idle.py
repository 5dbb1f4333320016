"""Benchmark: what an idle daemon costs the box — CPU seconds and resident memory (RSS).

Measured three times on a small vault with the shipped MiniLM and the stand-in Ollama: idle
after start-up (the first index pass included), idle after a later index pass (a note saved in
Projects/, followed by the index), and idle after a run (a note saved in Inbox/: the default
schedule's trigger runs the librarian, which loads LiteLLM into the daemon). The search index
lives in a worker process that exits after
`memory.unload_after` idle seconds (default 120), so each phase reports the daemon and its
worker apart: right after the pass, then at the end of an idle window of `--idle` seconds
(default: `--unload-after` + 30, so the worker has had time to leave). CPU is user+system time
over the window (/proc/PID/stat; the worker's until it exited), RSS the resident set
(/proc/PID/status). The goal: the daemon under 200 MB idle, the worker gone, no busy polling.

    make bench-idle          # or: .venv/bin/python bench/idle.py [--idle 150] [--unload-after 120] [--notes 12]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from fake_ollama import FakeOllama  # noqa: E402


def ask(sock_path: Path, message: dict) -> dict:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(str(sock_path))
        s.sendall((json.dumps(message) + "\n").encode())
        with s.makefile("r") as stream:
            for line in stream:
                event = json.loads(line)
                if event.get("done"):
                    return event
    return {}


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def worker_of(pid: int) -> int | None:
    """The daemon's index worker (a child running routine.memory.worker), if one is alive."""
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            children = (task / "children").read_text().split()
        except OSError:  # the thread ended meanwhile
            continue
        for child in children:
            try:
                if b"routine.memory.worker" in Path(f"/proc/{child}/cmdline").read_bytes():
                    return int(child)
            except OSError:
                continue
    return None


def trigger_run_done(journal: Path) -> bool:
    import sqlite3

    db = sqlite3.connect(journal, timeout=10)
    try:
        return bool(db.execute("SELECT 1 FROM runs WHERE block LIKE 'trigger:%' AND ended_at IS NOT NULL").fetchone())
    except sqlite3.Error:
        return False
    finally:
        db.close()


def snapshot(label: str, daemon: int) -> None:
    worker = worker_of(daemon)
    alive = f"alive, RSS {rss_mb(worker):.0f} MB" if worker else "not running"
    print(f"{label:<30} daemon RSS {rss_mb(daemon):.0f} MB; worker {alive}")


def idle_window(label: str, daemon: int, seconds: float) -> None:
    """Sample once a second (the benchmark's own clock, not a test's wait) for ``seconds``."""
    before, worker = cpu_seconds(daemon), worker_of(daemon)
    worker_cpu, worker_start, exited_after = 0.0, cpu_seconds(worker) if worker else 0.0, None
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        time.sleep(1.0)
        if worker and exited_after is None:
            try:
                worker_cpu = cpu_seconds(worker) - worker_start
            except OSError:
                exited_after = time.monotonic() - started
    cpu = cpu_seconds(daemon) - before
    gone = (
        "no worker"
        if worker is None
        else (
            f"worker exited after {exited_after:.0f}s idle ({worker_cpu:.2f} CPU-s)"
            if exited_after is not None
            else f"worker still alive ({worker_cpu:.2f} CPU-s)"
        )
    )
    print(f"{label:<30} daemon {cpu:.2f} CPU-s in {seconds:.0f}s; {gone}")
    snapshot(f"{label}, at the end:", daemon)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--unload-after", type=float, default=120.0, help="memory.unload_after to set (default 120)")
    ap.add_argument("--idle", type=float, default=None, help="seconds of each idle window (default unload-after + 30)")
    ap.add_argument("--notes", type=int, default=0, help="notes to add to the vault skeleton (default 0)")
    args = ap.parse_args()
    idle = args.idle if args.idle is not None else args.unload_after + 30
    with tempfile.TemporaryDirectory() as tmp, FakeOllama(max_loaded=3, load_delay=0.01) as ollama:
        tmp = Path(tmp)
        env = {
            **os.environ,
            "ROUTINE_CONFIG": str(tmp / "config/routine.yaml"),
            "ROUTINE_STATE_DIR": str(tmp / "state"),
            "ROUTINE_RUNTIME_DIR": str(tmp / "run"),
            "PYTHONPATH": str(ROOT),
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "OLLAMA_HOST": ollama.url,
        }
        subprocess.run(
            [sys.executable, "-m", "routine", "init", str(tmp / "Vault")], env=env, check=True, capture_output=True
        )
        config = tmp / "config" / "routine.yaml"
        config.write_text(config.read_text() + f"\nmemory: {{unload_after: {args.unload_after:g}}}\n")
        for i in range(args.notes):
            (tmp / "Vault" / "Projects" / f"Note {i:04d}.md").write_text(
                f"# Note {i}\n\nThe battery supplier, item {i}.\n"
            )
        log = open(tmp / "daemon.log", "wb")
        daemon = subprocess.Popen(
            [sys.executable, "-m", "routine", "run"], env=env, stdout=log, stderr=subprocess.STDOUT
        )
        sock = tmp / "run" / "control.sock"
        try:
            while not sock.exists():
                time.sleep(0.1)
            started = time.monotonic()
            ask(sock, {"op": "index"})  # the start-up pass
            print(f"daemon up and the vault indexed in {time.monotonic() - started:.1f}s "
                  f"(memory.unload_after {args.unload_after:g}s)")
            snapshot("after start-up:", daemon.pid)
            idle_window("idle after start-up", daemon.pid, idle)
            (tmp / "Vault" / "Projects" / "Fresh.md").write_text("# Fresh\n\nA note saved while the daemon runs.\n")
            ask(sock, {"op": "index"})
            snapshot("after an index pass:", daemon.pid)
            idle_window("idle after an index pass", daemon.pid, idle)
            (tmp / "Vault" / "Inbox" / "Call notes.md").write_text("# Call notes\n\nThe supplier called.\n")
            deadline = time.monotonic() + 300
            while not trigger_run_done(tmp / "state" / "journal.sqlite3") and time.monotonic() < deadline:
                time.sleep(0.2)
            snapshot("after a run (inbox trigger):", daemon.pid)
            idle_window("idle after a run", daemon.pid, idle)
        except Exception:
            print((tmp / "daemon.log").read_text()[-3000:])  # why the daemon went
            raise
        finally:
            daemon.terminate()
            daemon.wait(60)
            log.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
