"""Benchmark: what an idle daemon costs the box — CPU seconds and resident memory (RSS) — and
what a fire costs without the daemon.

Measured three times on a small vault with the shipped MiniLM and the stand-in Ollama: idle
after start-up (the first index pass included), idle after a later index pass (a note saved in
Projects/, followed by the index), and idle after a run (a note saved in Inbox/: the default
schedule's trigger runs the librarian, which loads LiteLLM into the daemon). The search index
lives in a worker process that exits after
`memory.unload_after` idle seconds (default 45), so each phase reports the daemon and its
worker apart: right after the pass, then at the end of an idle window of `--idle` seconds
(default: `--unload-after` + 30, so the worker has had time to leave). CPU is user+system time
over the window (/proc/PID/stat; the worker's until it exited), RSS the resident set
(/proc/PID/status). Then (issue 47): `routine fire strategist` through the daemon (its wall time
and the daemon's RSS before and after, then held for `--stay` seconds, default 60; 600 measures the
10 minutes), a simulated week (every shipped block fired once a day for `--days` days, the
daemon's RSS each day), and, before the daemon starts, a fire without it: its wall time and where
the time went (`python -X importtime`: the imports, by package, against the rest). Every child
process of the daemon is listed with its RSS. The goals: the daemon at most 120 MB after a run
and for 10 minutes after, no growth over the week, the worker gone, no busy polling, a fire
without the daemon within 5 s on a quiet box.

    make bench-idle          # or: .venv/bin/python bench/idle.py [--idle 75] [--unload-after 45] [--notes 12]
                             #     [--stay 600] [--days 7]
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


def children_of(pid: int) -> list[int]:
    out = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            out += [int(c) for c in (task / "children").read_text().split()]
        except OSError:  # the thread ended meanwhile
            continue
    return sorted(set(out))


def described(pid: int) -> str:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        name = next((a.decode() for a in argv if a.startswith(b"routine")), argv[0].decode().rsplit("/", 1)[-1])
        return f"{name} {rss_mb(pid):.0f} MB"
    except OSError:
        return f"{pid} (gone)"


def last_run_ms(journal: Path) -> int | None:
    """The journal's duration of the latest step run (the stand-in model answers at once: routine's own time)."""
    import sqlite3

    db = sqlite3.connect(journal, timeout=10)
    try:
        row = db.execute("SELECT duration_ms FROM runs WHERE kind = 'step' AND duration_ms IS NOT NULL "
                         "ORDER BY started_at DESC LIMIT 1").fetchone()
        return int(row[0]) if row else None
    finally:
        db.close()


def snapshot(label: str, daemon: int) -> None:
    worker = worker_of(daemon)
    alive = f"alive, RSS {rss_mb(worker):.0f} MB" if worker else "not running"
    others = [described(c) for c in children_of(daemon) if c != worker]
    print(f"{label:<30} daemon RSS {rss_mb(daemon):.0f} MB; worker {alive}"
          + (f"; other children: {', '.join(others)}" if others else ""))


def fire(env: dict, *args: str) -> float:
    """`routine fire ARGS` as the person types it; its wall time."""
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "routine", "fire", *args], env=env, check=True, capture_output=True)
    return time.monotonic() - started


def children_cpu() -> float:
    """CPU seconds of this process's waited-for children so far (a measure a crowded box inflates less than
    wall time: what a quiet box's wall time would be, near enough, for a single-threaded command)."""
    import resource

    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def fire_without_daemon(env: dict, tmp: Path) -> None:
    """A fire with no daemon running, timed, then once more under -X importtime: where the time went."""
    cpu = children_cpu()
    took = fire(env, "strategist")
    cpu = children_cpu() - cpu
    trace = tmp / "importtime.txt"
    with open(trace, "w") as err:
        started = time.monotonic()
        subprocess.run([sys.executable, "-X", "importtime", "-m", "routine", "fire", "strategist"], env=env,
                       check=True, stdout=subprocess.DEVNULL, stderr=err)
        traced = time.monotonic() - started
    by_package: dict[str, float] = {}
    total = 0.0
    for line in trace.read_text().splitlines():
        parts = line.split("|")
        if len(parts) != 3 or not parts[1].strip().isdigit():
            continue
        name = parts[2].rstrip()
        if name.startswith("  ") or not name.strip():
            continue  # nested: its time is in its top-level import's
        cumulative = int(parts[1]) / 1e6
        total += cumulative
        top = name.strip().split(".")[0]
        by_package[top] = by_package.get(top, 0.0) + cumulative
    heaviest = sorted(by_package.items(), key=lambda kv: -kv[1])[:6]
    print(f"fire without the daemon: {took:.1f} s wall, {cpu:.1f} CPU-s; under -X importtime {traced:.1f} s, "
          f"of which imports {total:.1f} s ({', '.join(f'{k} {v:.2f}' for k, v in heaviest)}), "
          f"the rest {traced - total:.1f} s")


def blocks_of(env: dict) -> list[str]:
    listed = subprocess.run([sys.executable, "-m", "routine", "schedule", "--json"], env=env, capture_output=True,
                            text=True)
    try:
        return [b["id"] for b in json.loads(listed.stdout)["blocks"] if b.get("enabled", True)]
    except (ValueError, KeyError, TypeError):
        return []


def held(label: str, daemon: int, seconds: float) -> None:
    """The daemon's RSS sampled once a second for ``seconds``: its most and its last."""
    started, most = time.monotonic(), rss_mb(daemon)
    while time.monotonic() - started < seconds:
        time.sleep(1.0)
        most = max(most, rss_mb(daemon))
    print(f"{label:<30} daemon RSS at most {most:.0f} MB over {seconds:.0f}s, {rss_mb(daemon):.0f} MB at the end")


def week(env: dict, daemon: int, days: int) -> None:
    blocks = blocks_of(env)
    first = None
    for day in range(1, days + 1):
        took = [fire(env, block) for block in blocks]
        now = rss_mb(daemon)
        first = first or now
        print(f"simulated day {day}: {len(blocks)} blocks fired in {sum(took):.0f} s; daemon RSS {now:.0f} MB "
              f"({(now - first) / first * 100:+.0f}% on day 1)")
    snapshot(f"after {days} days:", daemon)


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
    ap.add_argument("--unload-after", type=float, default=45.0, help="memory.unload_after to set (default 45)")
    ap.add_argument("--idle", type=float, default=None, help="seconds of each idle window (default unload-after + 30)")
    ap.add_argument("--notes", type=int, default=0, help="notes to add to the vault skeleton (default 0)")
    ap.add_argument("--stay", type=float, default=60.0, help="seconds to watch the daemon's RSS after a fire "
                    "(default 60; 600 for the 10 minutes)")
    ap.add_argument("--days", type=int, default=7, help="simulated days of fired blocks (default 7; 0: none)")
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
        fire_without_daemon(env, tmp)
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
            snapshot("before a fire:", daemon.pid)
            took = fire(env, "strategist")
            print(f"`routine fire strategist` through the daemon: {took:.2f} s wall (the command's own start "
                  f"included), the run {last_run_ms(tmp / 'state' / 'journal.sqlite3')} ms in the journal")
            snapshot("after the fire:", daemon.pid)
            held("after the fire, held:", daemon.pid, args.stay)
            if args.days:
                week(env, daemon.pid, args.days)
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
