"""Benchmark: what an idle daemon costs the box — CPU seconds and resident memory (RSS).

Measured twice on a small vault with the shipped MiniLM and the stand-in Ollama: idle after
start-up (the first index pass included), and idle after a later index pass (a note saved,
followed by the index). Each idle window is `--idle` seconds with nothing to do; CPU is the
daemon's user+system time over the window (/proc/PID/stat), RSS its resident set at the end
(/proc/PID/status). The goal is under 200 MB idle and no busy polling.

    make bench-idle          # or: .venv/bin/python bench/idle.py [--idle 60] [--notes 12]
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


def idle_window(pid: int, seconds: float) -> tuple[float, float]:
    before = cpu_seconds(pid)
    time.sleep(seconds)  # a benchmark's measuring window, not a test's wait
    return cpu_seconds(pid) - before, rss_mb(pid)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--idle", type=float, default=60.0, help="seconds of each idle window (default 60)")
    ap.add_argument("--notes", type=int, default=0, help="notes to add to the vault skeleton (default 0)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp, FakeOllama(max_loaded=3, load_delay=0.01) as ollama:
        tmp = Path(tmp)
        env = {**os.environ, "ROUTINE_CONFIG": str(tmp / "config/routine.yaml"), "ROUTINE_STATE_DIR": str(tmp / "state"),
               "ROUTINE_RUNTIME_DIR": str(tmp / "run"), "PYTHONPATH": str(ROOT), "LITELLM_LOCAL_MODEL_COST_MAP": "True",
               "OLLAMA_HOST": ollama.url}
        subprocess.run([sys.executable, "-m", "routine", "init", str(tmp / "Vault")], env=env, check=True, capture_output=True)
        for i in range(args.notes):
            (tmp / "Vault" / "Projects" / f"Note {i:04d}.md").write_text(f"# Note {i}\n\nThe battery supplier, item {i}.\n")
        daemon = subprocess.Popen([sys.executable, "-m", "routine", "run"], env=env, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        sock = tmp / "run" / "control.sock"
        try:
            while not sock.exists():
                time.sleep(0.1)
            started = time.monotonic()
            ask(sock, {"op": "index"})  # the start-up pass
            print(f"daemon up and the vault indexed in {time.monotonic() - started:.1f}s")
            cpu, rss = idle_window(daemon.pid, args.idle)
            print(f"idle after start-up:      {cpu:.2f} CPU-s in {args.idle:.0f}s, RSS {rss:.0f} MB")
            (tmp / "Vault" / "Inbox" / "Fresh.md").write_text("# Fresh\n\nA note saved while the daemon runs.\n")
            ask(sock, {"op": "index"})
            cpu, rss = idle_window(daemon.pid, args.idle)
            print(f"idle after an index pass: {cpu:.2f} CPU-s in {args.idle:.0f}s, RSS {rss:.0f} MB")
        finally:
            daemon.terminate()
            daemon.wait(60)
    return 0


if __name__ == "__main__":
    sys.exit(main())
