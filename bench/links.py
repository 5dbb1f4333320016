"""Benchmark: a note of many links and the fires after it (issue 46).

`Inbox/Links.md`, one paragraph of N `[[Target i]]` (default 10,000), saved in a vault whose
search index embeds through Ollama (`memory: {embedding_model: 'ollama:nomic-embed-text'}`, the
stand-in Ollama of tests/). The daemon runs; `routine fire planner` goes through it a few times
before the note is saved and a few times after (once the note's own trigger run and index pass are
done), and the wall time of each fire is printed. The goal: the note changes a fire's time by at
most 2x.

    .venv/bin/python bench/links.py [--links 10000] [--fires 3]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from fake_ollama import FakeOllama  # noqa: E402


def ask(sock: Path, message: dict) -> dict:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(str(sock))
        s.sendall((json.dumps(message) + "\n").encode())
        with s.makefile("r") as stream:
            for line in stream:
                event = json.loads(line)
                if event.get("done"):
                    return event
    return {}


def trigger_runs_done(journal: Path) -> int:
    db = sqlite3.connect(journal, timeout=10)
    try:
        return db.execute("SELECT COUNT(*) FROM runs WHERE trigger LIKE 'trigger:%Links.md'"
                          " AND ended_at IS NOT NULL").fetchone()[0]
    except sqlite3.Error:
        return 0
    finally:
        db.close()


def fires(env: dict, count: int, what: str = "planner") -> list[float]:
    took = []
    for _ in range(count):
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "routine", "fire", what], env=env, capture_output=True,
                              text=True, timeout=900)
        took.append(time.monotonic() - started)
        if done.returncode != 0:
            print(done.stdout[-2000:], done.stderr[-2000:])
    return took


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--links", type=int, default=10_000)
    ap.add_argument("--fires", type=int, default=3)
    ap.add_argument("--restart", action="store_true", help="also fire after a restart of the daemon with the note")
    ap.add_argument("--fire", default="planner", help="the block or agent to fire (default: planner)")
    ap.add_argument("--wait", type=float, default=600, help="seconds to wait for the note's trigger run")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp, FakeOllama(max_loaded=3, load_delay=0.01) as ollama:
        tmp = Path(tmp)
        env = {**os.environ, "ROUTINE_CONFIG": str(tmp / "config/routine.yaml"),
               "ROUTINE_STATE_DIR": str(tmp / "state"), "ROUTINE_RUNTIME_DIR": str(tmp / "run"),
               "PYTHONPATH": str(ROOT), "LITELLM_LOCAL_MODEL_COST_MAP": "True", "OLLAMA_HOST": ollama.url}
        subprocess.run([sys.executable, "-m", "routine", "init", str(tmp / "Vault")], env=env, check=True,
                       capture_output=True)
        config = tmp / "config" / "routine.yaml"
        config.write_text(config.read_text() + "\nmemory: {embedding_model: 'ollama:nomic-embed-text'}\n")
        log = open(tmp / "daemon.log", "wb")
        daemon = subprocess.Popen([sys.executable, "-m", "routine", "run"], env=env, stdout=log,
                                  stderr=subprocess.STDOUT)
        sock = tmp / "run" / "control.sock"
        try:
            while not sock.exists():
                time.sleep(0.1)
            ask(sock, {"op": "index"})
            fires(env, 1, args.fire)  # the first loads LiteLLM into the daemon: not counted
            before = fires(env, args.fires, args.fire)
            print(f"without the note: fires took {', '.join(f'{t:.1f}' for t in before)} s")
            note = tmp / "Vault" / "Inbox" / "Links.md"
            started = time.monotonic()
            note.write_text("# Links\n\n" + " ".join(f"[[Target {i}]]" for i in range(args.links)) + "\n")
            while trigger_runs_done(tmp / "state" / "journal.sqlite3") < 1 and time.monotonic() - started < args.wait:
                time.sleep(0.5)
            ask(sock, {"op": "index"})
            print(f"the note of {args.links} links saved: its trigger run and index pass done in "
                  f"{time.monotonic() - started:.1f} s")
            after = fires(env, args.fires, args.fire)
            print(f"with the note: fires took {', '.join(f'{t:.1f}' for t in after)} s")
            if args.restart:
                daemon.terminate()
                daemon.wait(60)
                daemon = subprocess.Popen([sys.executable, "-m", "routine", "run"], env=env, stdout=log,
                                          stderr=subprocess.STDOUT)
                while not sock.exists():
                    time.sleep(0.1)
                started = time.monotonic()
                ask(sock, {"op": "index"})
                fires(env, 1, args.fire)
                print(f"restarted with the note: up, indexed and a first fire in {time.monotonic() - started:.1f} s")
                after = fires(env, args.fires, args.fire)
                print(f"after the restart: fires took {', '.join(f'{t:.1f}' for t in after)} s")
            ratio = (sum(after) / len(after)) / (sum(before) / len(before))
            print(f"a fire with the note takes {ratio:.2f}x its time without it (goal: at most 2x)")
        finally:
            print("daemon log, last lines:\n" + "\n".join((tmp / "daemon.log").read_text().splitlines()[-25:]))
            daemon.terminate()
            daemon.wait(60)
            log.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
