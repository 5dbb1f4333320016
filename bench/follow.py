"""Benchmark: how long after a note is saved the running daemon's search finds it.

The person-visible path: the file is written → inotify → the watcher's settle time → the index
feed → embedding → ranked by a search through the control socket. A daemon runs on a small
generated vault with the shipped MiniLM (warm after the first note); each round writes a note
with a new sentence and polls the daemon's search until it ranks that note first.

    make bench-follow        # or: .venv/bin/python bench/follow.py [--rounds 20] [--notes 300]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TOPICS = ["kiln thermocouple", "battery supplier", "garden irrigation", "invoice reminder", "bike brakes",
          "tax return", "roof gutter", "piano lesson", "server backup", "passport renewal", "paint order"]


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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--notes", type=int, default=300)
    args = ap.parse_args()
    rng = random.Random(3)
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
        notes = tmp / "Vault" / "Projects"
        for i in range(args.notes):
            (notes / f"Note {i:04d}.md").write_text(f"# Note {i}\n\n{rng.choice(TOPICS)} {rng.choice(TOPICS)} {i}\n")
        daemon = subprocess.Popen([sys.executable, "-m", "routine", "run"], env=env, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        sock = tmp / "run" / "control.sock"
        try:
            while not sock.exists():
                time.sleep(0.1)
            started = time.monotonic()
            ask(sock, {"op": "search", "query": "warm up", "k": 1})  # waits for the first index build
            print(f"daemon up, index built and model warm in {time.monotonic() - started:.1f}s "
                  f"({args.notes + 12} notes)")
            latencies = []
            for r in range(args.rounds):
                sentence = f"The {rng.choice(TOPICS)} plan number {r} needs a {rng.choice(TOPICS)} check before noon."
                path = notes / f"Fresh {r:03d}.md"
                written = time.monotonic()
                path.write_text(f"# Fresh {r}\n\n{sentence}\n")
                while True:
                    hits = ask(sock, {"op": "search", "query": sentence, "k": 1}).get("result") or []
                    if hits and hits[0]["path"] == f"Projects/Fresh {r:03d}.md":
                        break
                    if time.monotonic() - written > 30:
                        print(f"round {r}: not found after 30 s")
                        break
                    time.sleep(0.02)
                latencies.append(time.monotonic() - written)
                time.sleep(0.5)
        finally:
            daemon.send_signal(signal.SIGTERM)
            daemon.wait(60)
    latencies.sort()
    p95 = latencies[min(len(latencies) - 1, int(0.95 * len(latencies)))]
    print(
        f"save → found by the daemon's search, {len(latencies)} rounds: p50 "
        f"{statistics.median(latencies) * 1000:.0f} ms, "
        f"p95 {p95 * 1000:.0f} ms, max {latencies[-1] * 1000:.0f} ms"
    )
    print("(includes the watcher's 0.4 s settle time, which makes one save one change)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
