"""The daemon's parts start in one order and stop in reverse (routine.daemon.components)."""

from __future__ import annotations

import logging
import socket
import threading

import pytest

from routine.daemon.components import Component, Components
from routine.daemon.work import Work, WorkQueue
from routine.errors import StartFailed


class Listener:
    """A real small part: a unix socket that accepts on its own thread."""

    def __init__(self, path, log: list[str], name: str):
        self.path, self.log, self.name = path, log, name
        self.sock: socket.socket | None = None

    def start(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(str(self.path))  # fails when the folder is not there
        self.sock.listen()
        self.log.append(f"start {self.name}")

    def stop(self) -> None:
        assert self.sock is not None
        self.sock.close()
        self.path.unlink()
        self.log.append(f"stop {self.name}")


def queue_part(log: list[str]) -> tuple[Component, WorkQueue]:
    queue = WorkQueue(workers=1)

    def start() -> None:
        queue.start()
        log.append("start queue")

    def halt() -> None:
        queue.stop(5)
        log.append("halt queue")

    return Component("work queue", start, halt=halt), queue


def test_a_part_that_fails_to_start_stops_those_before_it_in_reverse_and_is_named(tmp_path):
    log: list[str] = []
    queue, work_queue = queue_part(log)
    first, second = Listener(tmp_path / "a.sock", log, "a"), Listener(tmp_path / "b.sock", log, "b")
    broken = Listener(tmp_path / "missing" / "c.sock", log, "c")
    never = Listener(tmp_path / "d.sock", log, "d")
    parts = Components([queue, Component("socket a", first.start, stop=first.stop),
                        Component("socket b", second.start, stop=second.stop),
                        Component("control socket", broken.start, stop=broken.stop),
                        Component("socket d", never.start, stop=never.stop)])

    with pytest.raises(StartFailed) as raised:
        parts.start()

    assert raised.value.component == "control socket"
    assert str(raised.value).startswith("The daemon could not start its control socket: FileNotFoundError")
    assert log == ["start queue", "start a", "start b", "halt queue", "stop b", "stop a"]
    assert not (tmp_path / "a.sock").exists() and not (tmp_path / "b.sock").exists()
    with pytest.raises(RuntimeError):  # the queue really stopped: it takes no more work
        work_queue.submit(Work(key="k", label="late"))


def test_a_stop_halts_every_part_in_reverse_then_stops_every_part_in_reverse():
    log: list[str] = []
    parts = Components([Component(name, lambda n=name: log.append(f"start {n}"),
                                  halt=lambda n=name: log.append(f"halt {n}"),
                                  stop=lambda n=name: log.append(f"stop {n}"))
                        for name in ("journal", "queue", "socket")])
    parts.start()
    assert parts.stop() == []
    assert log == ["start journal", "start queue", "start socket",
                   "halt socket", "halt queue", "halt journal",
                   "stop socket", "stop queue", "stop journal"]
    assert parts.stop() == []  # a second stop has nothing left to do


def test_a_part_whose_stop_fails_is_logged_and_the_others_still_stop(caplog):
    closed = threading.Event()

    def fail() -> None:
        raise OSError("the socket file is gone")

    parts = Components([Component("journal", lambda: None, stop=closed.set),
                        Component("control socket", lambda: None, stop=fail)])
    parts.start()
    with caplog.at_level(logging.ERROR, logger="routine.daemon.components"):
        assert parts.stop() == ["control socket"]
    assert closed.is_set()
    assert "stopping the control socket failed" in caplog.text and "the socket file is gone" in caplog.text
