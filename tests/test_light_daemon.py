"""The daemon leaves the box's memory to the models (issue 47): after a fire through it, its
resident memory is what it was before, within 120 MB; Ollama deployments never load LiteLLM."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_daemon import daemon, only_schedule

DAEMON_MB = 120


def rss_mb(pid: int) -> float:
    line = next(ln for ln in Path(f"/proc/{pid}/status").read_text().splitlines() if ln.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


@pytest.mark.daemon
def test_a_fire_through_the_daemon_leaves_it_small(initialised, ollama):
    home = initialised
    only_schedule(home, "blocks: {}\n")
    with daemon(home, cold=True) as proc:  # cold: a fresh `python -m routine run`, as systemd starts it
        before = rss_mb(proc.pid)
        out = json.loads(home.run("fire", "strategist", "--json", check=True).stdout)
        assert out["status"] == "ok" and any(r["_path"] == "/api/chat" for r in ollama.requests)
        after = rss_mb(proc.pid)
    print(f"daemon RSS before the fire {before:.0f} MB, after {after:.0f} MB")
    assert after <= DAEMON_MB, f"the daemon holds {after:.0f} MB after a fire (was {before:.0f} MB)"
