"""A block's steps in order; a failed step stops the block; the queue never overlaps a block."""

from __future__ import annotations

import json
import threading

from routine.daemon.work import Work, WorkQueue
from waits import wait_until

MISTRAL, QWEN = "mistral:7b-instruct-q4_K_M", "qwen2.5:7b-instruct-q4_K_M"


def test_a_failed_step_stops_its_block_and_the_rest_are_skipped_with_the_reason(initialised, ollama):
    home = initialised
    # The strategist's model and its fallback both fail, every retry.
    for model in (MISTRAL, QWEN):
        ollama.script(model, [{"error": (500, "out of memory")}] * 20)
    proc = home.run("fire", "morning-alignment", "--json")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    runs = json.loads(home.run("runs", "list", "--json", check=True).stdout)
    steps = {r["agent"]: r for r in runs if r["kind"] == "step"}
    assert steps["strategist"]["status"] == "failed" and "out of memory" in steps["strategist"]["error"]
    assert steps["planner"]["status"] == "skipped"
    assert steps["planner"]["error"] == "skipped: step 0 (strategist) failed before it"
    block = next(r for r in runs if r["kind"] == "block")
    assert block["status"] == "failed" and block["block"] == "morning-alignment"
    assert not list((home.vault / "Daily").glob("*.md"))  # nothing half-done in the vault
    assert list((home.vault / "Alerts").glob("*strategist failed*.md"))


def test_the_queue_never_runs_one_key_twice_at_once_but_runs_other_keys_beside_it():
    queue = WorkQueue(workers=2)
    queue.start()
    release = threading.Event()
    log, lock = [], threading.Lock()

    def job(name, wait):
        def run():
            with lock:
                log.append(("start", name))
            if wait:
                release.wait(5)
            with lock:
                log.append(("end", name))
        return run

    queue.submit(Work(key="block:morning", label="first", run=job("first", True)))
    queue.submit(Work(key="block:morning", label="second", run=job("second", False)))
    queue.submit(Work(key="block:other", label="other", run=job("other", False)))
    wait_until(
        lambda: ("end", "other") in log, 5, "the other block to end", interval=0.02
    )  # it is not held up: it runs meanwhile
    with lock:
        assert ("start", "other") in log and ("end", "other") in log
        assert ("start", "second") not in log                          # the same block waits its turn
    release.set()
    wait_until(lambda: ("end", "second") in log, 5, "the second run to end", interval=0.02)
    assert log.index(("end", "first")) < log.index(("start", "second"))  # after, never beside
    assert queue.stop(5)
