"""Benchmark: `routine schedule validate` on schedule files of 1,000 to 8,000 blocks.

Validation must grow linearly with the number of blocks (a person's generated schedule, or a
hostile one, must not stall a hot reload). Prints the time per size and per block.

    make bench-validate        # or: .venv/bin/python bench/validate.py [--sizes 1000 2000 4000]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BLOCK = """\
  b{i}:
    cron: "{m} {h} * * *"
    steps:
      - agent: scribe
        task: "Note {i} for {{{{ today }}}}."
        write: {{note: "Daily/{{{{ today }}}}.md", section: "S{i}"}}
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 2000, 4000, 8000])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "ROUTINE_CONFIG": f"{tmp}/config/routine.yaml", "ROUTINE_STATE_DIR": f"{tmp}/state",
               "ROUTINE_RUNTIME_DIR": f"{tmp}/run", "PYTHONPATH": str(REPO)}
        run = [sys.executable, "-m", "routine"]
        subprocess.run([*run, "init", f"{tmp}/Vault"], env=env, check=True, capture_output=True)
        schedules = Path(tmp, "config", "schedules")
        for f in schedules.glob("*.yaml"):
            f.unlink()
        print(f"{'blocks':>8} {'seconds':>8} {'ms/block':>9}")
        for n in args.sizes:
            text = "blocks:\n" + "".join(BLOCK.format(i=i, m=i % 60, h=(i // 60) % 24) for i in range(n))
            (schedules / "big.yaml").write_text(text)
            start = time.perf_counter()
            proc = subprocess.run([*run, "schedule", "validate"], env=env, capture_output=True, text=True)
            took = time.perf_counter() - start
            print(f"{n:>8} {took:>8.1f} {1000 * took / n:>9.2f}  {proc.stdout.strip() or proc.stderr.strip()[:80]}")


if __name__ == "__main__":
    main()
