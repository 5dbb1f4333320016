"""routine.host.supervise: a background loop that raises is logged once, restarted with backoff, and
left down (reported as a health problem) only when it keeps failing."""

from __future__ import annotations

import logging
import threading

import pytest

from routine.host import supervise
from test_daemon import wait_for
from waits import scaled


@pytest.fixture(autouse=True)
def quick(monkeypatch):
    monkeypatch.setattr(supervise, "FIRST_BACKOFF", 0.01)
    monkeypatch.setattr(supervise, "MAX_BACKOFF", 0.05)
    monkeypatch.setattr(supervise, "_registry", {})


def test_a_crashing_loop_is_restarted_and_logged_once_per_error(caplog):
    runs, done = [], threading.Event()

    def loop():
        runs.append(1)
        if len(runs) <= 3:
            raise OSError("the same failure")
        done.set()

    caplog.set_level(logging.INFO, logger="routine.host.supervise")
    sup = supervise.start("flaky", loop)
    assert done.wait(scaled(10))
    sup.thread.join(5)
    assert len(runs) == 4 and sup.restarts == 3 and not sup.gave_up
    failures = [r for r in caplog.records if "thread failed" in r.getMessage()]
    assert len(failures) == 1 and failures[0].exc_info  # once, with its traceback
    assert supervise.problems() == []  # recovered: not a reason for systemd to restart us
    assert "flaky thread failed 3 time(s) recently" in supervise.restarting()[0]


def test_a_loop_that_keeps_failing_is_left_down_and_reported(caplog):
    def loop():
        raise ValueError("broken for good")

    sup = supervise.start("hopeless", loop)
    wait_for(lambda: not sup.alive, 10, "the supervisor to give up")
    assert sup.gave_up and len(sup.crashes) == supervise.GIVE_UP
    assert supervise.problems() == ["the hopeless thread keeps failing and is down: ValueError: broken for good"]


def test_a_stop_during_backoff_ends_the_thread():
    stop = threading.Event()

    def loop():
        stop.set()
        raise RuntimeError("dies while stopping")

    sup = supervise.start("stopping", loop, stop)
    sup.thread.join(5)
    assert not sup.alive and not sup.gave_up and sup.restarts == 0


def test_health_reports_a_thread_left_down(initialised):
    """The watchdog's check (daemon.health.problems) fails while a thread is left down."""
    from routine.daemon import health

    sup = supervise.start("doomed", lambda: (_ for _ in ()).throw(RuntimeError("x")))
    wait_for(lambda: sup.gave_up, 10, "the supervisor to give up")

    class Idle:  # the daemon's parts the check reads, idle
        stopping = threading.Event()
        timers = control = None
        due_lock = threading.Lock()

        class queue:
            @staticmethod
            def problems(limit, stall):
                return []

        class live:
            from routine.config.loader import load_config
            config = load_config(str(initialised.config))

    assert any("doomed thread keeps failing" in p for p in health.problems(Idle))
